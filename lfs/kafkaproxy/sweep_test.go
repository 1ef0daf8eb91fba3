package kafkaproxy

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/s3seal/s3seal/lfs"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// lfsRecord is a record marked LFS_BLOB.
func lfsRecord(topic string, i int) *kgo.Record {
	return &kgo.Record{Topic: topic, Key: []byte(fmt.Sprint(i)), Value: randBytes(2000+i, uint64(i)),
		Headers: []kgo.RecordHeader{{Key: "LFS_BLOB"}}}
}

// A transaction aborted where s3seal did not see it end (another replica,
// a crash) leaves its blobs; the sweep deletes them and keeps every blob a
// committed record names, and the blobs of records produced outside
// transactions.
func TestSweepDeletesBlobsOfAbortedTransactions(t *testing.T) {
	h := newHarness(t, 3, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cl := h.client(kgo.TransactionalID("tx-sweep"), kgo.DefaultProduceTopic("txsweep"))
	plain := h.client(kgo.DefaultProduceTopic("txsweep"))
	if err := plain.ProduceSync(ctx, lfsRecord("txsweep", 100)).FirstErr(); err != nil {
		t.Fatal(err)
	}
	run := func(first int, commit bool) {
		t.Helper()
		if err := cl.BeginTransaction(); err != nil {
			t.Fatal(err)
		}
		for i := first; i < first+3; i++ {
			if err := cl.ProduceSync(ctx, lfsRecord("txsweep", i)).FirstErr(); err != nil {
				t.Fatal(err)
			}
		}
		if !commit {
			// The abort goes through a replica that did not store the
			// blobs: nothing deletes them now.
			h.proxy.txns = newTxnBook()
		}
		if err := cl.EndTransaction(ctx, kgo.TransactionEndTry(commit)); err != nil {
			t.Fatal(err)
		}
	}
	run(0, true)
	run(10, false)
	run(20, true)
	if n := len(h.blobKeys()); n != 10 {
		t.Fatalf("%d blobs before the sweep, want 10", n)
	}
	// Not yet old enough: nothing judged.
	if res, err := h.proxy.Sweep(ctx, time.Hour); err != nil || res.Checked != 0 {
		t.Fatalf("sweep within the grace: %+v %v", res, err)
	}
	res, err := h.proxy.Sweep(ctx, -time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if res.Deleted != 3 || res.Checked != 10 {
		t.Fatalf("sweep: %+v, want 3 of 10 deleted", res)
	}
	recs := h.consume("txsweep", 7, kgo.FetchIsolationLevel(kgo.ReadCommitted()))
	var named []string
	for _, r := range recs {
		named = append(named, h.envelope(r).Key)
	}
	left := h.blobKeys()
	slices.Sort(named)
	slices.Sort(left)
	if !slices.Equal(named, left) {
		t.Fatalf("blobs left %v, committed envelopes name %v", left, named)
	}
	// A second sweep finds nothing more.
	if res, err := h.proxy.Sweep(ctx, -time.Minute); err != nil || res.Deleted != 0 {
		t.Fatalf("second sweep: %+v %v", res, err)
	}
}

// Retention took a partition's first records: the sweep reads from the log
// start instead, keeps the blobs whose records may be gone, and still
// deletes an orphan stored after the log start.
func TestSweepReadsFromTheLogStartAfterRetention(t *testing.T) {
	h := newHarness(t, 1, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cl := h.client(kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.DefaultProduceTopic("retained"))
	for i := range 3 {
		r := lfsRecord("retained", i)
		r.Partition = 0
		if err := cl.ProduceSync(ctx, r).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	req := kmsg.NewPtrDeleteRecordsRequest()
	rt := kmsg.NewDeleteRecordsRequestTopic()
	rt.Topic = "retained"
	rp := kmsg.NewDeleteRecordsRequestTopicPartition()
	rp.Partition, rp.Offset = 0, 2
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	kr, err := h.direct().Request(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	if code := kr.(*kmsg.DeleteRecordsResponse).Topics[0].Partitions[0].ErrorCode; code != 0 {
		t.Fatalf("delete records: %v", kerr.ErrorForCode(code))
	}
	orphan, err := h.blobs.StoreRecordBlob(ctx, lfs.BlobSlot{Topic: "retained", Partition: 0, ProducerID: -1, LogEnd: 3},
		randBytes(3000, 77), []lfs.RecordHeader{{Key: "LFS_BLOB"}})
	if err != nil {
		t.Fatal(err)
	}
	res, err := h.proxy.Sweep(ctx, -time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if res.Deleted != 1 || res.Checked != 4 {
		t.Fatalf("sweep %+v, want the orphan alone deleted of 4", res)
	}
	for _, k := range h.blobKeys() {
		if k == orphan.Key {
			t.Fatal("the orphan stored after the log start was kept")
		}
	}
}

// A transaction still open on a partition holds its last stable offset
// back: the sweep keeps that transaction's blobs (it may still commit)
// and still judges the blobs after them, deleting those of another
// producer's transaction aborted where s3seal did not see it, instead of
// keeping every blob of the partition until the open one ends.
func TestSweepPastAnOpenTransaction(t *testing.T) {
	h := newHarness(t, 1, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	const topic = "sweep-open"
	onto0 := func(i int) *kgo.Record {
		r := lfsRecord(topic, i)
		r.Partition = 0
		return r
	}
	manual := kgo.RecordPartitioner(kgo.ManualPartitioner())
	open := h.client(kgo.TransactionalID("sweep-open"), manual)
	aborted := h.client(kgo.TransactionalID("sweep-aborted"), manual)
	for _, cl := range []*kgo.Client{open, aborted} {
		if err := cl.BeginTransaction(); err != nil {
			t.Fatal(err)
		}
	}
	if err := open.ProduceSync(ctx, onto0(1)).FirstErr(); err != nil {
		t.Fatal(err)
	}
	if err := aborted.ProduceSync(ctx, onto0(2), onto0(3)).FirstErr(); err != nil {
		t.Fatal(err)
	}
	h.proxy.txns = newTxnBook() // the abort goes through another replica
	if err := aborted.EndTransaction(ctx, kgo.TryAbort); err != nil {
		t.Fatal(err)
	}
	if n := len(h.blobKeys()); n != 3 {
		t.Fatalf("%d blobs before the sweep, want 3", n)
	}
	res, err := h.proxy.Sweep(ctx, -time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if res.Checked != 3 || res.Deleted != 2 {
		t.Fatalf("sweep %+v, want the aborted transaction's 2 of 3 deleted", res)
	}
	if err := open.EndTransaction(ctx, kgo.TryCommit); err != nil {
		t.Fatal(err)
	}
	recs := h.consume(topic, 1, kgo.FetchIsolationLevel(kgo.ReadCommitted()))
	if got := h.readBlob(h.envelope(recs[0]).Key); !bytes.Equal(got, onto0(1).Value) {
		t.Fatal("the blob of the transaction open during the sweep does not read back after its commit")
	}
}
