package kafkaproxy

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/s3seal/s3seal/lfs"
	"github.com/s3seal/s3seal/lfs/brokers"
)

// A Produce: each partition's batches are checked (magic 2, CRC), and a
// batch holding a record marked LFS_BLOB has each such value stored
// (sealed) and replaced by its envelope, then is encoded again with its
// codec, producer id, epoch and sequence; other batches go on as their
// bytes. Partitions are sent to their leaders, the answers merged. A blob
// whose partition a broker refused before writing is deleted; one whose
// answer never came is kept (an idempotent producer's retry stores to the
// same key and the broker keeps one copy of the batch). Such a partition
// is answered REQUEST_TIMED_OUT, which clients read as "maybe written" (a
// broker answers it when it wrote the batch but its replicas did not
// confirm in time): an idempotent producer then retries the batch until
// it learns its fate. Taking it for unwritten (kgo does so with
// NETWORK_EXCEPTION), a producer that aborts its transaction fails the
// batch's records and sends the next ones under the same sequence
// numbers, which the broker takes for a retry of the written batch:
// answered OK, kept nowhere.

// part is one partition of a Produce on its way.
type part struct {
	topic      string
	partition  int32
	leader     int32
	records    []byte
	blobs      []lfs.StoredBlob
	pid        int64
	code       int16
	msg        string
	answer     *kmsg.ProduceResponseTopicPartition
	unanswered bool   // sent, and no answer came
	logEnd     *int64 // the log end offset before the send, once asked
}

func (c *conn) produce(ctx context.Context, req *kmsg.ProduceRequest) kmsg.Response {
	start := time.Now()
	acks := req.Acks
	if req.TransactionID != nil {
		req.TransactionID = c.txnID(*req.TransactionID)
	}
	var parts []*part
	leaders := c.p.cfg.Brokers.Lookup()
	for _, t := range req.Topics {
		for _, p := range t.Partitions {
			pt := &part{topic: t.Topic, partition: p.Partition, records: p.Records, pid: -1}
			parts = append(parts, pt)
			c.prepare(ctx, req, pt, leaders)
		}
	}
	c.sendParts(ctx, req, parts)
	for _, pt := range parts {
		c.settle(ctx, pt, start)
	}
	if acks == 0 {
		return nil
	}
	return c.produceAnswer(req, parts)
}

// prepare checks a partition's access and leader, then rewrites its
// batches; a failure sets the partition's answer.
func (c *conn) prepare(ctx context.Context, req *kmsg.ProduceRequest, pt *part, leaders *brokers.Lookup) {
	if !c.mayUse(pt.topic) {
		pt.code = kerr.TopicAuthorizationFailed.Code
		return
	}
	id, err := leaders.Leader(ctx, pt.topic, pt.partition)
	if err != nil {
		pt.code, pt.msg = codeOf(err, kerr.NotLeaderForPartition), ""
		return
	}
	pt.leader = id
	out, err := c.rewrite(ctx, req, pt)
	if err != nil {
		var be *batchError
		var le *lfs.BlobError
		switch {
		case errors.As(err, &be):
			pt.code, pt.msg = be.code.Code, be.msg
		case errors.As(err, &le):
			pt.code, pt.msg = blobCode(le), le.Msg
		default:
			pt.code, pt.msg = kerr.UnknownServerError.Code, err.Error()
		}
		c.p.metrics.refused.WithLabelValues("batch").Inc()
		c.p.log.Info("kafka listener: produce refused", "topic", pt.topic, "partition", pt.partition,
			"error", kerr.ErrorForCode(pt.code), "reason", pt.msg, "err", err)
		c.drop(ctx, pt, "the produce was refused before it was sent")
		return
	}
	pt.records = out
}

func blobCode(e *lfs.BlobError) int16 {
	switch e.Kind {
	case "too_large":
		return kerr.MessageTooLarge.Code
	case "storage":
		return kerr.KafkaStorageError.Code
	}
	return kerr.InvalidRecord.Code
}

func codeOf(err error, def *kerr.Error) int16 {
	var ke *kerr.Error
	if errors.As(err, &ke) {
		return ke.Code
	}
	return def.Code
}

// rewrite returns the partition's records with every LFS_BLOB value stored
// and replaced. The blobs stored are kept in pt even on failure, so that
// the caller deletes them.
func (c *conn) rewrite(ctx context.Context, req *kmsg.ProduceRequest, pt *part) ([]byte, error) {
	lim := batchLimits{decompressed: c.p.cfg.MaxRequest, headers: maxHeaders}
	return rewriteRecords(pt.records, lim, func(b *batch, r *kmsg.Record) ([]byte, error) {
		pt.pid = b.ProducerID
		sb, err := c.storeBlob(ctx, req, pt, b, r)
		return sb.Envelope, err
	})
}

