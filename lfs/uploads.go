package lfs

import (
	"context"
	"errors"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/s3seal/s3seal/backend"
	"github.com/s3seal/s3seal/sealstore"
)

type uploadInitRequest struct {
	Topic       string `json:"topic"`
	Key         string `json:"key"`
	Partition   *int32 `json:"partition,omitempty"`
	ContentType string `json:"content_type"`
	SizeBytes   int64  `json:"size_bytes"`
	Checksum    string `json:"checksum,omitempty"`
	ChecksumAlg string `json:"checksum_alg,omitempty"`
}

type uploadInitResponse struct {
	UploadID  string `json:"upload_id"`
	S3Key     string `json:"s3_key"`
	PartSize  int64  `json:"part_size"`
	ExpiresAt string `json:"expires_at"`
}

type uploadPartResponse struct {
	UploadID   string `json:"upload_id"`
	PartNumber int    `json:"part_number"`
	ETag       string `json:"etag"`
}

type uploadCompleteRequest struct {
	Parts []struct {
		PartNumber int    `json:"part_number"`
		ETag       string `json:"etag"`
	} `json:"parts"`
}

// uploadInit serves POST /lfs/uploads: after a broker answered, it starts
// the storage upload and answers the sealed session id.
func (h *Handler) uploadInit(w http.ResponseWriter, r *http.Request, rq *request) *apiError {
	var in uploadInitRequest
	if e := decodeJSON(r, &in); e != nil {
		return e
	}
	in.Topic = strings.TrimSpace(in.Topic)
	if e := checkTopic(in.Topic, "the JSON field topic"); e != nil {
		return e
	}
	rq.topic = in.Topic
	key, e := parseKafkaKey(in.Key)
	if e != nil {
		return e
	}
	if len(key) > maxKafkaKey {
		return errf(http.StatusBadRequest, "invalid_key", "a multipart upload's Kafka key may have at most %d bytes", maxKafkaKey)
	}
	partition := int32(-1)
	if in.Partition != nil {
		if *in.Partition < 0 {
			return errf(http.StatusBadRequest, "invalid_partition", "partition must be >= 0")
		}
		partition = *in.Partition
	}
	spec, e := parseChecksum(in.ChecksumAlg, in.Checksum)
	if e != nil {
		return e
	}
	switch {
	case in.SizeBytes <= 0:
		return errf(http.StatusBadRequest, "invalid_request", "size_bytes must be > 0")
	case in.SizeBytes > h.cfg.MaxBlobSize:
		return errf(http.StatusRequestEntityTooLarge, "payload_too_large", "the blob is larger than %d bytes", h.cfg.MaxBlobSize)
	}
	sess, e := h.connectFor(r.Context(), in.Topic, partition)
	if e != nil {
		return e
	}
	sess.Close()
	okey := h.objectKey(in.Topic)
	id, err := h.cfg.Store.CreateMultipart(r.Context(), sealstore.CreateMultipartInput{Bucket: h.cfg.Bucket, Key: okey,
		Headers: backend.Headers{ContentType: in.ContentType}})
	if err != nil {
		h.metrics.storageErrors.Inc()
		h.log.Error("lfs: starting a multipart upload failed", "request_id", rq.id, "err", err)
		return errf(http.StatusBadGateway, "s3_upload_failed", "starting the upload failed")
	}
	exp := h.now().Add(h.cfg.SessionTTL).Truncate(time.Second)
	token, err := h.sealSession(&session{Bucket: h.cfg.Bucket, UploadID: id, Key: okey, Topic: in.Topic, KafkaKey: key,
		Partition: partition, ContentType: in.ContentType, Size: in.SizeBytes, ChecksumAlg: spec.alg, Checksum: spec.want,
		Expires: exp.Unix()})
	if err != nil {
		h.abort(r.Context(), okey, id)
		return errf(http.StatusInternalServerError, "internal_error", "%v", err)
	}
	writeJSON(w, http.StatusOK, uploadInitResponse{UploadID: token, S3Key: okey, PartSize: h.cfg.PartSize,
		ExpiresAt: exp.UTC().Format(time.RFC3339)})
	return nil
}

