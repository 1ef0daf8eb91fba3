// Package s3api is s3seal's HTTP front: it routes S3 requests (path-style
// and virtual-hosted style), authenticates them (package sigv4), turns them
// into calls on the encrypting object layer (package sealstore) and renders
// S3 XML responses and errors. It never touches keys or ciphertext.
// routes.go is its table of contents. Its self-contained parts are
// packages of their own: s3err (the error table), cors (CORS rules),
// postpolicy (the POST policy of browser uploads), sigv4 and checksum.
package s3api

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/gorilla/mux"

	"github.com/s3seal/s3seal/access"
	"github.com/s3seal/s3seal/internal/reqid"
	"github.com/s3seal/s3seal/s3api/s3err"
	"github.com/s3seal/s3seal/s3api/sigv4"
	"github.com/s3seal/s3seal/sealstore"
)

// Config is everything the HTTP front needs. Store and Verifier are required.
type Config struct {
	// Store is the encrypting object layer.
	Store ObjectStore
	// Credentials are the clients s3seal accepts and what each may access.
	Credentials Credentials
	// AllowAnonymous serves unsigned requests as nobody (anonymous.go):
	// allowed only what a bucket's public ACL grants or its policy allows
	// everyone. Off, they are refused (AccessDenied).
	AllowAnonymous bool
	// Domains are the host names under which virtual-hosted-style requests
	// arrive: Host "photos.s3.example.com" with domain "s3.example.com"
	// addresses bucket "photos". Default: ["localhost"]. Any other Host is
	// taken as path style.
	Domains []string
	// Ready, when set, reports whether s3seal can serve; /healthz answers
	// 503 while it returns false. Default: always ready.
	Ready func() bool
	// Readiness, when set, is asked by /readyz, which answers 503 with the
	// error's text when it returns one, 200 otherwise; the text is shown
	// unauthenticated, so it must not carry secrets or addresses. Without
	// it /readyz is an ordinary (signed) S3 path.
	Readiness func(context.Context) error
	// Metrics, when set, is served unauthenticated on GET /metrics.
	Metrics http.Handler
	// Observer is told of every request (metrics). Default: none.
	Observer Observer
	// MaxInFlight bounds the S3 requests served at once, so that memory
	// stays bounded however many clients connect (each request holds a few
	// 64 KiB buffers). Requests beyond it wait for a slot. Default 256.
	MaxInFlight int
	// QueueTimeout is how long a request waits for a slot before it is
	// answered 503 SlowDown, which S3 clients retry with backoff.
	// Default 10 s.
	QueueTimeout time.Duration
	// KeepAliveDelay is how long CompleteMultipartUpload and copies may
	// take before s3seal answers 200 and keeps the connection busy with a
	// space every KeepAliveInterval until the result (or an <Error>
	// element) follows, as S3 does. Defaults 10 s and 10 s: the first
	// space waits long enough for most completions to answer their headers
	// (x-amz-version-id) whole, well inside clients' read timeouts (60 s).
	KeepAliveDelay, KeepAliveInterval time.Duration
	// MaxInFlightPerKey bounds the requests of one access key served at
	// once, so that one client (or a leaked presigned URL) cannot take
	// every slot. Requests beyond it wait like those beyond MaxInFlight.
	// Default MaxInFlight/2 (at least 1).
	MaxInFlightPerKey int
	// TransferTimeout and TransferMinBytes set the slowest client served:
	// a request body and a response must each move TransferMinBytes within
	// every TransferTimeout that s3seal waits on the client, or the request
	// is cut (RequestTimeout while reading the body). Defaults 30 s and
	// 16 KiB; a negative TransferTimeout disables the check.
	TransferTimeout  time.Duration
	TransferMinBytes int64
	// Audit, when set, is told of every access decision (audit.go): the
	// audit trail. A request whose decision it cannot record is refused.
	Audit Auditor
	// Region is the object store's region, where s3seal creates buckets:
	// reported by HeadBucket and ListBuckets, and the only
	// LocationConstraint CreateBucket takes. Default us-east-1.
	Region string
}

// Server is the HTTP handler for the S3 API.
type Server struct {
	cfg       Config
	store     ObjectStore
	verifier  *sigv4.Verifier
	router    *mux.Router
	slots     chan struct{}            // one token per request in flight
	keySlots  map[string]chan struct{} // the same, per access key
	lockOps   keyLocks                 // retention and legal-hold changes, per (bucket, key)
	cors      corsCache                // buckets' CORS rules (cors.go)
	lifecycle lifecycleCache           // buckets' lifecycle rules (lifecycle_cache.go)
	creating  sync.Map                 // buckets being created, until their owner is kept (createbucket.go)
}