// storeBlob stores one record's value, recording it with its transaction.
func (c *conn) storeBlob(ctx context.Context, req *kmsg.ProduceRequest, pt *part, b *batch, r *kmsg.Record) (lfs.StoredBlob, error) {
	slot := lfs.BlobSlot{Principal: c.principal, Topic: pt.topic, Partition: pt.partition, ProducerID: -1, LogEnd: c.logEnd(ctx, pt)}
	if b.ProducerID >= 0 && b.FirstSequence >= 0 {
		slot.ProducerID, slot.ProducerEpoch, slot.Sequence = b.ProducerID, b.ProducerEpoch, b.FirstSequence+r.OffsetDelta
	}
	hdrs := make([]lfs.RecordHeader, len(r.Headers))
	for i, h := range r.Headers {
		hdrs[i] = lfs.RecordHeader{Key: h.Key, Value: h.Value}
	}
	sb, err := c.p.cfg.Blobs.StoreRecordBlob(ctx, slot, r.Value, hdrs)
	if err != nil {
		return sb, err
	}
	pt.blobs = append(pt.blobs, sb)
	if b.Attributes&attrTxn != 0 && req.TransactionID != nil {
		k := txnKey{*req.TransactionID, b.ProducerID, b.ProducerEpoch}
		if !c.p.txns.add(k, lfs.KafkaBlob{Key: sb.Key, Topic: pt.topic, Partition: pt.partition, LogEnd: slot.LogEnd}) {
			c.p.log.Warn("kafka listener: too many open transactions' blobs recorded; an abort of this one leaves its blob to the sweep",
				"key", sb.Key)
		}
	}
	return sb, nil
}

// logEnd is the partition's log end offset, asked of its leader once per
// request before any blob is stored (-1 when it does not answer: the sweep
// then keeps the blob).
func (c *conn) logEnd(ctx context.Context, pt *part) int64 {
	if pt.logEnd == nil {
		v := c.p.listOffset(ctx, pt.topic, pt.partition, pt.leader, -1)
		pt.logEnd = &v
	}
	return *pt.logEnd
}

// listOffset asks broker leader for an offset of topic/partition:
// timestamp -1 its log end, -2 its log start. -1 when it does not answer.
func (p *Proxy) listOffset(ctx context.Context, topic string, partition, leader int32, timestamp int64) int64 {
	req := kmsg.NewPtrListOffsetsRequest()
	req.SetVersion(1)
	if bv, err := p.cfg.Brokers.Versions(ctx); err == nil {
		if r, ok := bv[kmsg.ListOffsets.Int16()]; ok {
			req.SetVersion(max(1, min(r[1], 7)))
		}
	}
	req.ReplicaID = -1
	rt := kmsg.NewListOffsetsRequestTopic()
	rt.Topic = topic
	rp := kmsg.NewListOffsetsRequestTopicPartition()
	rp.Partition, rp.Timestamp, rp.CurrentLeaderEpoch = partition, timestamp, -1
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	kr, err := p.cfg.Brokers.Send(ctx, leader, req)
	if err != nil {
		return -1
	}
	v := int64(-1)
	for _, t := range kr.(*kmsg.ListOffsetsResponse).Topics {
		for _, rp := range t.Partitions {
			if t.Topic == topic && rp.Partition == partition && rp.ErrorCode == 0 && rp.Offset >= 0 {
				v = rp.Offset
			}
		}
	}
	return v
}

// sendParts sends the partitions still on their way to their leaders, one
// request per leader, in parallel.
func (c *conn) sendParts(ctx context.Context, req *kmsg.ProduceRequest, parts []*part) {
	byLeader := map[int32][]*part{}
	for _, pt := range parts {
		if pt.code == 0 {
			byLeader[pt.leader] = append(byLeader[pt.leader], pt)
		}
	}
	var wg sync.WaitGroup
	for id, ps := range byLeader {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c.sendLeader(ctx, req, id, ps)
		}()
	}
	wg.Wait()
}

func (c *conn) sendLeader(ctx context.Context, req *kmsg.ProduceRequest, id int32, ps []*part) {
	r := *req
	if r.Acks == 0 {
		// No answer would say what became of the blobs: ask for the
		// leader's, and answer the client nothing, as acks=0 expects.
		r.Acks = 1
	}
	r.Topics = nil
	idx := map[string]int{}
	for _, pt := range ps {
		i, ok := idx[pt.topic]
		if !ok {
			i = len(r.Topics)
			idx[pt.topic] = i
			t := kmsg.NewProduceRequestTopic()
			t.Topic = pt.topic
			r.Topics = append(r.Topics, t)
		}
		p := kmsg.NewProduceRequestTopicPartition()
		p.Partition, p.Records = pt.partition, pt.records
		r.Topics[i].Partitions = append(r.Topics[i].Partitions, p)
	}
	kr, err := c.p.cfg.Brokers.Send(ctx, id, &r)
	if err != nil {
		c.p.metrics.brokerErrors.Inc()
		unsent := errors.Is(err, brokers.ErrUnsent)
		c.p.log.Info("kafka listener: produce to a leader failed", "broker", id, "sent", !unsent, "err", err)
		for _, pt := range ps {
			c.p.cfg.Brokers.Forget(pt.topic, pt.partition)
			if unsent {
				pt.code = kerr.NotLeaderForPartition.Code
			} else {
				pt.code, pt.unanswered = kerr.RequestTimedOut.Code, true
			}
		}
		return
	}
	resp := kr.(*kmsg.ProduceResponse)
	for _, t := range resp.Topics {
		for i := range t.Partitions {
			rp := &t.Partitions[i]
			for _, pt := range ps {
				// A broker that answers a partition twice is taken at
				// its word that it wrote the batch if either answer says
				// so: a blob is deleted only on a refusal never
				// contradicted.
				if pt.topic == t.Topic && pt.partition == rp.Partition && (pt.answer == nil || pt.code != 0) {
					pt.answer, pt.code = rp, rp.ErrorCode
				}
			}
		}
	}
	for _, pt := range ps {
		if pt.answer == nil && pt.code == 0 {
			pt.code, pt.unanswered = kerr.RequestTimedOut.Code, true
		}
		if leaderMovedCode(pt.code) {
			c.p.cfg.Brokers.Forget(pt.topic, pt.partition)
		}
	}
}

