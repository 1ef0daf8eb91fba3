package kafkaproxy

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/s3seal/s3seal/lfs"
)

// Which blobs the log names. A blob may be deleted once no committed
// record names it and none can any more. The log is read as it is up to
// its high watermark (read_uncommitted), transactions' outcomes taken
// from their markers, rather than with read_committed: a read_committed
// fetch stops at the last stable offset, which any transaction still
// open on the partition holds back, for up to the transaction timeout,
// so an abort could not tell its own blobs from committed ones until
// every other producer's transaction on the partition had ended.

// namedKeys reads tp from offset from to its high watermark and returns
// the blob keys that the envelopes there name, in committed records or in
// those of a transaction with no marker yet (it may still commit), the
// partition's log start offset (blobs whose offset lies below it may have
// lost their record to retention), and the high watermark the read ended
// at (records at or past it were not read).
//
// An abort (judged set) reads on, for a short while, past the first
// answer's high watermark while it has not passed every judged blob's
// offset or a judged key is still in a transaction with no marker: the
// aborted transaction's markers may not be written yet (Kafka writes them
// after answering EndTxn), and a leader just elected answers with a high
// watermark that lags the one its predecessor acknowledged records and
// markers below, for one fetch of its followers, so a transaction that
// committed through another replica before this one began may show its
// records without their marker, or not at all. Once the read has passed
// them, only the aborted transaction's own records can be left without a
// marker: a producer's next transaction cannot write before the previous
// one's markers are in the log.
func (p *Proxy) namedKeys(ctx context.Context, tp topicPartition, from int64, judged *judgedBlobs) (map[string]bool, int64, int64, error) {
	names := newLogNames(p.cfg.Blobs.Bucket(), from)
	read, empty, waits := 0, 0, 0
	start, end := int64(-1), int64(0)
	reach := false // take the next answer's high watermark as the end
	for {
		req := kmsg.NewPtrFetchRequest()
		req.SetVersion(p.fetchVersion(ctx))
		req.ReplicaID, req.MaxWaitMillis, req.MinBytes, req.MaxBytes = -1, 0, 0, 4<<20
		req.IsolationLevel, req.SessionEpoch = 0, -1
		rt := kmsg.NewFetchRequestTopic()
		rt.Topic = tp.topic
		rp := kmsg.NewFetchRequestTopicPartition()
		rp.Partition, rp.FetchOffset, rp.PartitionMaxBytes, rp.CurrentLeaderEpoch, rp.LogStartOffset = tp.partition, names.from, 4<<20, -1, -1
		rt.Partitions = append(rt.Partitions, rp)
		req.Topics = append(req.Topics, rt)
		fp, err := p.fetchOne(ctx, tp, req)
		if errors.Is(err, kerr.OffsetOutOfRange) && start < 0 {
			// Retention took the records at from: read from the log
			// start instead (blobs below it are kept, as their records
			// are gone).
			leader, lerr := p.cfg.Brokers.Leader(ctx, tp.topic, tp.partition)
			if lerr != nil {
				return nil, 0, 0, lerr
			}
			if ls := p.listOffset(ctx, tp.topic, tp.partition, leader, -2); ls > names.from {
				names.from = ls
				continue
			}
		}
		if err != nil {
			return nil, 0, 0, err
		}
		if start < 0 {
			start, end = fp.LogStartOffset, fp.HighWatermark
			if start > names.from {
				names.from = start // an older offset's records are gone: only newer ones are read
			}
		} else if reach {
			end = max(end, fp.HighWatermark)
		}
		reach = false
		// The read ends at the high watermark of the first answer:
		// records written after it belong to transactions that began
		// after the judgement started, or to the one just aborted.
		if names.from >= end {
			if judged != nil && (end <= judged.logEnd || names.holdsOpen(judged.keys)) && waits < len(judgeWaits) {
				if !sleepCtx(ctx, judgeWaits[waits]) {
					return nil, 0, 0, ctx.Err()
				}
				waits++
				reach = true
				continue
			}
			return names.result(), start, end, nil
		}
		if len(fp.RecordBatches) == 0 {
			if empty++; empty > 3 {
				return nil, 0, 0, fmt.Errorf("no records at offset %d below the high watermark %d", names.from, end)
			}
			if !sleepCtx(ctx, time.Duration(empty)*50*time.Millisecond) {
				return nil, 0, 0, ctx.Err()
			}
			continue
		}
		read += len(fp.RecordBatches)
		if read > maxSweepRead {
			return nil, 0, 0, errors.New("more to read than one sweep reads")
		}
		before := names.from
		if err := names.add(fp.RecordBatches, p.cfg.MaxRequest); err != nil {
			return nil, 0, 0, err
		}
		if names.from <= before {
			return nil, 0, 0, fmt.Errorf("no progress at offset %d", before)
		}
	}
}

