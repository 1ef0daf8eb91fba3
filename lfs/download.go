package lfs

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/s3seal/s3seal/sealstore"
)

type downloadRequest struct {
	Bucket         string `json:"bucket"`
	Key            string `json:"key"`
	Mode           string `json:"mode"`
	ExpiresSeconds int64  `json:"expires_seconds"`
	Integrity      *struct {
		SHA256      string `json:"sha256"`
		ChecksumAlg string `json:"checksum_alg"`
		Size        *int64 `json:"size"`
	} `json:"integrity"`
}

type downloadResponse struct {
	Mode      string `json:"mode"`
	URL       string `json:"url"`
	ExpiresAt string `json:"expires_at"`
}

// holdBack is how much of a streamed blob is kept back until its SHA-256
// and size are verified (below).
const holdBack = 64 << 10

// download serves POST /lfs/download.
func (h *Handler) download(w http.ResponseWriter, r *http.Request, rq *request) *apiError {
	var in downloadRequest
	if e := decodeJSON(r, &in); e != nil {
		return e
	}
	in.Bucket, in.Key = strings.TrimSpace(in.Bucket), strings.TrimSpace(in.Key)
	switch {
	case in.Bucket == "" || in.Key == "":
		return errf(http.StatusBadRequest, "invalid_request", "bucket and key are required")
	case in.Bucket != h.cfg.Bucket:
		return errf(http.StatusBadRequest, "invalid_bucket", "bucket not allowed")
	}
	if e := h.checkDownloadKey(in.Key); e != nil {
		return e
	}
	// Downloads are not labelled by topic in the metrics: the key is the
	// client's, and a label per made-up topic would grow memory for good.
	switch mode := strings.ToLower(strings.TrimSpace(in.Mode)); mode {
	case "", "presign":
		return h.presign(w, r, in)
	case "stream":
		return h.stream(w, r, rq, in)
	default:
		return errf(http.StatusBadRequest, "invalid_mode", "mode must be presign or stream")
	}
}

// checkDownloadKey keeps downloads under the namespace.
func (h *Handler) checkDownloadKey(key string) *apiError {
	if strings.HasPrefix(key, "/") || !strings.HasPrefix(key, h.cfg.Namespace+"/") || strings.ContainsAny(key, "\\\x00") {
		return errf(http.StatusBadRequest, "invalid_key", "the key must be under the namespace %q", h.cfg.Namespace)
	}
	for _, seg := range strings.Split(key, "/") {
		if seg == ".." || seg == "." || seg == "" {
			return errf(http.StatusBadRequest, "invalid_key", "the key must not contain empty, . or .. segments")
		}
	}
	return nil
}

