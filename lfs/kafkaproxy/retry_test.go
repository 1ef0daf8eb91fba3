package kafkaproxy

import (
	"bytes"
	"context"
	"maps"
	"testing"
	"time"

	"github.com/s3seal/s3seal/lfs"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// produceRaw sends one Produce of records to topic/0 straight to s3seal
// and returns the partition's answer.
func produceRaw(t *testing.T, cl *kgo.Client, topic string, records []byte, acks int16) *kmsg.ProduceResponseTopicPartition {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req := kmsg.NewPtrProduceRequest()
	req.Acks, req.TimeoutMillis = acks, 5000
	rt := kmsg.NewProduceRequestTopic()
	rt.Topic = topic
	rp := kmsg.NewProduceRequestTopicPartition()
	rp.Records = records
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	kr, err := cl.Broker(nodeID).Request(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	return &kr.(*kmsg.ProduceResponse).Topics[0].Partitions[0]
}

// initProducer asks for an idempotent producer id.
func initProducer(t *testing.T, cl *kgo.Client) (int64, int16) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	kr, err := cl.Request(ctx, kmsg.NewPtrInitProducerIDRequest())
	if err != nil {
		t.Fatal(err)
	}
	r := kr.(*kmsg.InitProducerIDResponse)
	return r.ProducerID, r.ProducerEpoch
}

func idempotentBatch(t *testing.T, pid int64, epoch int16, seq int32, value []byte) []byte {
	t.Helper()
	b := encodeBatch(t, kgo.CodecNone, pid, kmsg.Record{Value: value, Headers: []kmsg.Header{{Key: "LFS_BLOB"}}})
	bs, err := splitBatches(b)
	if err != nil {
		t.Fatal(err)
	}
	bs[0].ProducerEpoch, bs[0].FirstSequence = epoch, seq
	raw, _ := bs[0].records(batchLimits{decompressed: 1 << 20, headers: 10})
	out, err := bs[0].rebuild(raw)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// A retried batch (same producer id, epoch and sequence) lands on the same
// object and the broker keeps one record; a batch forging those ids with
// other content gets another key and leaves the first blob as it was.
func TestRetriedBatchStoresOnce(t *testing.T) {
	h := newHarness(t, 1, nil)
	cl := h.client()
	if err := cl.ProduceSync(context.Background(), &kgo.Record{Topic: "retry", Value: []byte("warm")}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	pid, epoch := initProducer(t, cl)
	first := randBytes(50_000, 1)
	b := idempotentBatch(t, pid, epoch, 0, first)
	a1 := produceRaw(t, cl, "retry", b, -1)
	a2 := produceRaw(t, cl, "retry", b, -1)
	if a1.ErrorCode != 0 || a2.ErrorCode != 0 || a1.BaseOffset != a2.BaseOffset {
		t.Fatalf("answers %+v / %+v: want one record, acknowledged twice", a1, a2)
	}
	forged := produceRaw(t, cl, "retry", idempotentBatch(t, pid, epoch, 0, randBytes(50_000, 2)), -1)
	if forged.ErrorCode == 0 && forged.BaseOffset != a1.BaseOffset {
		t.Fatalf("a forged duplicate was appended: %+v", forged)
	}
	if n := len(h.blobKeys()); n != 2 {
		t.Fatalf("%d blobs; the retry should have stored nothing, the forged batch one blob of its own", n)
	}
	recs := h.consume("retry", 2)
	if len(recs) != 2 {
		t.Fatalf("%d records", len(recs))
	}
	r := recs[0]
	if string(r.Value) == "warm" {
		r = recs[1]
	}
	env := h.envelope(r)
	if got := h.readBlob(env.Key); !bytes.Equal(got, first) {
		t.Fatal("the record's blob is not the first batch's value")
	}
	// The broker answers a batch with a sequence it already has as a
	// success, whatever its content: the forged blob is left without a
	// record until the sweep finds no envelope naming it.
	res, err := h.proxy.Sweep(context.Background(), -time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if keys := h.blobKeys(); len(keys) != 1 || keys[0] != env.Key {
		t.Fatalf("blobs %v after the sweep (%+v), want only %s", keys, res, env.Key)
	}
}

// acks=0: no answer goes to the client, the record is stored and produced.
func TestAcksZeroProduces(t *testing.T) {
	h := newHarness(t, 1, nil)
	cl := h.client(kgo.RequiredAcks(kgo.NoAck()), kgo.DisableIdempotentWrite(), kgo.DefaultProduceTopic("acks0"))
	v := randBytes(40_000, 3)
	if err := cl.ProduceSync(context.Background(), &kgo.Record{Value: v, Headers: []kgo.RecordHeader{{Key: "LFS_BLOB"}}}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	recs := h.consume("acks0", 1)
	if got := h.readBlob(h.envelope(recs[0]).Key); !bytes.Equal(got, v) {
		t.Fatal("the blob does not read back")
	}
}

// An aborted transaction's blobs are gone when EndTxn answers; a
// committed one's stay.
func TestAbortDeletesBlobsBeforeAnswering(t *testing.T) {
	h := newHarness(t, 1, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cl := h.client(kgo.TransactionalID("abort"), kgo.DefaultProduceTopic("abort"))
	for _, commit := range []bool{false, true} {
		if err := cl.BeginTransaction(); err != nil {
			t.Fatal(err)
		}
		for i := range 3 {
			if err := cl.ProduceSync(ctx, lfsRecord("abort", i)).FirstErr(); err != nil {
				t.Fatal(err)
			}
		}
		if err := cl.EndTransaction(ctx, kgo.TransactionEndTry(commit)); err != nil {
			t.Fatal(err)
		}
		want := 0
		if commit {
			want = 3
		}
		if n := len(h.blobKeys()); n != want {
			t.Fatalf("commit %v: %d blobs after EndTxn, want %d", commit, n, want)
		}
	}
}

// A producer's consecutive transactions share its id and epoch (EndTxn up
// to v4), and one may commit through another replica, its blobs still in
// this one's book: aborting the next through this one deletes only the
// blobs no committed record names.
func TestAbortKeepsBlobsOfACommitSeenElsewhere(t *testing.T) {
	h := newHarness(t, 1, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cl := h.client(kgo.TransactionalID("elsewhere"), kgo.DefaultProduceTopic("elsewhere"))
	transactElsewhere(t, h, cl, "elsewhere", 0, true)
	transactElsewhere(t, h, cl, "elsewhere", 10, false)
	h.onlyCommittedBlobs(ctx, "elsewhere", 2)
}

// A broker answering a partition twice, once OK, once refused, has its
// OK believed: the blob a record may name stays.
func TestProduceAnsweredTwiceKeepsBlob(t *testing.T) {
	h := newHarness(t, 1, nil)
	cl := h.client(kgo.DisableIdempotentWrite(), kgo.RecordRetries(0), kgo.DefaultProduceTopic("twice"))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := cl.ProduceSync(ctx, &kgo.Record{Value: []byte("warm")}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	h.kafka.ControlKey(kmsg.Produce.Int16(), func(kr kmsg.Request) (kmsg.Response, error, bool) {
		req := kr.(*kmsg.ProduceRequest)
		resp := req.ResponseKind().(*kmsg.ProduceResponse)
		for _, rt := range req.Topics {
			t := kmsg.NewProduceResponseTopic()
			t.Topic = rt.Topic
			for _, p := range rt.Partitions {
				ok := kmsg.NewProduceResponseTopicPartition()
				ok.Partition, ok.BaseOffset = p.Partition, 7
				no := kmsg.NewProduceResponseTopicPartition()
				no.Partition, no.ErrorCode = p.Partition, kerr.NotLeaderForPartition.Code
				t.Partitions = append(t.Partitions, ok, no)
			}
			resp.Topics = append(resp.Topics, t)
		}
		return resp, nil, true
	})
	_ = cl.ProduceSync(ctx, &kgo.Record{Value: randBytes(5000, 9), Headers: []kgo.RecordHeader{{Key: "LFS_BLOB"}}})
	if n := len(h.blobKeys()); n != 1 {
		t.Fatalf("%d blobs after an answer saying OK: the blob was deleted", n)
	}
}

// transactElsewhere runs one transaction of two records marked LFS_BLOB
// (keys first and first+1) to topic; a commit is made to look as if it
// went through another replica: this one's book keeps its blobs.
func transactElsewhere(t *testing.T, h *harness, cl *kgo.Client, topic string, first int, commit bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := cl.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	for i := first; i < first+2; i++ {
		if err := cl.ProduceSync(ctx, lfsRecord(topic, i)).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	h.proxy.txns.mu.Lock()
	saved := map[txnKey]map[string]lfs.KafkaBlob{}
	for k, m := range h.proxy.txns.open {
		saved[k] = maps.Clone(m)
	}
	h.proxy.txns.mu.Unlock()
	if err := cl.EndTransaction(ctx, kgo.TransactionEndTry(commit)); err != nil {
		t.Fatal(err)
	}
	if commit {
		h.proxy.txns.mu.Lock()
		h.proxy.txns.open = saved
		h.proxy.txns.mu.Unlock()
	}
}
