package kafkaproxy

import (
	"context"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// Another producer's transaction, open on the same partitions, holds the
// last stable offset below a transaction that committed through another
// replica. Committed records past the last stable offset are not yet
// readable with read_committed, but they are committed: aborting the same
// producer's next transaction through this replica must keep the blobs
// they name, and delete its own when EndTxn answers, not leave them to
// the sweep while the other transaction stays open.
func TestAbortKeepsBlobsOfACommitPastTheStableOffset(t *testing.T) {
	h := newHarness(t, 1, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	const topic = "stable"
	cl := h.client(kgo.TransactionalID("stable-a"), kgo.DefaultProduceTopic(topic))
	// Create the topic, then open another producer's transaction on each
	// of its partitions, straight on the cluster.
	if err := cl.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	if err := cl.ProduceSync(ctx, &kgo.Record{Value: []byte("warm")}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	if err := cl.EndTransaction(ctx, kgo.TryCommit); err != nil {
		t.Fatal(err)
	}
	other := h.direct(kgo.TransactionalID("stable-other"), kgo.DefaultProduceTopic(topic),
		kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err := other.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	for p := int32(0); p < 3; p++ {
		if err := other.ProduceSync(ctx, &kgo.Record{Partition: p, Value: []byte("open")}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	transactElsewhere(t, h, cl, topic, 0, true)
	transactElsewhere(t, h, cl, topic, 10, false)
	if n := len(h.blobKeys()); n != 2 {
		t.Fatalf("%d blobs right after the abort, another transaction still open; want the committed transaction's 2", n)
	}
	if err := other.EndTransaction(ctx, kgo.TryAbort); err != nil {
		t.Fatal(err)
	}
	recs := h.consume(topic, 3, kgo.FetchIsolationLevel(kgo.ReadCommitted()))
	named := 0
	for _, r := range recs {
		if string(r.Value) == "warm" {
			continue
		}
		named++
		env := h.envelope(r)
		if _, err := h.store().Head(ctx, testBucket, env.Key); err != nil {
			t.Fatalf("the blob %s of a committed record was deleted: %v", env.Key, err)
		}
	}
	if named != 2 {
		t.Fatalf("%d committed records with blobs, want 2", named)
	}
}
