package kafkaproxy

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/s3seal/s3seal/internal/tick"
	"github.com/s3seal/s3seal/lfs"
)

// The sweep removes the blobs no committed record names once nothing can
// name them any more: an aborted transaction's whose EndTxn s3seal did
// not see (another replica, a crash, the coordinator's timeout), a batch
// whose produce never reached the log and was never retried. Each blob
// keeps the partition's log end offset from before its record was sent
// (lfs.BlobSlot.LogEnd); the record, if ever written, is at or after it.
// So a blob older than the grace is an orphan when the partition, read
// with read_committed from that offset to its high watermark, has no
// envelope naming it. A blob whose offset is unknown, or below the
// partition's log start (retention took the records), or whose partition
// could not be read to its end (an open transaction holding the last
// stable offset below the high watermark, too), is kept.

// DefaultSweepGrace is how old a blob must be before the sweep judges it:
// past Kafka's largest transaction timeout (15 minutes) and a producer's
// delivery timeout, with room for clocks.
const DefaultSweepGrace = time.Hour

// maxSweepRead bounds the bytes read from one partition in one sweep;
// blobs beyond it wait for a later sweep.
const maxSweepRead = 256 << 20

// SweepResult counts what a sweep did.
type SweepResult struct {
	Checked, Deleted, Kept int
}

// Sweep deletes the listener's blobs older than grace that no committed
// record names.
func (p *Proxy) Sweep(ctx context.Context, grace time.Duration) (SweepResult, error) {
	var res SweepResult
	var blobs []lfs.KafkaBlob
	err := p.cfg.Blobs.KafkaBlobs(ctx, time.Now().Add(-grace), func(b lfs.KafkaBlob) {
		res.Checked++
		blobs = append(blobs, b)
	})
	if err != nil {
		return res, err
	}
	res.Deleted, res.Kept = p.dropUnnamed(ctx, blobs, "no committed record names it")
	p.metrics.swept.Add(float64(res.Deleted))
	return res, nil
}

// dropUnnamed deletes the blobs no committed envelope names, reading each
// partition with read_committed from the lowest of its blobs' offsets. It
// keeps a blob whose offset is unknown or below the log start, and those
// of a partition that cannot be read to its end.
func (p *Proxy) dropUnnamed(ctx context.Context, blobs []lfs.KafkaBlob, why string) (deleted, kept int) {
	byPartition := map[topicPartition][]lfs.KafkaBlob{}
	for _, b := range blobs {
		if b.LogEnd < 0 {
			kept++
			continue
		}
		tp := topicPartition{b.Topic, b.Partition}
		byPartition[tp] = append(byPartition[tp], b)
	}
	for tp, blobs := range byPartition {
		from := blobs[0].LogEnd
		for _, b := range blobs {
			from = min(from, b.LogEnd)
		}
		named, start, err := p.committedKeys(ctx, tp, from)
		if err != nil {
			p.log.Info("kafka listener: a partition could not be read to its end; its blobs wait for the sweep", "topic", tp.topic,
				"partition", tp.partition, "err", err)
			kept += len(blobs)
			continue
		}
		for _, b := range blobs {
			if named[b.Key] || b.LogEnd < start {
				kept++
				continue
			}
			p.cfg.Blobs.DeleteBlob(ctx, b.Key, why)
			deleted++
		}
	}
	return deleted, kept
}

// RunSweeper sweeps every interval until ctx ends.
func (p *Proxy) RunSweeper(ctx context.Context, interval, grace time.Duration) {
	tick.Every(ctx, interval, func() {
		res, err := p.Sweep(ctx, grace)
		if err != nil {
			p.log.Warn("kafka listener sweep failed", "err", err)
			return
		}
		if res.Deleted > 0 {
			p.log.Info("kafka listener sweep", "checked", res.Checked, "deleted", res.Deleted, "kept", res.Kept)
		}
	})
}

type topicPartition struct {
	topic     string
	partition int32
}