// loadSession opens the session of the request's upload id. An expired one
// has its storage upload aborted (410 upload_expired).
func (h *Handler) loadSession(r *http.Request, rq *request) (*session, string, *apiError) {
	id := r.PathValue("id")
	s, err := h.openSession(id)
	if err != nil {
		return nil, id, errf(http.StatusNotFound, "upload_not_found", "no such upload")
	}
	rq.topic = s.Topic
	if !h.now().Before(s.expires()) {
		h.abort(r.Context(), s.Key, s.UploadID)
		return nil, id, errf(http.StatusGone, "upload_expired", "the upload expired at %s; its parts were dropped", s.expires().UTC().Format(time.RFC3339))
	}
	return s, id, nil
}

// uploadPart serves PUT /lfs/uploads/{id}/parts/{n}, streaming the part
// into storage. Parts may come in any order, in parallel, to any replica.
func (h *Handler) uploadPart(w http.ResponseWriter, r *http.Request, rq *request) *apiError {
	s, id, e := h.loadSession(r, rq)
	if e != nil {
		return e
	}
	n, err := strconv.Atoi(r.PathValue("n"))
	if err != nil || n < 1 || n > 10000 {
		return errf(http.StatusBadRequest, "invalid_part", "the part number must be 1 to 10000")
	}
	if r.ContentLength > s.Size {
		return errf(http.StatusBadRequest, "invalid_part", "the part is larger than the upload's declared size")
	}
	body := &blobReader{r: r.Body, max: s.Size}
	pi, err := h.cfg.Store.UploadPart(r.Context(), sealstore.UploadPartInput{Bucket: h.cfg.Bucket, Key: s.Key, UploadID: s.UploadID,
		PartNumber: n, Body: body, Size: r.ContentLength})
	switch {
	case err == nil:
	case sealstoreCode(err) == "NoSuchUpload":
		return errf(http.StatusNotFound, "upload_not_found", "no such upload")
	case isTooLarge(err):
		return errf(http.StatusBadRequest, "invalid_part", "the part is larger than the upload's declared size")
	default:
		return h.storeError(err)
	}
	writeJSON(w, http.StatusOK, uploadPartResponse{UploadID: id, PartNumber: n, ETag: pi.ETag})
	return nil
}

func isTooLarge(err error) bool {
	return errors.Is(err, errTooLarge) || sealstoreCode(err) == "EntityTooLarge"
}

