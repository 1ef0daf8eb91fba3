// Package lfs serves the Kafka LFS HTTP API (KafScale's LFS proxy API):
// large blobs are stored through s3seal's encrypting layer (sealstore, in
// process) and a small JSON envelope pointing at them is produced to Kafka.
// It speaks HTTP and JSON; brokers are behind the Producer interface.
package lfs

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"regexp"
	"strings"
	"time"

	"github.com/s3seal/s3seal/crypto"
	"github.com/s3seal/s3seal/sealstore"
)

// Defaults of Config.
const (
	DefaultMaxBlobSize = 5 << 30
	DefaultPartSize    = 16 << 20
	DefaultSessionTTL  = time.Hour
	DefaultPresignTTL  = 15 * time.Minute
	maxJSONBody        = 1 << 20
	maxKafkaKey        = 4 << 10
)

// Config configures a Handler. Store, Producer, Keyring and Bucket are
// required.
type Config struct {
	Store    *sealstore.Store
	Producer Producer
	// Keyring is s3seal's master keyring; upload session ids are sealed
	// under a key derived from it, so every replica with the same keys can
	// serve any session.
	Keyring *crypto.Keyring
	// Bucket holds the blobs (created by the caller); Namespace is the
	// first component of every object key. Default namespace "default".
	Bucket, Namespace string
	// MaxBlobSize bounds one blob. Default 5 GiB.
	MaxBlobSize int64
	// PartSize is the part size of the multipart uploads /lfs/produce
	// streams into, and the one advertised by /lfs/uploads (at least
	// 5 MiB). Default 16 MiB.
	PartSize int64
	// SessionTTL is how long a multipart session lives. Default 1 h.
	SessionTTL time.Duration
	// SweepGrace is added to SessionTTL before the sweeper takes an
	// upload for abandoned, for clocks that differ between replicas and
	// the store. Default 1 minute.
	SweepGrace time.Duration
	// MaxInFlight bounds the requests served at once (each produce holds a
	// goroutine, a broker connection and a spool from before its body is
	// read to its answer). Default 256.
	MaxInFlight int
	// InFlightWait is how long a request past MaxInFlight waits for a slot
	// before 503 proxy_busy. Default 10 s.
	InFlightWait time.Duration
	// APIKey, when set, is required as X-API-Key or Authorization: Bearer.
	APIKey string
	// ProxyID, when set, goes into every envelope.
	ProxyID string
	// Presign, when set, enables /lfs/download in presign mode.
	Presign *PresignConfig
	// Ready, when set, reports whether storage is ready; requests get 503
	// proxy_not_ready while it returns false.
	Ready  func() bool
	Logger *slog.Logger
	// Now is the clock (tests). Default time.Now.
	Now func() time.Time
}

// Handler is the LFS HTTP API.
type Handler struct {
	cfg     Config
	log     *slog.Logger
	mux     *http.ServeMux
	metrics *Metrics
	now     func() time.Time
	slots   chan struct{} // MaxInFlight requests served at once
}

