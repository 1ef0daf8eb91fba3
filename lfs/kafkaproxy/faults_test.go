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
	"math/rand/v2"
	"net"
	"sort"
	"strings"
	"sync"
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
			h.t.Fatalf("consumed %d records of %s; %d of the %d expected keys not seen", len(got), topic, missing, len(want))
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
// reached s3seal: s3seal answers NETWORK_EXCEPTION, the producer sends the
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
	inLog := h.endOffsets(topic, partitions)
	dups, orphans, missing := h.checkBucket(got, acked)
	if inLog != int64(len(acked)) {
		t.Errorf("the topic holds %d records; %d were produced", inLog, len(acked))
	}
	t.Logf("%d cuts of a Produce after the broker answered (partition answers cut: %s); %d records by %d idempotent producers in %v; "+
		"%d records in the topic; %d duplicates, %d orphans, %d blobs missing; %v in all",
		cuts.count(kmsg.Produce), cuts.answerCodes(kmsg.Produce), len(acked), producers, produced.Round(time.Millisecond),
		inLog, dups, orphans, missing, time.Since(start).Round(time.Millisecond))
}