// judgedBlobs is what an abort judges on one partition: its blobs' keys,
// and the highest of their offsets.
type judgedBlobs struct {
	keys   map[string]bool
	logEnd int64
}

// judgeWaits are the pauses an abort's read makes, one after another, for
// the markers of the transactions it judges and for the high watermark
// to pass its blobs' offsets (1.2 s in all); then the blobs still in
// doubt are kept, for the sweep.
var judgeWaits = []time.Duration{20 * time.Millisecond, 50 * time.Millisecond, 100 * time.Millisecond,
	200 * time.Millisecond, 350 * time.Millisecond, 500 * time.Millisecond}

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

// logNames follows a partition's batches in log order, from offset
// from: the blob keys committed records name, and per producer the keys
// its transaction still open (no marker read yet) names.
type logNames struct {
	bucket string
	from   int64 // the offset after the last batch read
	named  map[string]bool
	open   map[int64][]string // producer id: keys its open transaction names
}

func newLogNames(bucket string, from int64) *logNames {
	return &logNames{bucket: bucket, from: from, named: map[string]bool{}, open: map[int64][]string{}}
}

// add reads the whole batches at the start of raw (a fetch answer's
// records), those ending before from skipped: a broker may answer from
// the start of a batch, or repeat one. A record is not judged by its own
// offset: one before from that names a blob only keeps it, and offsets a
// broker got wrong hide no envelope.
func (n *logNames) add(raw []byte, max int) error {
	batches, _, err := leadingBatches(raw)
	if err != nil {
		return err
	}
	lim := batchLimits{decompressed: max, headers: maxHeaders}
	for i := range batches {
		b := &batches[i]
		last := b.FirstOffset + int64(b.LastOffsetDelta)
		if last < n.from {
			continue
		}
		n.from = last + 1
		recs, err := b.records(lim)
		if err != nil {
			return err
		}
		txn := b.Attributes&attrTxn != 0
		if b.Attributes&attrControl != 0 {
			if txn {
				n.marker(b.ProducerID, recs, b.NumRecords, lim)
			}
			continue
		}
		err = eachRecord(recs, b.NumRecords, lim, func(r *kmsg.Record, _ []byte) error {
			var env lfs.Envelope
			if bytes.HasPrefix(r.Value, []byte("{")) && bytes.Contains(r.Value, []byte(`"kfs_lfs"`)) &&
				json.Unmarshal(r.Value, &env) == nil && env.Version == 1 && env.Key != "" && env.Bucket == n.bucket {
				if txn {
					n.open[b.ProducerID] = append(n.open[b.ProducerID], env.Key)
				} else {
					n.named[env.Key] = true
				}
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// marker ends producer pid's open transaction as its control record says:
// an abort drops the keys it named, a commit (or a marker that cannot be
// read: keeping is the safe side) names them.
func (n *logNames) marker(pid int64, recs []byte, num int32, lim batchLimits) {
	abort := false
	eachRecord(recs, num, lim, func(r *kmsg.Record, _ []byte) error {
		// The key: version (int16), then type (int16): 0 abort, 1 commit.
		abort = len(r.Key) >= 4 && binary.BigEndian.Uint16(r.Key[2:4]) == 0
		return nil
	})
	if !abort {
		for _, k := range n.open[pid] {
			n.named[k] = true
		}
	}
	delete(n.open, pid)
}

// holdsOpen reports whether one of keys is named by a transaction with no
// marker read yet.
func (n *logNames) holdsOpen(keys map[string]bool) bool {
	for _, open := range n.open {
		for _, k := range open {
			if keys[k] {
				return true
			}
		}
	}
	return false
}

// result is the keys named, those of transactions still open included:
// they may yet commit.
func (n *logNames) result() map[string]bool {
	for _, keys := range n.open {
		for _, k := range keys {
			n.named[k] = true
		}
	}
	return n.named
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