// New builds the handler.
func New(cfg Config) *Server {
	if len(cfg.Domains) == 0 {
		cfg.Domains = []string{"localhost"}
	}
	for i, d := range cfg.Domains {
		cfg.Domains[i] = strings.ToLower(strings.TrimPrefix(d, "."))
	}
	if cfg.MaxInFlight <= 0 {
		cfg.MaxInFlight = 256
	}
	if cfg.QueueTimeout <= 0 {
		cfg.QueueTimeout = 10 * time.Second
	}
	if cfg.KeepAliveDelay <= 0 {
		cfg.KeepAliveDelay = 10 * time.Second
	}
	if cfg.KeepAliveInterval <= 0 {
		cfg.KeepAliveInterval = 10 * time.Second
	}
	if cfg.MaxInFlightPerKey <= 0 {
		cfg.MaxInFlightPerKey = max(cfg.MaxInFlight/2, 1)
	}
	if cfg.TransferTimeout == 0 {
		cfg.TransferTimeout = 30 * time.Second
	}
	if cfg.Observer == nil {
		cfg.Observer = nopObserver{}
	}
	if cfg.TransferMinBytes <= 0 {
		cfg.TransferMinBytes = 16 << 10
	}
	s := &Server{cfg: cfg, store: cfg.Store, verifier: sigv4.NewVerifier(cfg.Credentials),
		slots: make(chan struct{}, cfg.MaxInFlight), keySlots: map[string]chan struct{}{}}
	for ak := range cfg.Credentials {
		s.keySlots[ak] = make(chan struct{}, cfg.MaxInFlightPerKey)
	}
	if cfg.AllowAnonymous {
		s.keySlots[""] = make(chan struct{}, cfg.MaxInFlightPerKey) // every anonymous request (anonymous.go)
	}
	s.router = s.routes()
	return s
}

func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	id := newRequestID()
	w.Header().Set("x-amz-request-id", id)
	w.Header().Set("x-amz-id-2", id)
	w.Header().Set("Server", "s3seal")
	if r.ContentLength == 0 && strings.EqualFold(r.Header.Get("Expect"), "100-continue") {
		// net/http sends "100 Continue" when a handler first reads the body;
		// an empty body is never read, so the final answer would come alone,
		// on a connection kept open. botocore then keeps that early answer's
		// status line for the connection's next request and hangs reading
		// its answer. Answer as S3 does: 100 Continue first.
		w.WriteHeader(http.StatusContinue)
	}
	ri := &reqInfo{credentials: s.store.CheckCredentials}
	// However many backend calls the request makes, the store's stalls
	// cost it at most 2.5 backend timeouts in all (sealstore.WithStallBudget).
	r = r.WithContext(context.WithValue(sealstore.WithStallBudget(reqid.With(r.Context(), id)), infoKey{}, ri))
	guard := newTransferGuard(w, r, s.cfg.TransferTimeout, s.cfg.TransferMinBytes)
	body := r.Body
	r.Body = guard.body(r.Body)
	defer guard.finish(r.Body)
	var in *countingBody
	if r.Body != nil && r.Body != http.NoBody {
		in = &countingBody{ReadCloser: r.Body}
		r.Body = in
	}
	w = guard.writer(w)
	sw := &statusWriter{ResponseWriter: w, status: http.StatusOK}
	ctx := r.Context()
	// Access log at debug level: no query string (presigned URLs carry
	// signatures) and no headers (they carry credentials).
	slog.DebugContext(ctx, "request", "method", r.Method, "path", r.URL.Path, "remote", r.RemoteAddr)
	defer func() {
		slog.DebugContext(ctx, "response", "status", sw.status, "ms", time.Since(start).Milliseconds())
		if ri.op == "" {
			return // /healthz, /readyz, /metrics
		}
		var nIn int64
		if in != nil {
			nIn = in.n
		}
		if sw.status >= 400 && in != nil {
			lingerAfterRefusal(w, r, body, r.ContentLength-in.n)
		}
		if ri.integrity.Load() {
			s.cfg.Observer.IntegrityFailure()
		}
		s.cfg.Observer.Request(ri.op, sw.status, nIn, sw.n, time.Since(start))
	}()
	s.actualCORS(sw, r)
	if op, err := s.shapeError(r); err != nil {
		ri.op = op
		writeError(sw, r, err)
		return
	}
	s.router.ServeHTTP(sw, r)
}

// statusWriter remembers the status a handler wrote and counts the bytes,
// for the access log and metrics.
type statusWriter struct {
	http.ResponseWriter
	status int
	n      int64
}

func (w *statusWriter) Write(p []byte) (int, error) {
	n, err := w.ResponseWriter.Write(p)
	w.n += int64(n)
	return n, err
}

