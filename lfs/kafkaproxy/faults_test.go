package kafkaproxy

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"log/slog"
	"math"
	"math/rand/v2"
	"net"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/s3seal/s3seal/backend"
	"github.com/s3seal/s3seal/lfs/brokers"
	"github.com/s3seal/s3seal/sealstore"
)

// Fault tests: the connection between s3seal and a broker dies after the
// broker acted on a request and before its answer reaches s3seal. s3seal
// must then neither lose a blob an envelope names, nor keep one no
// envelope names, nor let a retry duplicate a record.

// errCut is what s3seal reads on a connection brokerCuts cut.
var errCut = errors.New("connection cut by the test after the broker answered")

// brokerCuts makes s3seal's broker connections (brokers.Config.Dial) and
// cuts some of them: a request of an API it cuts is written to the broker
// whole, the broker's whole answer is read, then the connection is closed
// and s3seal's read fails. The broker has acted on the request; s3seal
// never learns how.
type brokerCuts struct {
	mu    sync.Mutex
	rng   *rand.Rand
	odds  map[int16]float64 // API key -> chance that a request is cut
	limit map[int16]int     // API key -> cuts at most
	cuts  map[int16]int
	// answers counts the error codes of the cut answers' partitions
	// (Produce) or of the cut answers (EndTxn), by API key.
	answers map[int16]map[int16]int
}

func newBrokerCuts(seed uint64) *brokerCuts {
	return &brokerCuts{rng: rand.New(rand.NewPCG(seed, seed^0x5eed)), odds: map[int16]float64{}, limit: map[int16]int{},
		cuts: map[int16]int{}, answers: map[int16]map[int16]int{}}
}

// cut makes requests of key cut with chance odds, limit times at most.
func (b *brokerCuts) cut(key kmsg.Key, odds float64, limit int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.odds[key.Int16()], b.limit[key.Int16()] = odds, limit
}

// count is how many requests of key were cut.
func (b *brokerCuts) count(key kmsg.Key) int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.cuts[key.Int16()]
}

// done reports whether requests of key were cut limit times.
func (b *brokerCuts) done(key kmsg.Key) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.cuts[key.Int16()] >= b.limit[key.Int16()]
}

// answerCodes describes the error codes the cut answers of key carried.
func (b *brokerCuts) answerCodes(key kmsg.Key) string {
	b.mu.Lock()
	defer b.mu.Unlock()
	var codes []int
	for c := range b.answers[key.Int16()] {
		codes = append(codes, int(c))
	}
	sort.Ints(codes)
	out := ""
	for _, c := range codes {
		name := "OK"
		if err := kerr.ErrorForCode(int16(c)); err != nil {
			name = err.Error()
		}
		out += fmt.Sprintf("%s×%d ", name, b.answers[key.Int16()][int16(c)])
	}
	return out
}

// choose decides whether the request of key about to be written is cut.
func (b *brokerCuts) choose(key int16) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.cuts[key] < b.limit[key] && b.rng.Float64() < b.odds[key]
}

// record counts a cut and what the broker had answered.
func (b *brokerCuts) record(key, version int16, body []byte) {
	codes := answerCodes(key, version, body)
	b.mu.Lock()
	defer b.mu.Unlock()
	b.cuts[key]++
	if b.answers[key] == nil {
		b.answers[key] = map[int16]int{}
	}
	for _, c := range codes {
		b.answers[key][c]++
	}
}

// answerCodes decodes a Produce or EndTxn answer (after its size) and
// returns its error codes.
func answerCodes(key, version int16, body []byte) []int16 {
	req := kmsg.RequestForKey(key)
	req.SetVersion(version)
	resp := req.ResponseKind()
	resp.SetVersion(version)
	body = body[4:] // correlation id
	if resp.IsFlexible() {
		var err error
		if body, err = brokers.SkipTags(body); err != nil {
			return []int16{-1}
		}
	}
	if err := resp.ReadFrom(body); err != nil {
		return []int16{-1}
	}
	var codes []int16
	switch r := resp.(type) {
	case *kmsg.ProduceResponse:
		for _, t := range r.Topics {
			for _, p := range t.Partitions {
				codes = append(codes, p.ErrorCode)
			}
		}
	case *kmsg.EndTxnResponse:
		codes = append(codes, r.ErrorCode)
	}
	return codes
}

func (b *brokerCuts) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	var d net.Dialer
	nc, err := d.DialContext(ctx, network, addr)
	if err != nil {
		return nil, err
	}
	return &cutConn{Conn: nc, b: b}, nil
}

