package lfs

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"time"
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

// publish produces the envelope of a stored blob over sess. When the record
// cannot have been written (the session check or every broker failed) the
// blob is deleted and the answer is 503 backend_unavailable. When it may
// have been written (sent, then failed; or any failure the broker side did
// not classify) the blob is kept, since an envelope may point at it, and
// counted as an orphan.
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
	case errors.Is(err, ErrNoBroker) && !errors.Is(err, ErrSentThenFailed):
		h.discard(ctx, rq, env.Key, "no broker accepted the record")
		return errf(http.StatusServiceUnavailable, "backend_unavailable", "no Kafka broker accepted the record; the blob was removed")
	}
	h.orphan(rq, env.Key, "produce failed after it was sent", err)
	return errf(http.StatusBadGateway, "backend_error", "producing the envelope failed after it was sent; the record may exist")
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
	h.metrics.uploads.WithLabelValues(topic).Inc()
	h.metrics.uploadBytes.Add(float64(size))
	h.metrics.uploadDuration.Observe(time.Since(start).Seconds())
}