// settle counts a partition's blobs and deletes those no record will
// name: refused before they were sent, or by a broker that wrote nothing.
func (c *conn) settle(ctx context.Context, pt *part, start time.Time) {
	if len(pt.blobs) == 0 {
		return
	}
	switch {
	case pt.code == 0:
		for _, b := range pt.blobs {
			c.p.cfg.Blobs.Produced(pt.topic, b.Size, start)
		}
		c.p.metrics.records.WithLabelValues(c.p.cfg.Blobs.Metrics().TopicLabel(pt.topic)).Add(float64(len(pt.blobs)))
	case pt.unanswered:
		// The batch may be in the log. An idempotent producer's retry
		// lands on the same keys; anything else is an orphan.
		if pt.pid < 0 {
			for _, b := range pt.blobs {
				c.p.cfg.Blobs.Orphan(pt.topic, b.Key, "the produce's answer never came")
			}
		}
	case pt.answer != nil && !brokers.NotAppended(pt.code) && !definite(pt.code):
		// An answer that does not say nothing was written.
		if pt.pid < 0 {
			for _, b := range pt.blobs {
				c.p.cfg.Blobs.Orphan(pt.topic, b.Key, "the broker answered "+kerr.ErrorForCode(pt.code).Error())
			}
		}
	default:
		c.drop(ctx, pt, "the broker refused the batch")
	}
}

// definite reports the answers for a batch the log cannot hold: a producer
// fenced or out of sequence has nothing of this batch written. After
// OUT_OF_ORDER_SEQUENCE_NUMBER or UNKNOWN_PRODUCER_ID a producer starts a
// new epoch and sends the records again under other sequence numbers,
// whose blobs have other keys: this attempt's would be orphans.
func definite(code int16) bool {
	switch code {
	case kerr.OutOfOrderSequenceNumber.Code, kerr.UnknownProducerID.Code,
		kerr.InvalidProducerEpoch.Code, kerr.ProducerFenced.Code, kerr.InvalidProducerIDMapping.Code,
		kerr.InvalidTxnState.Code, kerr.TransactionalIDAuthorizationFailed.Code, kerr.ClusterAuthorizationFailed.Code,
		kerr.NotLeaderForPartition.Code, kerr.KafkaStorageError.Code, kerr.OutOfOrderSequenceNumber.Code,
		kerr.UnknownProducerID.Code:
		return true
	}
	return false
}

// drop deletes the blobs this attempt created for a partition whose batch
// will not be in the log. A blob an earlier attempt of the same batch
// stored (Created false) stays: that attempt's record may point at it.
func (c *conn) drop(ctx context.Context, pt *part, why string) {
	for _, b := range pt.blobs {
		if b.Created {
			c.p.cfg.Blobs.DeleteBlob(ctx, b.Key, why)
		}
	}
}

// produceAnswer builds the client's answer from each partition's outcome.
func (c *conn) produceAnswer(req *kmsg.ProduceRequest, parts []*part) kmsg.Response {
	resp := req.ResponseKind().(*kmsg.ProduceResponse)
	idx := map[string]int{}
	for _, pt := range parts {
		i, ok := idx[pt.topic]
		if !ok {
			i = len(resp.Topics)
			idx[pt.topic] = i
			t := kmsg.NewProduceResponseTopic()
			t.Topic = pt.topic
			resp.Topics = append(resp.Topics, t)
		}
		rp := kmsg.NewProduceResponseTopicPartition()
		if pt.answer != nil {
			rp = *pt.answer
			rp.CurrentLeader = kmsg.NewProduceResponseTopicPartitionCurrentLeader()
		} else {
			rp.Partition, rp.ErrorCode, rp.BaseOffset, rp.LogAppendTime, rp.LogStartOffset = pt.partition, pt.code, -1, -1, -1
			if pt.msg != "" {
				m := pt.msg
				rp.ErrorMessage = &m
			}
		}
		resp.Topics[i].Partitions = append(resp.Topics[i].Partitions, rp)
	}
	return resp
}