// cutConn is one broker connection brokerCuts may cut. s3seal writes each
// request in one Write and reads its answer before the next.
type cutConn struct {
	net.Conn
	b            *brokerCuts
	cut          bool // the request written is to be cut
	key, version int16
}

func (c *cutConn) Write(p []byte) (int, error) {
	if len(p) >= 8 {
		c.key, c.version = int16(binary.BigEndian.Uint16(p[4:])), int16(binary.BigEndian.Uint16(p[6:]))
		c.cut = c.b.choose(c.key)
	}
	return c.Conn.Write(p)
}

func (c *cutConn) Read(p []byte) (int, error) {
	if !c.cut {
		return c.Conn.Read(p)
	}
	c.cut = false
	var size [4]byte
	if _, err := io.ReadFull(c.Conn, size[:]); err != nil {
		return 0, err
	}
	body := make([]byte, binary.BigEndian.Uint32(size[:]))
	if _, err := io.ReadFull(c.Conn, body); err != nil {
		return 0, err
	}
	c.Conn.Close()
	c.b.record(c.key, c.version, body)
	return 0, errCut
}

// quiet sends the listener's log nowhere: every cut logs.
func quietLog(c *Config) { c.Logger = slog.New(slog.DiscardHandler) }

// keptBlobsLog keeps the listener's lines about blobs it kept, deleted
// or could not judge, and writes them to the test's log if it fails:
// they say why a blob outlived its transaction.
func keptBlobsLog(t *testing.T) func(*Config) {
	var (
		mu    sync.Mutex
		lines []string
	)
	t.Cleanup(func() {
		if t.Failed() {
			mu.Lock()
			defer mu.Unlock()
			for _, l := range lines {
				t.Log(l)
			}
		}
	})
	return func(c *Config) {
		c.Logger = slog.New(slog.NewTextHandler(writerFunc(func(p []byte) (int, error) {
			if l := string(p); strings.Contains(l, "blob") || strings.Contains(l, "sweep") || strings.Contains(l, "transaction") {
				mu.Lock()
				lines = append(lines, strings.TrimSpace(l))
				mu.Unlock()
			}
			return len(p), nil
		}), &slog.HandlerOptions{Level: slog.LevelInfo}))
	}
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

// blobValue is the value produced under a record key: 1 to 4 KiB, derived
// from the key so that it need not be kept.
func blobValue(key string) []byte {
	h := fnv.New64a()
	h.Write([]byte(key))
	seed := h.Sum64()
	return randBytes(1024+int(seed%3073), seed)
}

// blobRecord is a record of topic marked LFS_BLOB, its value blobValue(key).
func blobRecord(topic, key string) *kgo.Record {
	v := blobValue(key)
	sum := sha256.Sum256(v)
	return &kgo.Record{Topic: topic, Key: []byte(key), Value: v, Headers: []kgo.RecordHeader{
		{Key: "LFS_BLOB", Value: []byte(hex.EncodeToString(sum[:]))},
		{Key: "content-type", Value: []byte("application/octet-stream")},
	}}
}

// fastRetries are the client options that make a producer retry at once.
func fastRetries() []kgo.Opt {
	return []kgo.Opt{
		kgo.RetryBackoffFn(func(int) time.Duration { return time.Millisecond }),
		kgo.MetadataMinAge(10 * time.Millisecond),
		kgo.ProducerLinger(time.Millisecond),
	}
}

// endOffsets sums the high watermarks of topic's partitions.
func (h *harness) endOffsets(topic string, partitions int32) int64 {
	h.t.Helper()
	req := kmsg.NewPtrListOffsetsRequest()
	rt := kmsg.NewListOffsetsRequestTopic()
	rt.Topic = topic
	for p := range partitions {
		rp := kmsg.NewListOffsetsRequestTopicPartition()
		rp.Partition, rp.Timestamp = p, -1
		rt.Partitions = append(rt.Partitions, rp)
	}
	req.Topics = []kmsg.ListOffsetsRequestTopic{rt}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var sum int64
	for _, sh := range h.direct().RequestSharded(ctx, req) {
		if sh.Err != nil {
			h.t.Fatal(sh.Err)
		}
		for _, t := range sh.Resp.(*kmsg.ListOffsetsResponse).Topics {
			for _, p := range t.Partitions {
				if err := kerr.ErrorForCode(p.ErrorCode); err != nil {
					h.t.Fatalf("list offsets of %s/%d: %v", topic, p.Partition, err)
				}
				sum += p.Offset
			}
		}
	}
	return sum
}

// consumeKeys reads topic straight from the cluster until every key of
// want was seen, then for a while longer, and returns each record key's
// records.
func (h *harness) consumeKeys(topic string, want map[string]bool, opts ...kgo.Opt) map[string][]*kgo.Record {
	h.t.Helper()
	cl := h.direct(append([]kgo.Opt{kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.FetchMaxWait(100 * time.Millisecond)}, opts...)...)
	deadline := time.Now().Add(30 * time.Second)
	got := map[string][]*kgo.Record{}
	missing := len(want)
	var quiet time.Time
	for quiet.IsZero() || time.Now().Before(quiet) {
		if time.Now().After(deadline) {
			var unseen []string
			for k := range want {
				if len(got[k]) == 0 && len(unseen) < 10 {
					unseen = append(unseen, k)
				}
			}
			h.t.Fatalf("consumed %d records of %s; %d of the %d expected keys not seen: %q", len(got), topic, missing, len(want), unseen)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
		fs := cl.PollFetches(ctx)
		cancel()
		fs.EachError(func(t string, p int32, err error) {
			if !errors.Is(err, context.DeadlineExceeded) {
				h.t.Logf("fetch %s/%d: %v", t, p, err)
			}
		})
		fs.EachRecord(func(r *kgo.Record) {
			k := string(r.Key)
			if want[k] && len(got[k]) == 0 {
				missing--
			}
			got[k] = append(got[k], r)
		})
		if missing == 0 && quiet.IsZero() {
			quiet = time.Now().Add(time.Second) // anything more would be a duplicate
		}
	}
	return got
}

// allBlobKeys lists every blob in the store, page after page (blobKeys
// reads the first page only, 1000 keys), s3seal's own state left out.
func (h *harness) allBlobKeys() []string {
	h.t.Helper()
	in := backend.ListInput{Bucket: testBucket, V2: true}
	var keys []string
	for {
		out, err := h.be.ListObjects(context.Background(), in)
		if err != nil {
			h.t.Fatal(err)
		}
		for _, o := range out.Entries {
			if !strings.HasPrefix(o.Key, ".s3seal/") {
				keys = append(keys, o.Key)
			}
		}
		if !out.IsTruncated {
			return keys
		}
		in.ContinuationToken = out.NextContinuationToken
	}
}

// blobReader reads blobs back through one sealstore.
type blobReader struct {
	h  *harness
	st *sealstore.Store
}

func (r blobReader) read(key string) ([]byte, error) {
	_, rd, err := r.st.Get(context.Background(), testBucket, key, nil)
	if err != nil {
		return nil, err
	}
	defer rd.Close()
	return io.ReadAll(rd)
}

// checkBucket compares the records consumed (each record key's records)
// with the bucket: every record key is there exactly once, every
// envelope's blob reads back as the value produced, and the bucket holds
// nothing else. It returns the duplicates, the orphans and the blobs
// missing.
func (h *harness) checkBucket(got map[string][]*kgo.Record, want map[string]bool) (dups, orphans, missing int) {
	h.t.Helper()
	rd := blobReader{h, h.store()}
	named := map[string]string{} // blob key -> record key
	for k, recs := range got {
		if !want[k] {
			h.t.Errorf("record %q consumed, never acknowledged as produced", k)
		}
		if len(recs) > 1 {
			dups += len(recs) - 1
			h.t.Errorf("record %q consumed %d times (offsets %d and %d ...)", k, len(recs), recs[0].Offset, recs[1].Offset)
		}
		for _, r := range recs {
			env := h.envelope(r)
			if prev, ok := named[env.Key]; ok && prev != k {
				h.t.Errorf("records %q and %q name the same blob %s", prev, k, env.Key)
			}
			named[env.Key] = k
			b, err := rd.read(env.Key)
			switch {
			case err != nil:
				missing++
				h.t.Errorf("record %q names blob %s, which does not read: %v", k, env.Key, err)
			case string(b) != string(blobValue(k)):
				h.t.Errorf("record %q's blob %s reads back %d bytes that differ from the %d produced", k, env.Key, len(b), len(blobValue(k)))
			}
		}
	}
	for k := range want {
		if len(got[k]) == 0 {
			h.t.Errorf("record %q acknowledged, never consumed", k)
		}
	}
	for _, key := range h.allBlobKeys() {
		if _, ok := named[key]; !ok {
			orphans++
			if orphans <= 10 {
				h.t.Errorf("blob %s in the bucket: no record names it (orphan)", key)
			}
		}
	}
	return dups, orphans, missing
}

// Idempotent producers through s3seal while the connection to a broker
// is cut, 1000 times, after the broker wrote a batch and before its answer
// reached s3seal: s3seal answers REQUEST_TIMED_OUT, the producer sends the
// batch again with the same producer id, epoch and sequence, s3seal
// stores its blobs to the keys of the first attempt and the broker keeps
// one copy. Every record is in the topic once, every envelope's blob reads
// back, and the bucket holds no blob no envelope names.
func TestCutAfterWriteIdempotent(t *testing.T) {
	const (
		topic      = "cut-idempotent"
		partitions = 3
		producers  = 6
		wantCuts   = 1000
	)
	start := time.Now()
	cuts := newBrokerCuts(1)
	cuts.cut(kmsg.Produce, 0.5, wantCuts)
	cuts.cut(kmsg.Metadata, 0.2, math.MaxInt) // s3seal's leader look-ups and its clients' Metadata fail too
	h := newHarnessDial(t, 3, cuts.dial, quietLog, kfake.SeedTopics(partitions, topic))

	var mu sync.Mutex
	acked := map[string]bool{}
	var produceErrs []error
	var wg sync.WaitGroup
	for p := range producers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cl := h.client(append(fastRetries(), kgo.MaxBufferedRecords(24))...)
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			for i := 0; !cuts.done(kmsg.Produce) && ctx.Err() == nil; i++ {
				key := fmt.Sprintf("p%d-%06d", p, i)
				cl.Produce(ctx, blobRecord(topic, key), func(r *kgo.Record, err error) {
					mu.Lock()
					defer mu.Unlock()
					if err != nil {
						produceErrs = append(produceErrs, fmt.Errorf("%s: %w", key, err))
						return
					}
					acked[key] = true
				})
			}
			if err := cl.Flush(ctx); err != nil {
				mu.Lock()
				produceErrs = append(produceErrs, fmt.Errorf("flush of producer %d: %w", p, err))
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	produced := time.Since(start)
	if len(produceErrs) > 0 {
		t.Fatalf("%d records failed, first: %v", len(produceErrs), produceErrs[0])
	}
	if n := cuts.count(kmsg.Produce); n < wantCuts {
		t.Fatalf("only %d cuts happened within the time", n)
	}

	got := h.consumeKeys(topic, acked)
	bumped := 0 // records sent again under a new epoch, to other blob keys
	for _, recs := range got {
		for _, r := range recs {
			if r.ProducerEpoch > 0 {
				bumped++
			}
		}
	}
	inLog := h.endOffsets(topic, partitions)
	dups, orphans, missing := h.checkBucket(got, acked)
	if inLog != int64(len(acked)) {
		t.Errorf("the topic holds %d records; %d were produced", inLog, len(acked))
	}
	t.Logf("%d cuts of a Produce after the broker answered (partition answers cut: %s), %d of a Metadata; %d records by %d idempotent producers in %v; "+
		"%d records in the topic, %d of them under a producer epoch past 0; %d duplicates, %d orphans, %d blobs missing; %v in all",
		cuts.count(kmsg.Produce), cuts.answerCodes(kmsg.Produce), cuts.count(kmsg.Metadata), len(acked), producers, produced.Round(time.Millisecond),
		inLog, bumped, dups, orphans, missing, time.Since(start).Round(time.Millisecond))
}

// abortedTxn is an aborted transaction: the records it had acknowledged
// and the bucket right after its EndTransaction returned.
type abortedTxn struct {
	name   string
	keys   []string
	bucket map[string]bool
}

// Transactional producers through s3seal, each transaction committed or
// aborted at random (some aborted with records still buffered), while
// s3seal's broker connections are cut after the broker answered a
// Produce or an EndTxn. Right after an aborted EndTransaction returns,
// no blob of its records is in the bucket; at the end a read_committed
// consumer sees every committed record once and no aborted one, and the
// bucket holds exactly the committed records' blobs.
func TestCutAfterWriteTransactions(t *testing.T) {
	const (
		topic        = "cut-txn"
		partitions   = 3
		producers    = 4
		produceCuts  = 500
		endTxnCuts   = 100
		minAborts    = 200
		maxTxnRecord = 4
	)
	start := time.Now()
	cuts := newBrokerCuts(2)
	cuts.cut(kmsg.Produce, 0.5, produceCuts)
	cuts.cut(kmsg.EndTxn, 0.4, endTxnCuts)
	cuts.cut(kmsg.AddPartitionsToTxn, 0.1, math.MaxInt)
	cuts.cut(kmsg.Metadata, 0.1, math.MaxInt)
	h := newHarnessDial(t, 3, cuts.dial, keptBlobsLog(t), kfake.SeedTopics(partitions, topic))

	var (
		mu          sync.Mutex
		committed   = map[string]bool{}
		aborted     []abortedTxn
		unflushed   int
		slowestEnd  time.Duration
		failures    []error
		abortsSoFar int
		commits     int
	)
	fail := func(err error) {
		mu.Lock()
		defer mu.Unlock()
		failures = append(failures, err)
	}
	more := func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(failures) == 0 && (!cuts.done(kmsg.Produce) || !cuts.done(kmsg.EndTxn) || abortsSoFar < minAborts)
	}
	var wg sync.WaitGroup
	for p := range producers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			id := fmt.Sprintf("txn-%d", p)
			cl := h.client(append(fastRetries(), kgo.TransactionalID(id), kgo.MaxBufferedRecords(24))...)
			rng := rand.New(rand.NewPCG(uint64(p), 7))
			ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
			defer cancel()
			for n := 0; more() && ctx.Err() == nil; n++ {
				name := fmt.Sprintf("%s/%d", id, n)
				if err := cl.BeginTransaction(); err != nil {
					fail(fmt.Errorf("%s: begin: %w", name, err))
					return
				}
				var keys []string
				for i := range 1 + rng.IntN(maxTxnRecord) {
					keys = append(keys, fmt.Sprintf("%s-%d", name, i))
				}
				var (
					kmu   sync.Mutex
					acked []string
				)
				commit := kgo.TransactionEndTry(rng.IntN(2) == 0)
				early := !commit && rng.IntN(4) == 0 // abort with records still buffered
				if early {
					for _, k := range keys {
						cl.Produce(ctx, blobRecord(topic, k), func(_ *kgo.Record, err error) {
							if err == nil {
								kmu.Lock()
								acked = append(acked, k)
								kmu.Unlock()
							}
						})
					}
					if err := cl.AbortBufferedRecords(ctx); err != nil {
						fail(fmt.Errorf("%s: abort buffered records: %w", name, err))
						return
					}
				} else {
					var recs []*kgo.Record
					for _, k := range keys {
						recs = append(recs, blobRecord(topic, k))
					}
					if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
						fail(fmt.Errorf("%s: produce: %w", name, err))
						return
					}
					acked = keys
				}
				began := time.Now()
				if err := cl.EndTransaction(ctx, commit); err != nil {
					fail(fmt.Errorf("%s: end (commit %v): %w", name, commit, err))
					return
				}
				took := time.Since(began)
				var bucket map[string]bool
				if !commit {
					bucket = map[string]bool{}
					for _, k := range h.allBlobKeys() {
						bucket[k] = true
					}
				}
				mu.Lock()
				slowestEnd = max(slowestEnd, took)
				if commit {
					commits++
					for _, k := range keys {
						committed[k] = true
					}
				} else {
					kmu.Lock()
					aborted = append(aborted, abortedTxn{name, acked, bucket})
					kmu.Unlock()
					abortsSoFar++
					if early {
						unflushed++
					}
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	produced := time.Since(start)
	if len(failures) > 0 {
		t.Fatalf("%d transactions failed, first: %v", len(failures), failures[0])
	}
	if !cuts.done(kmsg.Produce) || !cuts.done(kmsg.EndTxn) {
		t.Fatalf("only %d Produce and %d EndTxn cuts happened within the time", cuts.count(kmsg.Produce), cuts.count(kmsg.EndTxn))
	}

	// Every record acknowledged in an aborted transaction is in the log,
	// marked aborted; its envelope names the blob that must have been
	// gone when EndTransaction returned.
	abortedKeys := map[string]bool{}
	for _, a := range aborted {
		for _, k := range a.keys {
			abortedKeys[k] = true
		}
	}
	all := h.consumeKeys(topic, abortedKeys)
	survived := 0
	for _, a := range aborted {
		for _, k := range a.keys {
			for _, r := range all[k] {
				if env := h.envelope(r); a.bucket[env.Key] {
					survived++
					t.Errorf("transaction %s aborted; right after, its record %q's blob %s was still in the bucket", a.name, k, env.Key)
				}
			}
		}
	}

	got := h.consumeKeys(topic, committed, kgo.FetchIsolationLevel(kgo.ReadCommitted()))
	for k := range got {
		if !committed[k] {
			t.Errorf("a read_committed consumer sees record %q, not committed", k)
			delete(got, k)
		}
	}
	dups, orphans, missing := h.checkBucket(got, committed)
	t.Logf("%d transactions committed, %d aborted (%d with records still buffered), %d records committed; "+
		"%d cuts of a Produce after the broker answered (%s), %d of an EndTxn (%s), %d of an AddPartitionsToTxn, %d of a Metadata; slowest EndTransaction %v; "+
		"%d blobs of aborted transactions left after EndTransaction; %d duplicates, %d orphans, %d blobs missing; "+
		"%v producing, %v in all",
		commits, len(aborted), unflushed, len(committed),
		cuts.count(kmsg.Produce), cuts.answerCodes(kmsg.Produce), cuts.count(kmsg.EndTxn), cuts.answerCodes(kmsg.EndTxn),
		cuts.count(kmsg.AddPartitionsToTxn), cuts.count(kmsg.Metadata),
		slowestEnd.Round(time.Millisecond), survived, dups, orphans, missing, produced.Round(time.Millisecond), time.Since(start).Round(time.Millisecond))
}

// produceTxn begins a transaction on cl and produces records keys, marked
// LFS_BLOB, in it.
func produceTxn(t *testing.T, cl *kgo.Client, topic string, keys ...string) {
	t.Helper()
	if err := cl.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	var recs []*kgo.Record
	for _, k := range keys {
		recs = append(recs, blobRecord(topic, k))
	}
	if err := cl.ProduceSync(context.Background(), recs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
}

// The coordinator's answer to an EndTxn is lost three times in a row:
// the producer is answered COORDINATOR_NOT_AVAILABLE, looks the
// coordinator up again and retries on the same connection, and the
// coordinator answers the retry of a transaction it ended as it did the
// first. An abort's blobs are gone when EndTransaction returns; a
// commit's stay and read back. (Left unanswered, kgo waits 10 s for each
// answer; with the connection closed instead, it does not retry a request
// that was the first on its connection.)
func TestEndTxnAnswerLost(t *testing.T) {
	for _, commit := range []kgo.TransactionEndTry{kgo.TryAbort, kgo.TryCommit} {
		t.Run(fmt.Sprintf("commit=%v", commit), func(t *testing.T) {
			const topic = "lost-end"
			cuts := newBrokerCuts(4)
			h := newHarnessDial(t, 3, cuts.dial, quietLog, kfake.SeedTopics(3, topic))
			cl := h.client(append(fastRetries(), kgo.TransactionalID("lost-end"))...)
			produceTxn(t, cl, topic, "a", "b")
			cuts.cut(kmsg.EndTxn, 1, 3)
			began := time.Now()
			if err := cl.EndTransaction(context.Background(), commit); err != nil {
				t.Fatalf("EndTransaction: %v", err)
			}
			took := time.Since(began)
			left := h.allBlobKeys()
			if n := cuts.count(kmsg.EndTxn); n != 3 {
				t.Fatalf("%d EndTxn answers cut, want 3", n)
			}
			if took > 5*time.Second {
				t.Errorf("EndTransaction took %v", took)
			}
			if !commit {
				if len(left) != 0 {
					t.Fatalf("aborted; right after, the bucket holds %v", left)
				}
				return
			}
			want := map[string]bool{"a": true, "b": true}
			got := h.consumeKeys(topic, want, kgo.FetchIsolationLevel(kgo.ReadCommitted()))
			if dups, orphans, missing := h.checkBucket(got, want); dups+orphans+missing != 0 || len(left) != 2 {
				t.Fatalf("committed: %d duplicates, %d orphans, %d missing; %d blobs right after", dups, orphans, missing, len(left))
			}
		})
	}
}

// A transaction ends without an EndTxn through s3seal when its producer
// starts again under the same transactional id: the coordinator aborts it
// on InitProducerID. That happens when the producer crashed (a new one
// takes the id over), and when kgo never got the answer to its EndTxn
// (its next TryAbort reloads the producer id instead of sending EndTxn
// again). The blobs of such an aborted transaction are gone once the
// InitProducerID is answered; those of a transaction whose commit
// happened, though its producer never learnt it, stay.
func TestInitProducerIDEndsLeftTransaction(t *testing.T) {
	const topic = "left-txn"
	t.Run("producer restarted", func(t *testing.T) {
		h := newHarnessDial(t, 3, nil, quietLog, kfake.SeedTopics(3, topic))
		old := h.client(append(fastRetries(), kgo.TransactionalID("left"))...)
		produceTxn(t, old, topic, "a", "b")
		old.Close() // a crash: the transaction is left open
		if n := len(h.allBlobKeys()); n != 2 {
			t.Fatalf("%d blobs before the restart, want 2", n)
		}
		cl := h.client(append(fastRetries(), kgo.TransactionalID("left"))...)
		if _, _, err := cl.ProducerID(context.Background()); err != nil {
			t.Fatal(err)
		}
		if left := h.allBlobKeys(); len(left) != 0 {
			t.Fatalf("the restarted producer's InitProducerID aborted the transaction; the bucket still holds %v", left)
		}
		produceTxn(t, cl, topic, "c")
		if err := cl.EndTransaction(context.Background(), kgo.TryCommit); err != nil {
			t.Fatal(err)
		}
		want := map[string]bool{"c": true}
		got := h.consumeKeys(topic, want, kgo.FetchIsolationLevel(kgo.ReadCommitted()))
		if dups, orphans, missing := h.checkBucket(got, want); dups+orphans+missing != 0 {
			t.Fatalf("%d duplicates, %d orphans, %d missing", dups, orphans, missing)
		}
	})
	for _, commit := range []kgo.TransactionEndTry{kgo.TryAbort, kgo.TryCommit} {
		t.Run(fmt.Sprintf("end unconfirmed, commit=%v", commit), func(t *testing.T) {
			cuts := newBrokerCuts(5)
			h := newHarnessDial(t, 3, cuts.dial, quietLog, kfake.SeedTopics(3, topic))
			// Two EndTxn attempts, both answers lost: kgo gives up.
			cl := h.client(append(fastRetries(), kgo.TransactionalID("unconfirmed"), kgo.RequestRetries(1))...)
			produceTxn(t, cl, topic, "a", "b")
			cuts.cut(kmsg.EndTxn, 1, 2)
			if err := cl.EndTransaction(context.Background(), commit); err == nil {
				t.Fatal("EndTransaction succeeded with every answer lost")
			}
			if n := len(h.allBlobKeys()); n != 2 {
				t.Fatalf("%d blobs after the unconfirmed end, want 2", n)
			}
			// kgo's way out: TryAbort reloads the producer id.
			if err := cl.EndTransaction(context.Background(), kgo.TryAbort); err != nil {
				t.Fatal(err)
			}
			left := h.allBlobKeys()
			if !commit {
				if len(left) != 0 {
					t.Fatalf("aborted through InitProducerID; the bucket still holds %v", left)
				}
				return
			}
			want := map[string]bool{"a": true, "b": true}
			got := h.consumeKeys(topic, want, kgo.FetchIsolationLevel(kgo.ReadCommitted()))
			if dups, orphans, missing := h.checkBucket(got, want); dups+orphans+missing != 0 {
				t.Fatalf("committed: %d duplicates, %d orphans, %d missing", dups, orphans, missing)
			}
		})
	}
}

// An idempotent producer's InitProducerID, which any broker answers, is
// answered by the broker and the answer lost: the producer is answered
// COORDINATOR_NOT_AVAILABLE and asks again, and its records go through.
// (Left unanswered, kgo waits 10 s for the answer; with the connection
// closed instead, it fails the records.)
func TestInitProducerIDAnswerLost(t *testing.T) {
	cuts := newBrokerCuts(6)
	cuts.cut(kmsg.InitProducerID, 1, 2)
	h := newHarnessDial(t, 3, cuts.dial, quietLog, kfake.SeedTopics(3, "lost-init"))
	cl := h.client(fastRetries()...)
	began := time.Now()
	if err := cl.ProduceSync(context.Background(), blobRecord("lost-init", "a")).FirstErr(); err != nil {
		t.Fatal(err)
	}
	if took := time.Since(began); took > 5*time.Second {
		t.Errorf("the produce took %v", took)
	}
	if n := cuts.count(kmsg.InitProducerID); n != 2 {
		t.Fatalf("%d InitProducerID answers cut, want 2", n)
	}
	want := map[string]bool{"a": true}
	if dups, orphans, missing := h.checkBucket(h.consumeKeys("lost-init", want), want); dups+orphans+missing != 0 {
		t.Fatalf("%d duplicates, %d orphans, %d missing", dups, orphans, missing)
	}
}

// A transactional producer aborts while its batch's answer is lost: the
// broker wrote the batch, s3seal could not say so. The answer s3seal
// gives must not let the producer take the batch as unwritten, fail its
// records and send the next transaction's under the same sequence
// numbers: the broker would take those for a retry of the aborted batch,
// answer OK and keep nothing, and a committed record would be lost.
func TestAbortWhileProduceAnswerLost(t *testing.T) {
	const topic = "abort-lost"
	cuts := newBrokerCuts(7)
	h := newHarnessDial(t, 1, cuts.dial, quietLog, kfake.SeedTopics(1, topic))
	cl := h.client(kgo.TransactionalID("abort-lost"), kgo.RetryBackoffFn(func(int) time.Duration { return 200 * time.Millisecond }),
		kgo.ProducerLinger(0))
	ctx := context.Background()
	if err := cl.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	cuts.cut(kmsg.Produce, 1, 1)
	done := make(chan error, 1)
	cl.Produce(ctx, blobRecord(topic, "aborted"), func(_ *kgo.Record, err error) { done <- err })
	for cuts.count(kmsg.Produce) == 0 {
		time.Sleep(time.Millisecond)
	}
	if err := cl.AbortBufferedRecords(ctx); err != nil {
		t.Fatal(err)
	}
	t.Logf("the aborted record's produce: %v", <-done)
	if err := cl.EndTransaction(ctx, kgo.TryAbort); err != nil {
		t.Fatal(err)
	}
	produceTxn(t, cl, topic, "committed")
	if err := cl.EndTransaction(ctx, kgo.TryCommit); err != nil {
		t.Fatal(err)
	}
	want := map[string]bool{"committed": true}
	got := h.consumeKeys(topic, want, kgo.FetchIsolationLevel(kgo.ReadCommitted()))
	if dups, orphans, missing := h.checkBucket(got, want); dups+orphans+missing != 0 {
		t.Fatalf("%d duplicates, %d orphans, %d missing", dups, orphans, missing)
	}
}

// A batch the broker refuses with OUT_OF_ORDER_SEQUENCE_NUMBER was not
// written; kgo then bumps its producer epoch and sends the records again
// under new sequence numbers, which name other blobs. The first
// attempt's blobs are deleted: the bucket holds only the blob the record
// names.
func TestOutOfOrderSequenceLeavesNoBlob(t *testing.T) {
	const topic = "out-of-order"
	h := newHarnessDial(t, 1, nil, quietLog, kfake.SeedTopics(1, topic))
	var refused atomic.Int32
	h.kafka.ControlKey(kmsg.Produce.Int16(), func(kr kmsg.Request) (kmsg.Response, error, bool) {
		req := kr.(*kmsg.ProduceRequest)
		resp := req.ResponseKind().(*kmsg.ProduceResponse)
		for _, t := range req.Topics {
			rt := kmsg.NewProduceResponseTopic()
			rt.Topic = t.Topic
			for _, p := range t.Partitions {
				rp := kmsg.NewProduceResponseTopicPartition()
				rp.Partition, rp.ErrorCode, rp.BaseOffset = p.Partition, kerr.OutOfOrderSequenceNumber.Code, -1
				rt.Partitions = append(rt.Partitions, rp)
			}
			resp.Topics = append(resp.Topics, rt)
		}
		refused.Add(1)
		return resp, nil, true
	})
	cl := h.client(fastRetries()...)
	if err := cl.ProduceSync(context.Background(), blobRecord(topic, "a")).FirstErr(); err != nil {
		t.Fatal(err)
	}
	want := map[string]bool{"a": true}
	got := h.consumeKeys(topic, want)
	if n := refused.Load(); n != 1 || got["a"][0].ProducerEpoch == 0 {
		t.Fatalf("%d produces refused; the record went in under epoch %d: the producer did not start a new epoch", n, got["a"][0].ProducerEpoch)
	}
	if dups, orphans, missing := h.checkBucket(got, want); dups+orphans+missing != 0 {
		t.Fatalf("%d duplicates, %d orphans, %d missing", dups, orphans, missing)
	}
}

// The broker wrote a batch, its answer was lost, and the producer never
// sent it again (closed before its retry): the record is in the topic,
// so its blob stays. (An idempotent retry would have stored it again and
// hidden a blob deleted too early.)
func TestAnswerLostWithoutRetryKeepsBlob(t *testing.T) {
	const topic = "lost-no-retry"
	cuts := newBrokerCuts(8)
	cuts.cut(kmsg.Produce, 1, 1)
	h := newHarnessDial(t, 1, cuts.dial, quietLog, kfake.SeedTopics(1, topic))
	cl, err := kgo.NewClient(kgo.SeedBrokers(h.addr), kgo.RetryBackoffFn(func(int) time.Duration { return time.Minute }))
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	cl.Produce(context.Background(), blobRecord(topic, "a"), func(_ *kgo.Record, err error) { done <- err })
	for cuts.count(kmsg.Produce) == 0 {
		time.Sleep(time.Millisecond)
	}
	cl.Close()
	if err := <-done; err == nil {
		t.Fatal("the record was acknowledged though its answer was cut and never retried")
	}
	want := map[string]bool{"a": true}
	if dups, orphans, missing := h.checkBucket(h.consumeKeys(topic, want), want); dups+orphans+missing != 0 {
		t.Fatalf("%d duplicates, %d orphans, %d missing", dups, orphans, missing)
	}
}
