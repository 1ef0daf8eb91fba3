package lfs

import (
	"encoding/base64"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// produce serves POST /lfs/produce: the body is the blob, streamed into
// storage; the answer is the envelope produced to the topic.
func (h *Handler) produce(w http.ResponseWriter, r *http.Request, rq *request) *apiError {
	start := time.Now()
	topic := strings.TrimSpace(r.Header.Get("X-Kafka-Topic"))
	if e := checkTopic(topic, "the X-Kafka-Topic header"); e != nil {
		return e
	}
	rq.topic = topic
	key, e := parseKafkaKey(r.Header.Get("X-Kafka-Key"))
	if e != nil {
		return e
	}
	partition := int32(-1)
	if v := strings.TrimSpace(r.Header.Get("X-Kafka-Partition")); v != "" {
		p, err := strconv.ParseInt(v, 10, 32)
		if err != nil || p < 0 {
			return errf(http.StatusBadRequest, "invalid_partition", "X-Kafka-Partition must be an integer >= 0")
		}
		partition = int32(p)
	}
	spec, e := parseChecksum(r.Header.Get("X-LFS-Checksum-Alg"), r.Header.Get("X-LFS-Checksum"))
	if e != nil {
		return e
	}
	switch {
	case r.ContentLength > h.cfg.MaxBlobSize:
		return errf(http.StatusRequestEntityTooLarge, "payload_too_large", "the blob is larger than %d bytes", h.cfg.MaxBlobSize)
	case r.ContentLength == 0:
		return errf(http.StatusBadRequest, "empty_upload", "the blob is empty")
	}
	sess, e := h.connectFor(r.Context(), topic, partition)
	if e != nil {
		return e
	}
	defer sess.Close()
	okey := h.objectKey(topic)
	ct := r.Header.Get("Content-Type")
	s, err := h.storeStream(r.Context(), okey, r.Body, r.ContentLength, ct, spec)
	if err != nil {
		return h.storeError(err)
	}
	env := s.envelope(h, okey, ct)
	if e := h.publish(r.Context(), sess, rq, topic, partition, key, env); e != nil {
		return e
	}
	h.succeeded(topic, env.Size, start)
	writeJSON(w, http.StatusOK, env)
	return nil
}

func parseKafkaKey(v string) ([]byte, *apiError) {
	v = strings.TrimSpace(v)
	if v == "" {
		return nil, nil
	}
	b, err := base64.StdEncoding.DecodeString(v)
	if err != nil {
		return nil, errf(http.StatusBadRequest, "invalid_key", "the Kafka key must be standard base64")
	}
	return b, nil
}
