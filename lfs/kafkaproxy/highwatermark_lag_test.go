package kafkaproxy

import (
	"context"
	"encoding/binary"
	"maps"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/s3seal/s3seal/lfs"
)

// rawLog reads partition tp as the judgement of blobs does (one
// read_uncommitted fetch from offset 0) and returns the batches' bytes
// and the high watermark.
func rawLog(t *testing.T, h *harness, tp topicPartition) ([]byte, int64) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req := kmsg.NewPtrFetchRequest()
	req.SetVersion(h.proxy.fetchVersion(ctx))
	req.ReplicaID, req.MaxBytes, req.SessionEpoch = -1, 4<<20, -1
	rt := kmsg.NewFetchRequestTopic()
	rt.Topic = tp.topic
	rp := kmsg.NewFetchRequestTopicPartition()
	rp.Partition, rp.PartitionMaxBytes, rp.CurrentLeaderEpoch, rp.LogStartOffset = tp.partition, 4<<20, -1, -1
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	fp, err := h.proxy.fetchOne(ctx, tp, req)
	if err != nil {
		t.Fatal(err)
	}
	return fp.RecordBatches, fp.HighWatermark
}

// batchesBelow is the whole batches of raw that start below offset end.
func batchesBelow(raw []byte, end int64) []byte {
	n := 0
	for n+12 <= len(raw) {
		first := int64(binary.BigEndian.Uint64(raw[n:]))
		size := 12 + int(binary.BigEndian.Uint32(raw[n+8:]))
		if first >= end || n+size > len(raw) {
			break
		}
		n += size
	}
	return raw[:n]
}

// staleLeader answers the next answers fetches of tp made to judge blobs
// (read_uncommitted, no session) as a leader just elected does before
// its followers fetched from it: with a high watermark hw that lags the
// old leader's, and only the records below it. Kafka advances a
// follower's high watermark one fetch after the leader's, so a new
// leader's may lag records the old leader acknowledged, markers
// included. Later fetches are answered by the cluster.
func staleLeader(h *harness, tp topicPartition, raw []byte, hw int64, answers int32) {
	var left atomic.Int32
	left.Store(answers)
	h.kafka.ControlKey(kmsg.Fetch.Int16(), func(kr kmsg.Request) (kmsg.Response, error, bool) {
		h.kafka.KeepControl()
		req := kr.(*kmsg.FetchRequest)
		if req.IsolationLevel != 0 || req.SessionEpoch != -1 || len(req.Topics) != 1 ||
			req.Topics[0].Topic != tp.topic || len(req.Topics[0].Partitions) != 1 || req.Topics[0].Partitions[0].Partition != tp.partition {
			return nil, nil, false
		}
		if left.Add(-1) < 0 {
			return nil, nil, false
		}
		resp := req.ResponseKind().(*kmsg.FetchResponse)
		rt := kmsg.NewFetchResponseTopic()
		rt.Topic = tp.topic
		rp := kmsg.NewFetchResponseTopicPartition()
		rp.Partition, rp.HighWatermark, rp.LastStableOffset, rp.LogStartOffset = tp.partition, hw, hw, 0
		if req.Topics[0].Partitions[0].FetchOffset < hw {
			rp.RecordBatches = batchesBelow(raw, hw)
		}
		rt.Partitions = append(rt.Partitions, rp)
		resp.Topics = append(resp.Topics, rt)
		return resp, nil, true
	})
}

// A transaction committed through another replica; its producer's next
// transaction is aborted through this one, which holds the blobs of both
// in its book. The partition's leader has just changed, and the new
// leader's high watermark still lags below the commit marker, which the
// old leader had written and acknowledged (so the coordinator completed
// the commit and let the next transaction begin): read up to that high
// watermark, the committed records look like a transaction with no
// marker yet, or (the high watermark lagging below them all) are not
// read at all. The abort must not delete the blobs those committed
// records name.
func TestAbortKeepsBlobsOfACommitPastALaggingHighWatermark(t *testing.T) {
	t.Run("below the commit marker", func(t *testing.T) {
		abortBehindLaggingLeader(t, func(first, marker int64) int64 { return marker })
	})
	t.Run("at the committed records", func(t *testing.T) {
		abortBehindLaggingLeader(t, func(first, marker int64) int64 { return first })
	})
}

// abortBehindLaggingLeader commits a transaction through "another
// replica", aborts the producer's next one with partition 0's leader
// answering the abort's read with the high watermark lag(first committed
// offset, commit marker's offset), and checks the committed records'
// blobs are kept.
func abortBehindLaggingLeader(t *testing.T, lag func(first, marker int64) int64) {
	h := newHarness(t, 1, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	const topic = "stale-hw"
	onto := func(p int32, i int) *kgo.Record {
		r := lfsRecord(topic, i)
		r.Partition = p
		return r
	}
	cl := h.client(kgo.TransactionalID("stale-hw"), kgo.RecordPartitioner(kgo.ManualPartitioner()))

	// The first transaction writes two records to partition 0 through
	// this replica and commits through another (the book keeps them).
	if err := cl.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	if err := cl.ProduceSync(ctx, onto(0, 1), onto(0, 2)).FirstErr(); err != nil {
		t.Fatal(err)
	}
	h.proxy.txns.mu.Lock()
	saved := map[txnKey]map[string]lfs.KafkaBlob{}
	for k, m := range h.proxy.txns.open {
		saved[k] = maps.Clone(m)
	}
	h.proxy.txns.mu.Unlock()
	if err := cl.EndTransaction(ctx, kgo.TryCommit); err != nil {
		t.Fatal(err)
	}
	h.proxy.txns.mu.Lock()
	h.proxy.txns.open = saved
	h.proxy.txns.mu.Unlock()

	tp := topicPartition{topic, 0}
	raw, hw := rawLog(t, h, tp)
	marker := hw - 1 // the commit marker is the partition's last batch
	first := int64(binary.BigEndian.Uint64(raw))

	// The next transaction writes to partition 1, and is aborted.
	if err := cl.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	if err := cl.ProduceSync(ctx, onto(1, 3)).FirstErr(); err != nil {
		t.Fatal(err)
	}
	staleLeader(h, tp, raw, lag(first, marker), 1)
	if err := cl.EndTransaction(ctx, kgo.TryAbort); err != nil {
		t.Fatal(err)
	}

	h.onlyCommittedBlobs(ctx, topic, 2)
}

// A leader answering the sweep's read with a high watermark below the
// offset asked (-1 here: an odd broker; a lagging new leader's, or a log
// truncated after an unclean election, lie below some blobs' offsets)
// shows none of the records at or after it: the blobs of those records
// are kept, not judged unnamed.
func TestSweepKeepsBlobsPastTheHighWatermark(t *testing.T) {
	h := newHarness(t, 1, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	const topic = "sweep-hw"
	r := lfsRecord(topic, 1)
	r.Partition = 0
	cl := h.client(kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err := cl.ProduceSync(ctx, r).FirstErr(); err != nil {
		t.Fatal(err)
	}
	staleLeader(h, topicPartition{topic, 0}, nil, -1, 1)
	res, err := h.proxy.Sweep(ctx, -time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if res.Checked != 1 || res.Deleted != 0 {
		t.Fatalf("sweep %+v: the blob of a committed record past the high watermark was deleted", res)
	}
	recs := h.consume(topic, 1)
	h.readBlob(h.envelope(recs[0]).Key)
}