// uploadComplete serves POST /lfs/uploads/{id}/complete: completes the
// storage upload (its size must be the declared one), reads the object back
// for its SHA-256 and the client's checksum (parts came in any order, so
// neither can be computed while they arrive), deletes it on a mismatch,
// and produces the envelope as /lfs/produce does.
func (h *Handler) uploadComplete(w http.ResponseWriter, r *http.Request, rq *request) *apiError {
	start := time.Now()
	s, _, e := h.loadSession(r, rq)
	if e != nil {
		return e
	}
	var in uploadCompleteRequest
	if e := decodeJSON(r, &in); e != nil {
		return e
	}
	if len(in.Parts) == 0 {
		return errf(http.StatusBadRequest, "incomplete_upload", "no parts named")
	}
	parts := make([]sealstore.CompletePart, len(in.Parts))
	for i, p := range in.Parts {
		parts[i] = sealstore.CompletePart{PartNumber: p.PartNumber, ETag: p.ETag}
	}
	slices.SortFunc(parts, func(a, b sealstore.CompletePart) int { return a.PartNumber - b.PartNumber })
	for i := 1; i < len(parts); i++ {
		if parts[i].PartNumber == parts[i-1].PartNumber {
			return errf(http.StatusBadRequest, "invalid_part", "part %d is named twice", parts[i].PartNumber)
		}
	}
	sess, e := h.connect(r.Context())
	if e != nil {
		return e // the upload stays; the completion may be retried
	}
	defer sess.Close()
	done, err := h.cfg.Store.CompleteMultipart(r.Context(), sealstore.CompleteInput{Bucket: h.cfg.Bucket, Key: s.Key,
		UploadID: s.UploadID, Parts: parts, ExpectSize: s.Size})
	if err != nil {
		switch code := sealstoreCode(err); code {
		case "NoSuchUpload":
			return errf(http.StatusNotFound, "upload_not_found", "no such upload (completed or aborted)")
		case "InvalidPart", "InvalidPartOrder", "EntityTooSmall", "InvalidArgument":
			return errf(http.StatusBadRequest, "invalid_part", "%v", err)
		case "InvalidRequest":
			return errf(http.StatusBadRequest, "incomplete_upload", "the parts do not make the declared %d bytes", s.Size)
		}
		h.metrics.storageErrors.Inc()
		h.log.Error("lfs: completing a multipart upload failed", "request_id", rq.id, "key", s.Key, "err", err)
		return errf(http.StatusBadGateway, "s3_upload_failed", "completing the upload failed")
	}
	if done.CompletedElsewhere {
		// Another completion of this session (a retry sent to another
		// replica) made the blob and owns its envelope: this one touches
		// neither, so the blob is never deleted under a published record
		// nor produced twice.
		return errf(http.StatusConflict, "upload_completed", "the upload was completed by another request, which produces its envelope")
	}
	sums, err := h.readBack(r.Context(), s)
	if err != nil {
		h.metrics.storageErrors.Inc()
		h.log.Error("lfs: reading a completed upload back failed", "request_id", rq.id, "key", s.Key, "err", err)
		h.discard(r.Context(), rq, s.Key, "read-back after completion failed")
		return errf(http.StatusBadGateway, "s3_upload_failed", "the completed blob could not be read back; it was removed")
	}
	if sums.mismatch() {
		h.discard(r.Context(), rq, s.Key, "checksum mismatch at completion")
		return errf(http.StatusBadRequest, "checksum_mismatch", "the blob does not match the checksum given; it was removed")
	}
	env := sums.envelope(h, s.Key, s.ContentType)
	if e := h.publish(r.Context(), sess, rq, s.Topic, s.Partition, s.KafkaKey, env); e != nil {
		return e
	}
	h.succeeded(s.Topic, env.Size, start)
	writeJSON(w, http.StatusOK, env)
	return nil
}

func (h *Handler) readBack(ctx context.Context, s *session) (*sums, error) {
	_, rd, err := h.cfg.Store.Get(ctx, h.cfg.Bucket, s.Key, nil)
	if err != nil {
		return nil, err
	}
	defer rd.Close()
	sums := newSums(checksumSpec{alg: s.ChecksumAlg, want: s.Checksum})
	if _, err := io.Copy(sums, rd); err != nil {
		return nil, err
	}
	return sums, nil
}

// uploadAbort serves DELETE /lfs/uploads/{id}.
func (h *Handler) uploadAbort(w http.ResponseWriter, r *http.Request, rq *request) *apiError {
	s, err := h.openSession(r.PathValue("id"))
	if err != nil {
		return errf(http.StatusNotFound, "upload_not_found", "no such upload")
	}
	rq.topic = s.Topic
	if err := h.cfg.Store.AbortMultipart(r.Context(), h.cfg.Bucket, s.Key, s.UploadID); err != nil {
		if sealstoreCode(err) == "NoSuchUpload" {
			return errf(http.StatusNotFound, "upload_not_found", "no such upload")
		}
		h.metrics.storageErrors.Inc()
		return errf(http.StatusBadGateway, "s3_upload_failed", "aborting the upload failed")
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}