// committedKeys reads tp with read_committed from offset from to its high
// watermark (waiting briefly for the last stable offset to reach it) and
// returns the blob keys the envelopes there name, and
// the partition's log start offset (blobs whose offset lies below it may
// have lost their record to retention).
func (p *Proxy) committedKeys(ctx context.Context, tp topicPartition, from int64) (map[string]bool, int64, error) {
	named := map[string]bool{}
	bucket := p.cfg.Blobs.Bucket()
	read, empty := 0, 0
	start, end := int64(-1), int64(0)
	for {
		req := kmsg.NewPtrFetchRequest()
		req.SetVersion(p.fetchVersion(ctx))
		req.ReplicaID, req.MaxWaitMillis, req.MinBytes, req.MaxBytes = -1, 0, 0, 4<<20
		req.IsolationLevel, req.SessionEpoch = 1, -1
		rt := kmsg.NewFetchRequestTopic()
		rt.Topic = tp.topic
		rp := kmsg.NewFetchRequestTopicPartition()
		rp.Partition, rp.FetchOffset, rp.PartitionMaxBytes, rp.CurrentLeaderEpoch, rp.LogStartOffset = tp.partition, from, 4<<20, -1, -1
		rt.Partitions = append(rt.Partitions, rp)
		req.Topics = append(req.Topics, rt)
		fp, err := p.fetchOne(ctx, tp, req)
		if errors.Is(err, kerr.OffsetOutOfRange) && start < 0 {
			// Retention took the records at from: read from the log
			// start instead (blobs below it are kept, as their records
			// are gone).
			leader, lerr := p.cfg.Brokers.Leader(ctx, tp.topic, tp.partition)
			if lerr != nil {
				return nil, 0, lerr
			}
			if ls := p.listOffset(ctx, tp.topic, tp.partition, leader, -2); ls > from {
				from = ls
				continue
			}
		}
		if err != nil {
			return nil, 0, err
		}
		if start < 0 {
			start, end = fp.LogStartOffset, fp.HighWatermark
			if start > from {
				from = start // an older offset's records are gone: only newer ones are read
			}
		}
		// The read ends at the high watermark of the first answer, not
		// at the last stable offset: a transaction still open holds the
		// last stable offset below records committed after it began, and
		// those may name the blobs.
		if from >= end {
			return named, start, nil
		}
		if len(fp.RecordBatches) == 0 {
			if empty++; empty > 3 {
				return nil, 0, fmt.Errorf("no records at offset %d below the high watermark %d (last stable offset %d)",
					from, end, fp.LastStableOffset)
			}
			if !sleepCtx(ctx, time.Duration(empty)*50*time.Millisecond) {
				return nil, 0, ctx.Err()
			}
			continue
		}
		read += len(fp.RecordBatches)
		if read > maxSweepRead {
			return nil, 0, errors.New("more to read than one sweep reads")
		}
		next, err := committedEnvelopes(fp, from, p.cfg.MaxRequest, func(env lfs.Envelope) {
			if env.Bucket == bucket {
				named[env.Key] = true
			}
		})
		if err != nil {
			return nil, 0, err
		}
		if next <= from {
			return nil, 0, fmt.Errorf("no progress at offset %d", from)
		}
		from = next
	}
}

// fetchOne sends a Fetch of tp to its leader, asking again (up to three
// times) when the leader cannot be found or reached, or says it no longer
// leads.
func (p *Proxy) fetchOne(ctx context.Context, tp topicPartition, req *kmsg.FetchRequest) (*kmsg.FetchResponseTopicPartition, error) {
	var err error
	for attempt := 0; attempt < 3; attempt++ {
		if attempt > 0 && !sleepCtx(ctx, time.Duration(attempt)*50*time.Millisecond) {
			break
		}
		var leader int32
		if leader, err = p.cfg.Brokers.Leader(ctx, tp.topic, tp.partition); err != nil {
			continue
		}
		var kr kmsg.Response
		if kr, err = p.cfg.Brokers.Send(ctx, leader, req); err != nil {
			p.cfg.Brokers.Forget(tp.topic, tp.partition)
			continue
		}
		var fp *kmsg.FetchResponseTopicPartition
		if fp, err = onePartition(kr.(*kmsg.FetchResponse), tp); err == nil {
			return fp, nil
		}
		p.cfg.Brokers.Forget(tp.topic, tp.partition)
	}
	return nil, err
}

