package kafkaproxy

import (
	"encoding/json"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/s3seal/s3seal/lfs"
)

// logBatch is a batch at offset first of producer pid's transaction: a
// control batch when marker is 0 (abort) or 1 (commit), else a batch of
// records whose values are vals.
func logBatch(t *testing.T, first, pid int64, marker byte, vals ...[]byte) []byte {
	t.Helper()
	var raw []byte
	attrs := int16(attrTxn)
	control := marker <= 1
	if control {
		attrs |= attrControl
		vals = [][]byte{nil}
	}
	for i, v := range vals {
		r := kmsg.Record{OffsetDelta: int32(i), Value: v}
		if control {
			r.Key = []byte{0, 0, 0, marker} // version 0, abort or commit
		}
		raw = encodeRecord(raw, &r)
	}
	b := batch{RecordBatch: kmsg.RecordBatch{FirstOffset: first, Magic: 2, Attributes: attrs, LastOffsetDelta: int32(len(vals) - 1),
		ProducerID: pid, NumRecords: int32(len(vals)), PartitionLeaderEpoch: -1}}
	out, err := b.rebuild(raw)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

const (
	abort  = 0
	commit = 1
	data   = 2
)

func envelopeValue(t *testing.T, key string) []byte {
	t.Helper()
	v, err := json.Marshal(lfs.Envelope{Version: 1, Bucket: testBucket, Key: key})
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// A fetch answer may start before the offset asked (a broker answers from
// the start of a batch, or sends more than asked): the marker that ended
// an aborted transaction before that offset still ends it, and the
// producer's next transaction, committed after it, is read.
func TestCommittedReadEndsAbortBeforeFrom(t *testing.T) {
	const pid = 7
	var recs []byte
	recs = append(recs, logBatch(t, 10, pid, data, envelopeValue(t, "aborted"))...)
	recs = append(recs, logBatch(t, 11, pid, abort)...)
	recs = append(recs, logBatch(t, 12, pid, data, envelopeValue(t, "committed"))...)
	recs = append(recs, logBatch(t, 13, pid, commit)...)
	fp := kmsg.NewFetchResponseTopicPartition()
	fp.RecordBatches = recs
	at := kmsg.NewFetchResponseTopicPartitionAbortedTransaction()
	at.ProducerID, at.FirstOffset = pid, 10
	fp.AbortedTransactions = append(fp.AbortedTransactions, at)
	named := map[string]bool{}
	next, err := committedEnvelopes(&fp, 12, 1<<20, func(env lfs.Envelope) { named[env.Key] = true })
	if err != nil {
		t.Fatal(err)
	}
	if next != 14 {
		t.Errorf("next offset %d, want 14", next)
	}
	if !named["committed"] || named["aborted"] {
		t.Fatalf("named %v, want only the committed transaction's envelope", named)
	}
}

// A record whose offset delta puts it before the offset asked (a broker's
// mistake) still names its blob: naming one more keeps one more, hiding
// one would delete a committed record's blob.
func TestCommittedReadNamesRecordsWhateverTheirOffsetDelta(t *testing.T) {
	r := kmsg.Record{OffsetDelta: -5, Value: envelopeValue(t, "named")}
	b := batch{RecordBatch: kmsg.RecordBatch{FirstOffset: 12, Magic: 2, ProducerID: -1, ProducerEpoch: -1, FirstSequence: -1,
		NumRecords: 1, PartitionLeaderEpoch: -1}}
	raw, err := b.rebuild(encodeRecord(nil, &r))
	if err != nil {
		t.Fatal(err)
	}
	fp := kmsg.NewFetchResponseTopicPartition()
	fp.RecordBatches = raw
	named := map[string]bool{}
	if _, err := committedEnvelopes(&fp, 12, 1<<20, func(env lfs.Envelope) { named[env.Key] = true }); err != nil {
		t.Fatal(err)
	}
	if !named["named"] {
		t.Fatalf("named %v: the record's envelope was not read", named)
	}
}