// New returns the LFS API handler.
func New(cfg Config) (*Handler, error) {
	if cfg.Store == nil || cfg.Producer == nil || cfg.Keyring == nil || cfg.Bucket == "" {
		return nil, errors.New("lfs: Store, Producer, Keyring and Bucket are required")
	}
	if cfg.Namespace == "" {
		cfg.Namespace = "default"
	}
	if strings.Contains(cfg.Namespace, "/") || cfg.Namespace == "." || cfg.Namespace == ".." || strings.HasPrefix(cfg.Namespace, ".s3seal") {
		return nil, fmt.Errorf("lfs: invalid namespace %q", cfg.Namespace)
	}
	if cfg.MaxBlobSize <= 0 {
		cfg.MaxBlobSize = DefaultMaxBlobSize
	}
	if cfg.SweepGrace <= 0 {
		cfg.SweepGrace = time.Minute
	}
	if cfg.PartSize <= 0 {
		cfg.PartSize = DefaultPartSize
	}
	if cfg.PartSize < sealstore.MinPartSize {
		return nil, fmt.Errorf("lfs: part size %d is under S3's minimum of %d", cfg.PartSize, sealstore.MinPartSize)
	}
	if cfg.MaxInFlight <= 0 {
		cfg.MaxInFlight = 256
	}
	if cfg.InFlightWait <= 0 {
		cfg.InFlightWait = 10 * time.Second
	}
	if cfg.SessionTTL <= 0 {
		cfg.SessionTTL = DefaultSessionTTL
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	h := &Handler{cfg: cfg, log: cfg.Logger, now: cfg.Now, metrics: newMetrics(), slots: make(chan struct{}, cfg.MaxInFlight)}
	m := http.NewServeMux()
	m.HandleFunc("POST /lfs/produce", h.wrap("produce", h.produce))
	m.HandleFunc("POST /lfs/uploads", h.wrap("upload_init", h.uploadInit))
	m.HandleFunc("PUT /lfs/uploads/{id}/parts/{n}", h.wrap("upload_part", h.uploadPart))
	m.HandleFunc("POST /lfs/uploads/{id}/complete", h.wrap("upload_complete", h.uploadComplete))
	m.HandleFunc("DELETE /lfs/uploads/{id}", h.wrap("upload_abort", h.uploadAbort))
	m.HandleFunc("POST /lfs/download", h.wrap("download", h.download))
	m.HandleFunc("/", h.wrap("", h.notFound))
	h.mux = m
	return h, nil
}

// Metrics returns the module's Prometheus collectors.
func (h *Handler) Metrics() *Metrics { return h.metrics }

func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) { h.mux.ServeHTTP(w, r) }

// apiError is an answer other than success.
type apiError struct {
	status        int
	code, message string
}

func (e *apiError) Error() string { return e.code + ": " + e.message }

func errf(status int, code, format string, args ...any) *apiError {
	return &apiError{status: status, code: code, message: fmt.Sprintf(format, args...)}
}

// request carries what every handler needs to answer and be counted.
type request struct {
	id, typ string
	topic   string // for the metrics, once known
}

type handlerFunc func(w http.ResponseWriter, r *http.Request, rq *request) *apiError

// wrap adds the request id, the API key check, readiness, JSON errors and
// the request metric.
func (h *Handler) wrap(typ string, f handlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		id := strings.TrimSpace(r.Header.Get("X-Request-ID"))
		if id == "" || len(id) > 128 {
			id = newUUID()
		}
		w.Header().Set("X-Request-ID", id)
		rq := &request{id: id, typ: typ}
		var e *apiError
		switch {
		case !h.authorized(r):
			e = errf(http.StatusUnauthorized, "unauthorized", "a valid API key is required")
		case h.cfg.Ready != nil && !h.cfg.Ready():
			e = errf(http.StatusServiceUnavailable, "proxy_not_ready", "storage is not ready")
		case !h.acquire(r.Context()):
			e = errf(http.StatusServiceUnavailable, "proxy_busy", "%d LFS requests are being served; try again later", h.cfg.MaxInFlight)
		default:
			e = func() *apiError {
				defer func() { <-h.slots }() // a panic frees it too
				return f(w, r, rq)
			}()
		}
		status := "ok"
		if e != nil {
			status = "error"
			h.writeError(w, rq, e)
		}
		if typ != "" {
			h.metrics.requests.WithLabelValues(h.metrics.topicLabel(rq.topic), status, typ).Inc()
		}
	}
}

// acquire takes a slot of MaxInFlight, waiting up to InFlightWait (less
// when ctx ends); false when none came free.
func (h *Handler) acquire(ctx context.Context) bool {
	select {
	case h.slots <- struct{}{}:
		return true
	default:
	}
	t := time.NewTimer(h.cfg.InFlightWait)
	defer t.Stop()
	select {
	case h.slots <- struct{}{}:
		return true
	case <-t.C:
	case <-ctx.Done():
	}
	return false
}

