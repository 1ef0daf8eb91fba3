package kafkaproxy

import (
	"sync"

	"github.com/s3seal/s3seal/lfs"
)

// txnBook records, per transaction (transactional id as the brokers see
// it, producer id, epoch), the blobs stored for its records, so that an
// abort deletes them: an EndTxn with abort, or an InitProducerID of the
// same transactional id, before which s3seal aborts the transaction
// itself. It lives in memory: blobs of a transaction that ends through
// another replica, times out at the coordinator, or outlives a crash are
// left to the sweep (sweep.go).
type txnBook struct {
	mu    sync.Mutex
	open  map[txnKey]map[string]lfs.KafkaBlob
	total int
}

type txnKey struct {
	id    string
	pid   int64
	epoch int16
}

// maxTxnBlobs bounds the blob keys recorded at once.
const maxTxnBlobs = 100000

func newTxnBook() *txnBook { return &txnBook{open: map[txnKey]map[string]lfs.KafkaBlob{}} }

// add records a blob of transaction k; false when the book is full.
func (b *txnBook) add(k txnKey, blob lfs.KafkaBlob) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	m := b.open[k]
	if m == nil {
		m = map[string]lfs.KafkaBlob{}
		b.open[k] = m
	}
	if old, ok := m[blob.Key]; ok {
		// A retry: the first attempt's offset is the lower bound.
		blob.LogEnd = min(blob.LogEnd, old.LogEnd)
		if old.LogEnd < 0 {
			blob.LogEnd = old.LogEnd
		}
		m[blob.Key] = blob
		return true
	}
	if b.total >= maxTxnBlobs {
		return false
	}
	m[blob.Key] = blob
	b.total++
	return true
}

// end removes transaction k and returns its blobs.
func (b *txnBook) end(k txnKey) []lfs.KafkaBlob {
	b.mu.Lock()
	defer b.mu.Unlock()
	m := b.open[k]
	delete(b.open, k)
	b.total -= len(m)
	out := make([]lfs.KafkaBlob, 0, len(m))
	for _, blob := range m {
		out = append(out, blob)
	}
	return out
}

// openFor returns the transactions of transactional id id that have blobs
// recorded.
func (b *txnBook) openFor(id string) []txnKey {
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []txnKey
	for k := range b.open {
		if k.id == id {
			out = append(out, k)
		}
	}
	return out
}