func (p *Proxy) fetchVersion(ctx context.Context) int16 {
	v := int16(4) // read_committed and aborted transactions
	if bv, err := p.cfg.Brokers.Versions(ctx); err == nil {
		if r, ok := bv[kmsg.Fetch.Int16()]; ok {
			v = max(v, min(r[1], 11))
		}
	}
	return v
}

func onePartition(fr *kmsg.FetchResponse, tp topicPartition) (*kmsg.FetchResponseTopicPartition, error) {
	if err := kerr.ErrorForCode(fr.ErrorCode); err != nil {
		return nil, err
	}
	for i := range fr.Topics {
		if fr.Topics[i].Topic != tp.topic {
			continue
		}
		for j := range fr.Topics[i].Partitions {
			fp := &fr.Topics[i].Partitions[j]
			if fp.Partition == tp.partition {
				if err := kerr.ErrorForCode(fp.ErrorCode); err != nil {
					return nil, err
				}
				return fp, nil
			}
		}
	}
	return nil, errors.New("the fetch answer lacks the partition")
}

// committedEnvelopes calls fn with each envelope in the committed records
// of a read_committed fetch answer (the data batches of aborted
// transactions skipped, as a consumer skips them) of the batches that end
// at or after offset from, and returns the offset after the last of them.
// A record is not judged by its own offset: one before from that names a
// blob only keeps it, and offsets a broker got wrong hide no envelope.
func committedEnvelopes(fp *kmsg.FetchResponseTopicPartition, from int64, max int, fn func(lfs.Envelope)) (int64, error) {
	aborted := map[int64]bool{} // producer ids inside an aborted transaction
	pending := fp.AbortedTransactions
	next := from
	raw := fp.RecordBatches
	for len(raw) > 0 {
		batches, rest, err := leadingBatches(raw)
		if err != nil {
			return 0, err
		}
		raw = rest
		for i := range batches {
			b := &batches[i]
			last := b.FirstOffset + int64(b.LastOffsetDelta)
			for j := 0; j < len(pending); j++ {
				if pending[j].FirstOffset <= b.FirstOffset {
					aborted[pending[j].ProducerID] = true
					pending = append(pending[:j], pending[j+1:]...)
					j--
				}
			}
			txn := b.Attributes&attrTxn != 0
			if b.Attributes&attrControl != 0 && txn {
				// The marker ends the transaction, even one before
				// from: the producer's next one is not aborted.
				delete(aborted, b.ProducerID)
			}
			if last < from {
				continue
			}
			if last >= next {
				next = last + 1
			}
			if b.Attributes&attrControl != 0 {
				continue
			}
			if txn && aborted[b.ProducerID] {
				continue
			}
			recs, err := b.records(batchLimits{decompressed: max, headers: maxHeaders})
			if err != nil {
				return 0, err
			}
			err = eachRecord(recs, b.NumRecords, batchLimits{decompressed: max, headers: maxHeaders}, func(r *kmsg.Record, _ []byte) error {
				var env lfs.Envelope
				if bytes.HasPrefix(r.Value, []byte("{")) && bytes.Contains(r.Value, []byte(`"kfs_lfs"`)) &&
					json.Unmarshal(r.Value, &env) == nil && env.Version == 1 && env.Key != "" {
					fn(env)
				}
				return nil
			})
			if err != nil {
				return 0, err
			}
		}
	}
	return next, nil
}

// leadingBatches splits the whole batches at the start of a fetch answer's
// records; a broker may end the answer with part of a batch, which is
// left (read again from its offset next time).
func leadingBatches(raw []byte) ([]batch, []byte, error) {
	n := 0
	for n+batchHeaderLen <= len(raw) {
		length := int(int32(uint32(raw[n+8])<<24 | uint32(raw[n+9])<<16 | uint32(raw[n+10])<<8 | uint32(raw[n+11])))
		if length < batchHeaderLen-12 || n+12+length > len(raw) {
			break
		}
		n += 12 + length
	}
	if n == 0 {
		return nil, nil, nil
	}
	bs, err := splitBatches(raw[:n])
	return bs, nil, err
}