// RequireKey serves next only to a request that carries the API key
// (when one is set), as the API itself: 401 unauthorized otherwise. The
// module's metrics name every topic produced to, so they are served
// behind it.
func (h *Handler) RequireKey(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !h.authorized(r) {
			writeJSON(w, http.StatusUnauthorized, map[string]string{"code": "unauthorized", "message": "a valid API key is required"})
			return
		}
		next.ServeHTTP(w, r)
	})
}

func (h *Handler) authorized(r *http.Request) bool {
	if h.cfg.APIKey == "" {
		return true
	}
	got := r.Header.Get("X-API-Key")
	if got == "" {
		if a := r.Header.Get("Authorization"); len(a) > 7 && strings.EqualFold(a[:7], "bearer ") {
			got = strings.TrimSpace(a[7:])
		}
	}
	return subtle.ConstantTimeCompare([]byte(got), []byte(h.cfg.APIKey)) == 1
}

func (h *Handler) writeError(w http.ResponseWriter, rq *request, e *apiError) {
	if e.status >= 500 {
		h.log.Warn("lfs request failed", "request_id", rq.id, "type", rq.typ, "topic", rq.topic, "code", e.code, "message", e.message)
	}
	writeJSON(w, e.status, map[string]string{"code": e.code, "message": e.message, "request_id": rq.id})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func (h *Handler) notFound(w http.ResponseWriter, r *http.Request, rq *request) *apiError {
	switch p := r.URL.Path; {
	case p == "/lfs/produce", p == "/lfs/uploads", p == "/lfs/download",
		strings.HasPrefix(p, "/lfs/uploads/"):
		if p == "/lfs/download" {
			return errf(http.StatusMethodNotAllowed, "method_not_allowed",
				`method %s not allowed here: /lfs/download takes POST with a JSON body {"bucket": ..., "key": ..., "mode": "stream" or "presign"}`, r.Method)
		}
		return errf(http.StatusMethodNotAllowed, "method_not_allowed", "method %s not allowed here", r.Method)
	}
	return errf(http.StatusNotFound, "not_found", "no such endpoint")
}

// decodeJSON reads a JSON request body of at most 1 MiB.
func decodeJSON(r *http.Request, v any) *apiError {
	dec := json.NewDecoder(http.MaxBytesReader(nil, r.Body, maxJSONBody))
	if err := dec.Decode(v); err != nil {
		return errf(http.StatusBadRequest, "invalid_request", "invalid JSON body: %v", err)
	}
	return nil
}

var topicRE = regexp.MustCompile(`^[a-zA-Z0-9._-]+$`)

// checkTopic checks a topic name given in where (the header or JSON field
// that carries it, named in the message).
func checkTopic(topic, where string) *apiError {
	switch {
	case topic == "":
		return errf(http.StatusBadRequest, "missing_topic", "%s is required: the Kafka topic the envelope goes to", where)
	case len(topic) > 249:
		return errf(http.StatusBadRequest, "invalid_topic", "%s has %d characters; a Kafka topic name has at most 249", where, len(topic))
	case !topicRE.MatchString(topic) || topic == "." || topic == "..":
		return errf(http.StatusBadRequest, "invalid_topic", "%s %q is not a Kafka topic name (a-z A-Z 0-9 . _ - only)", where, topic)
	}
	return nil
}

// objectKey names a new blob: <namespace>/<topic>/lfs/YYYY/MM/DD/obj-<uuid>.
func (h *Handler) objectKey(topic string) string {
	return fmt.Sprintf("%s/%s/lfs/%s/obj-%s", h.cfg.Namespace, topic, h.now().UTC().Format("2006/01/02"), newUUID())
}

// newUUID returns a random (version 4) UUID.
func newUUID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	s := hex.EncodeToString(b[:])
	return s[:8] + "-" + s[8:12] + "-" + s[12:16] + "-" + s[16:20] + "-" + s[20:]
}
