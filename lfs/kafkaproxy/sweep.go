package kafkaproxy

import (
	"context"
	"time"

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
// from that offset to its high watermark (lognames.go), has no envelope
// naming it in a committed record or in a transaction still open. A blob
// whose offset is unknown, or below the partition's log start (retention
// took the records), or whose partition could not be read to its end, is
// kept.

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
	res.Deleted, res.Kept = p.dropUnnamed(ctx, blobs, false, "no committed record names it")
	p.metrics.swept.Add(float64(res.Deleted))
	return res, nil
}

// dropUnnamed deletes the blobs no envelope names in a committed record
// or in one of a transaction still open, reading each partition from the
// lowest of its blobs' offsets (abort: for the blobs of a transaction
// just aborted, whose markers may not be in the log yet). It keeps a
// blob whose offset is unknown or below the log start, or not below the
// high watermark the read ended at (the sweep: past it; its record, if
// any, was not read), and those of a partition that cannot be read to
// its end.
func (p *Proxy) dropUnnamed(ctx context.Context, blobs []lfs.KafkaBlob, abort bool, why string) (deleted, kept int) {
	byPartition := map[topicPartition][]lfs.KafkaBlob{}
	for _, b := range blobs {
		if b.LogEnd < 0 {
			p.log.Info("kafka listener: a blob stored when its partition's log end was unknown is kept", "key", b.Key,
				"topic", b.Topic, "partition", b.Partition, "why_judged", why)
			kept++
			continue
		}
		tp := topicPartition{b.Topic, b.Partition}
		byPartition[tp] = append(byPartition[tp], b)
	}
	for tp, blobs := range byPartition {
		from := blobs[0].LogEnd
		var judged *judgedBlobs
		if abort {
			judged = &judgedBlobs{keys: map[string]bool{}, logEnd: from}
		}
		for _, b := range blobs {
			from = min(from, b.LogEnd)
			if judged != nil {
				judged.keys[b.Key] = true
				judged.logEnd = max(judged.logEnd, b.LogEnd)
			}
		}
		named, start, end, err := p.namedKeys(ctx, tp, from, judged)
		if err != nil {
			p.log.Info("kafka listener: a partition could not be read to its end; its blobs wait for the sweep", "topic", tp.topic,
				"partition", tp.partition, "err", err)
			kept += len(blobs)
			continue
		}
		for _, b := range blobs {
			if named[b.Key] || b.LogEnd < start || b.LogEnd > end || (abort && b.LogEnd == end) {
				if !named[b.Key] && b.LogEnd >= start {
					p.log.Info("kafka listener: a blob past the high watermark read is kept", "key", b.Key, "topic", tp.topic,
						"partition", tp.partition, "offset", b.LogEnd, "high_watermark", end, "why_judged", why)
				}
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
