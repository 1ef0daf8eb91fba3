package lfs

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"time"

	"github.com/s3seal/s3seal/lfs/brokers"
	"github.com/twmb/franz-go/pkg/kerr"
)

// connect opens a broker session before anything is written to storage.
func (h *Handler) connect(ctx context.Context) (Session, *apiError) {
	sess, err := h.cfg.Producer.Connect(ctx)
	if err != nil {
		h.log.Warn("lfs: no broker before the upload; nothing stored", "err", err)
		return nil, errf(http.StatusServiceUnavailable, "backend_unavailable", "no Kafka broker is reachable; nothing was stored")
	}
	return sess, nil
}

// connectFor opens a broker session for a record to topic and partition and,
// when the session can tell, refuses before anything is stored a topic or
// partition the broker refuses (404, 403 or 400, as publish would after
// the upload).
func (h *Handler) connectFor(ctx context.Context, topic string, partition int32) (Session, *apiError) {
	sess, e := h.connect(ctx)
	if e != nil {
		return nil, e
	}
	tc, ok := sess.(TopicChecker)
	if !ok {
		return sess, nil
	}
	if err := tc.CheckTopic(ctx, topic, partition); err != nil {
		sess.Close()
		if e := topicRefusal(err, topic, partition, "nothing was stored"); e != nil {
			return nil, e
		}
		return nil, errf(http.StatusBadGateway, "backend_error", "the Kafka broker refused the topic (%s); nothing was stored", kafkaReason(err))
	}
	return sess, nil
}

// topicRefusal is the answer to the broker's refusal of a topic or
// partition (nil for other errors); done says what happened to the blob.
// A broker answers UNKNOWN_TOPIC_OR_PARTITION both for a topic and for a
// partition it does not have. Where its metadata listed the topic without
// the partition (brokers.ErrNoPartition) it is the partition (400
// invalid_partition). Otherwise, since every Kafka topic has a partition
// 0, for a record without a partition or for partition 0 it means the
// topic does not exist (404 unknown_topic); for a higher partition, the
// partition.
func topicRefusal(err error, topic string, partition int32, done string) *apiError {
	switch {
	case errors.Is(err, brokers.ErrNoPartition),
		errors.Is(err, kerr.UnknownTopicOrPartition) && partition > 0:
		return errf(http.StatusBadRequest, "invalid_partition", "topic %s has no partition %d; %s", topic, partition, done)
	case errors.Is(err, kerr.UnknownTopicOrPartition):
		return errf(http.StatusNotFound, "unknown_topic", "topic %s does not exist and the Kafka broker did not create it (auto.create.topics.enable is off); create the topic first; %s", topic, done)
	case errors.Is(err, kerr.TopicAuthorizationFailed):
		return errf(http.StatusForbidden, "topic_not_authorized", "the Kafka broker does not let s3seal's Kafka user write to topic %s; %s", topic, done)
	case errors.Is(err, kerr.InvalidTopicException):
		return errf(http.StatusBadRequest, "invalid_topic", "the Kafka broker refused the topic name %s; %s", topic, done)
	}
	return nil
}

// publish produces the envelope of a stored blob over sess. When the record
// cannot have been written (the session check or every broker failed, or
// the broker refused the topic or partition before anything was sent) the
// blob is deleted: 503 backend_unavailable, 404 unknown_topic, 403
// topic_not_authorized, 400 invalid_partition or invalid_topic, or 502
// backend_error. Only when it may have been written (sent, then failed) is
// the blob kept, since an envelope may point at it, and counted as an
// orphan.
func (h *Handler) publish(ctx context.Context, sess Session, rq *request, topic string, partition int32, key []byte, env Envelope) *apiError {
	value, err := json.Marshal(env)
	if err != nil {
		h.discard(ctx, rq, env.Key, "envelope encoding failed")
		return errf(http.StatusInternalServerError, "encode_failed", "%v", err)
	}
	if err := sess.Check(ctx); err != nil {
		h.discard(ctx, rq, env.Key, "broker check failed after the upload")
		return errf(http.StatusServiceUnavailable, "backend_unavailable", "no Kafka broker is reachable; the blob was removed")
	}
	p, err := sess.Produce(ctx, topic, partition, key, value, nil)
	switch {
	case err == nil:
		h.log.Debug("lfs: produced", "request_id", rq.id, "topic", topic, "partition", p.Partition, "offset", p.Offset, "key", env.Key)
		return nil
	case errors.Is(err, ErrSentThenFailed):
		h.orphan(rq, env.Key, "produce failed after it was sent", err)
		return errf(http.StatusBadGateway, "backend_error", "producing the envelope failed after it was sent; the record may exist")
	case errors.Is(err, ErrNoBroker):
		h.discard(ctx, rq, env.Key, "no broker accepted the record")
		return errf(http.StatusServiceUnavailable, "backend_unavailable", "no Kafka broker accepted the record; the blob was removed")
	}
	if e := topicRefusal(err, topic, partition, "the blob was removed"); e != nil {
		h.discard(ctx, rq, env.Key, "the broker refused the topic or partition")
		return e
	}
	// Refused before anything was written. The client learns the Kafka
	// error, the log also which broker said it.
	h.log.Warn("lfs: the broker refused the record", "request_id", rq.id, "topic", topic, "err", err)
	h.discard(ctx, rq, env.Key, "the broker refused the record before it was written")
	return errf(http.StatusBadGateway, "backend_error", "the Kafka broker refused the record (%s); the blob was removed", kafkaReason(err))
}

// kafkaReason is the Kafka error in err for a client: its name and
// description, without the broker addresses the error chain holds.
func kafkaReason(err error) string {
	var ke *kerr.Error
	if errors.As(err, &ke) {
		return ke.Message + ": " + ke.Description
	}
	return "see the log for this request id"
}

// discard deletes a blob no envelope points at; a delete that fails leaves
// an orphan.
func (h *Handler) discard(ctx context.Context, rq *request, key, why string) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
	defer cancel()
	if err := h.cfg.Store.Delete(ctx, h.cfg.Bucket, key); err != nil {
		h.metrics.storageErrors.Inc()
		h.orphan(rq, key, why+"; deleting the blob failed", err)
	}
}

func (h *Handler) orphan(rq *request, key, why string, err error) {
	h.metrics.orphans.Inc()
	h.log.Error("lfs: orphan object", "request_id", rq.id, "topic", rq.topic, "bucket", h.cfg.Bucket, "key", key, "reason", why, "err", err)
}

// succeeded counts a produced blob.
func (h *Handler) succeeded(topic string, size int64, start time.Time) {
	h.metrics.accepted(topic)
	// topicLabel, not topic: with a broker that creates every topic asked
	// for, invented topics are accepted too.
	h.metrics.uploads.WithLabelValues(h.metrics.topicLabel(topic)).Inc()
	h.metrics.uploadBytes.Add(float64(size))
	h.metrics.uploadDuration.Observe(time.Since(start).Seconds())
}