// stream sends the blob, decrypted and authenticated by sealstore, and
// verified against the integrity the client states: the size before any
// byte is sent; the SHA-256 as the bytes go, with the last 64 KiB held back
// until the hash is checked. On a mismatch a blob of at most 64 KiB gets
// 502 integrity_failure; a larger one has its connection cut short of its
// Content-Length, so no client takes it as a complete body. The same holds
// for damage sealstore finds mid-stream.
func (h *Handler) stream(w http.ResponseWriter, r *http.Request, rq *request, in downloadRequest) *apiError {
	var wantSHA string
	wantSize := int64(-1)
	if in.Integrity != nil {
		if alg := strings.ToLower(in.Integrity.ChecksumAlg); alg != "" && alg != "sha256" {
			return errf(http.StatusBadRequest, "invalid_request", "integrity.checksum_alg must be sha256")
		}
		wantSHA = strings.ToLower(strings.TrimSpace(in.Integrity.SHA256))
		if wantSHA != "" {
			if b, err := hex.DecodeString(wantSHA); err != nil || len(b) != sha256.Size {
				return errf(http.StatusBadRequest, "invalid_request", "integrity.sha256 must be 64 hex digits")
			}
		}
		if in.Integrity.Size != nil {
			wantSize = *in.Integrity.Size
		}
	}
	info, rd, err := h.cfg.Store.Get(r.Context(), h.cfg.Bucket, in.Key, nil)
	if err != nil {
		return h.readError(err, in.Key)
	}
	defer rd.Close()
	if wantSize >= 0 && info.Size != wantSize {
		return errf(http.StatusBadGateway, "integrity_failure", "the blob has %d bytes, %d expected", info.Size, wantSize)
	}
	sum := sha256.New()
	var (
		cur, pend = make([]byte, holdBack), make([]byte, 0, holdBack)
		started   bool
		fail      string
	)
	start := func() {
		started = true
		hd := w.Header()
		ct := info.Headers.ContentType
		if ct == "" {
			ct = "application/octet-stream"
		}
		hd.Set("Content-Type", ct)
		hd.Set("Content-Length", strconv.FormatInt(info.Size, 10))
		hd.Set("X-Kafscale-LFS-Content-Length", strconv.FormatInt(info.Size, 10))
		if wantSHA != "" {
			hd.Set("X-Kafscale-LFS-Checksum", "sha256="+wantSHA)
		}
		w.WriteHeader(http.StatusOK)
	}
	for {
		n, err := io.ReadFull(rd, cur)
		if n > 0 {
			sum.Write(cur[:n])
			if len(pend) > 0 {
				if !started {
					start()
				}
				if _, werr := w.Write(pend); werr != nil {
					panic(http.ErrAbortHandler) // the client went away
				}
			}
			// cur becomes the held-back piece; the old one is reused.
			pend, cur = cur[:n], pend[:cap(pend)]
		}
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			break
		}
		if err != nil {
			h.metrics.storageErrors.Inc()
			fail = "reading the blob failed: " + err.Error()
			if errors.Is(err, sealstore.ErrIntegrity) {
				fail = "the stored blob failed authentication"
			}
			break
		}
	}
	if fail == "" && wantSHA != "" && hex.EncodeToString(sum.Sum(nil)) != wantSHA {
		fail = "the blob's SHA-256 is not the one expected"
	}
	if fail != "" {
		if !started {
			return errf(http.StatusBadGateway, "integrity_failure", "%s", fail)
		}
		h.log.Error("lfs: download cut: integrity failure", "request_id", rq.id, "key", in.Key, "reason", fail)
		h.metrics.requests.WithLabelValues(h.metrics.topicLabel(rq.topic), "error", rq.typ).Inc()
		panic(http.ErrAbortHandler)
	}
	if !started {
		start()
	}
	_, _ = w.Write(pend)
	return nil
}

func (h *Handler) readError(err error, key string) *apiError {
	switch {
	case sealstoreCode(err) == "NoSuchKey":
		return errf(http.StatusNotFound, "object_not_found", "no such blob")
	case errors.Is(err, sealstore.ErrIntegrity):
		h.log.Error("lfs: stored blob failed authentication", "key", key, "err", err)
		return errf(http.StatusBadGateway, "integrity_failure", "the stored blob failed authentication")
	}
	h.metrics.storageErrors.Inc()
	h.log.Error("lfs: reading a blob failed", "key", key, "err", err)
	return errf(http.StatusBadGateway, "s3_get_failed", "reading the blob failed")
}

// presign answers a presigned GET URL to s3seal's own S3 API (which
// decrypts), signed with the credential configured for it; never one to the
// backend, which would serve ciphertext.
func (h *Handler) presign(w http.ResponseWriter, r *http.Request, in downloadRequest) *apiError {
	p := h.cfg.Presign
	if p == nil {
		return errf(http.StatusBadRequest, "invalid_mode", "presign mode is not configured; use mode stream")
	}
	ttl := p.maxExpiry()
	if in.ExpiresSeconds > 0 && time.Duration(in.ExpiresSeconds)*time.Second < ttl {
		ttl = time.Duration(in.ExpiresSeconds) * time.Second
	}
	url, err := p.presignGet(r.Context(), h.cfg.Bucket, in.Key, ttl)
	if err != nil {
		h.log.Error("lfs: presigning failed", "err", err)
		return errf(http.StatusBadGateway, "s3_presign_failed", "presigning failed")
	}
	writeJSON(w, http.StatusOK, downloadResponse{Mode: "presign", URL: url, ExpiresAt: h.now().Add(ttl).UTC().Format(time.RFC3339)})
	return nil
}