func (w *statusWriter) WriteHeader(code int) {
	if code >= 200 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

// Unwrap lets http.ResponseController reach the connection.
func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// request is one authenticated S3 request with its target resolved.
type request struct {
	w           http.ResponseWriter
	r           *http.Request
	bucket, key string
	auth        *sigv4.Result
	cred        Credential
	who         access.Principal // whom the request acts as (anonymous when unsigned)
	// boundTo, when set, is the content the request was allowed on: the
	// object record that allowed it was written for that content
	// (sealstore.Record.For), and the request may act on no other
	// (sealstore.ReadInput.ContentID).
	boundTo string
}

// bucketNeed is what an operation needs of its bucket in the credential's lists.
type bucketNeed int

const (
	accService bucketNeed = iota // no bucket (ListBuckets filters by itself)
	accRead
	accWrite
)

// handler is an S3 operation. It writes its own success response and
// returns an error for everything else, which is rendered in one place.
type handler func(*request) error

// serve wraps an operation with authentication, the bucket access check
// and error rendering.
func (s *Server) serve(op string, need bucketNeed, h handler) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		bucket, key := s.target(r)
		ri := infoFrom(r.Context())
		if ri != nil {
			ri.op, ri.bucket = op, bucket
		}
		if sigv4.Anonymous(r) {
			s.serveAnonymous(w, r, op, bucket, key, h)
			return
		}
		res, err := s.verifier.Verify(r)
		if err == nil {
			err = checkPayloadMode(op, res)
		}
		if err != nil {
			writeError(w, r, s.auditRefusal(r, access.Principal{}, op, bucket, key, ruleSignature, err))
			return
		}
		if ri != nil {
			ri.accessKey = res.AccessKey
		}
		release, err := s.acquire(r, res.AccessKey)
		if err != nil {
			writeError(w, r, err)
			return
		}
		defer release()
		if res.Body != nil {
			r.Body = res.Body
		}
		cred := s.cfg.Credentials[res.AccessKey]
		if err := cred.check(need, bucket); err != nil {
			writeError(w, r, s.auditRefusal(r, cred.principal(), op, bucket, key, ruleCredLists, err))
			return
		}
		req := &request{w: w, r: r, bucket: bucket, key: key, auth: res, cred: cred, who: cred.principal()}
		if err := checkExpectedOwner(r, res.AccessKey); err != nil {
			writeError(w, r, s.auditRefusal(r, req.who, op, bucket, key, ruleExpectedOwner, err))
			return
		}
		if err := s.authorize(req, op); err != nil {
			writeError(w, r, s.refusedReadErr(req, op, err))
			return
		}
		if err := h(req); err != nil {
			writeError(w, r, s.missingKeyErr(req, op, err))
		}
	}
}

// acquire waits for a slot of the access key, then for a request slot,
// up to QueueTimeout in all or the client going away. Verify reads no body,
// so nothing is buffered before a slot is held.
func (s *Server) acquire(r *http.Request, accessKey string) (release func(), err error) {
	t := time.NewTimer(s.cfg.QueueTimeout)
	defer t.Stop()
	take := func(slots chan struct{}, msg string) error {
		select {
		case slots <- struct{}{}:
			return nil
		default:
		}
		s.cfg.Observer.SlotWait()
		select {
		case slots <- struct{}{}:
			return nil
		case <-t.C:
			return s3err.New(s3err.SlowDown, msg)
		case <-r.Context().Done():
			return r.Context().Err()
		}
	}
	key := s.keySlots[accessKey]
	if err := take(key, "s3seal is serving its maximum number of requests for this access key; please retry"); err != nil {
		return nil, err
	}
	if err := take(s.slots, "s3seal is serving its maximum number of requests; please retry"); err != nil {
		<-key
		return nil, err
	}
	s.cfg.Observer.InFlight(1)
	return func() { s.cfg.Observer.InFlight(-1); <-s.slots; <-key }, nil
}

// target resolves the bucket and key a request addresses.
func (s *Server) target(r *http.Request) (bucket, key string) {
	path := strings.TrimPrefix(r.URL.Path, "/")
	if b := s.hostBucket(r.Host); b != "" {
		return b, path
	}
	bucket, key, _ = strings.Cut(path, "/")
	return bucket, key
}

// hostBucket returns the bucket named by a virtual-hosted-style Host, or "".
func (s *Server) hostBucket(host string) string {
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	host = strings.ToLower(host)
	for _, d := range s.cfg.Domains {
		if b, ok := strings.CutSuffix(host, "."+d); ok && b != "" {
			return b
		}
	}
	return ""
}

func newRequestID() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return strings.ToUpper(hex.EncodeToString(b[:]))
}
