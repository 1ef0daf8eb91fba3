package embedded

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/johannesboyne/gofakes3"

	"github.com/s3seal/s3seal/backend"
)

// secretKey signs requests to the embedded store. gofakes3 verifies
// no signature, so the secret grants nothing; what does is the access key,
// drawn at random on every start and checked by newHandler: another
// local process that finds the loopback port still cannot use the store.
const secretKey = "s3seal-embedded-secret"

// Server is a gofakes3 S3 server over the local file system: objects live
// in <dataDir>/objects (s3afero layout: buckets/<bucket>/<key> and
// metadata/; older versions and delete markers in versions/, see
// versions.go), multipart uploads in progress in <dataDir>/multipart (see
// mpStore), so both survive a restart. It is meant for one s3seal process;
// two processes over one data directory are not coordinated.
type Server struct {
	srv          *http.Server
	endpoint     string
	accessKey    string // random per start; the only key the store accepts
	closeTimeout time.Duration
	served       chan error // Serve's result

	once     sync.Once
	closeErr error
}

// Option configures Start.
type Option func(*config)

type config struct {
	addr         string
	errorLog     *log.Logger
	closeTimeout time.Duration
	minPartSize  int64
}

// WithAddr sets the listen address. Default "127.0.0.1:0" (a random
// free port). Anything but a loopback address exposes an unauthenticated
// store.
func WithAddr(addr string) Option {
	return func(c *config) { c.addr = addr }
}

// WithErrorLog sets the http.Server's error log. Default: the log
// package's standard logger.
func WithErrorLog(l *log.Logger) Option {
	return func(c *config) { c.errorLog = l }
}

// WithCloseTimeout bounds how long Close waits for requests in
// flight before cutting connections. Default 10s.
func WithCloseTimeout(d time.Duration) Option {
	return func(c *config) { c.closeTimeout = d }
}

// WithMinPartSize sets the smallest part but the last that a
// completion takes, S3's 5 MiB by default: for tests of uploads of many
// parts, which would take 5 MiB each.
func WithMinPartSize(n int64) Option {
	return func(c *config) { c.minPartSize = n }
}

// Start creates <dataDir>/objects and <dataDir>/multipart (mode
// 0700) if needed and serves
// the store from it on a new listener. It fails if the directory cannot be
// created or the address cannot be bound; on success the server runs until
// Close.
func Start(dataDir string, opts ...Option) (*Server, error) {
	cfg := config{addr: "127.0.0.1:0", closeTimeout: 10 * time.Second, minPartSize: minPartSize}
	for _, o := range opts {
		o(&cfg)
	}
	if dataDir == "" {
		return nil, errors.New("backend: embedded store needs a data directory")
	}
	root, err := filepath.Abs(filepath.Join(dataDir, "objects"))
	if err != nil {
		return nil, fmt.Errorf("backend: embedded store: %w", err)
	}
	if err := os.MkdirAll(root, 0o700); err != nil {
		return nil, fmt.Errorf("backend: embedded store: %w", err)
	}
	fb, err := newFixedBackend(root)
	if err != nil {
		return nil, fmt.Errorf("backend: embedded store: %w", err)
	}
	mp, err := newMPStore(filepath.Join(dataDir, "multipart"), fb)
	if err != nil {
		return nil, fmt.Errorf("backend: embedded store: %w", err)
	}
	mp.minPartSize = cfg.minPartSize
	attrs, err := newAttrStore(filepath.Join(dataDir, "attrs"))
	if err != nil {
		return nil, fmt.Errorf("backend: embedded store: %w", err)
	}
	ln, err := net.Listen("tcp", cfg.addr)
	if err != nil {
		return nil, fmt.Errorf("backend: embedded store: %w", err)
	}
	var token [16]byte
	if _, err := rand.Read(token[:]); err != nil {
		ln.Close()
		return nil, fmt.Errorf("backend: embedded store: %w", err)
	}
	// gofakes3 counts every X-Amz-* request header (date, payload hash,
	// checksums) with the user metadata against its limit of 2000 bytes,
	// which S3 does not: s3seal's own user metadata, which S3 would take
	// (up to its 2 KB of keys and values: crypto.MaxObjectMeta), would be
	// refused. The limit here only bounds what one request can make the
	// store keep.
	faker := gofakes3.New(fb, gofakes3.WithAutoBucket(false), gofakes3.WithMetadataSizeLimit(8<<10))
	host := ln.Addr().String()
	e := &Server{
		accessKey: "s3seal-" + hex.EncodeToString(token[:]),
		srv: &http.Server{
			ReadHeaderTimeout: 30 * time.Second,
			IdleTimeout:       2 * time.Minute,
			ErrorLog:          cfg.errorLog,
		},
		endpoint: "http://" + host,
		served:   make(chan error, 1),
	}
	e.srv.Handler = newHandler(host, e.accessKey, mp, attrs, faker.Server())
	e.closeTimeout = cfg.closeTimeout
	go func() { e.served <- e.srv.Serve(ln) }()
	return e, nil
}

// Endpoint is the store's base URL, "http://127.0.0.1:<port>".
func (e *Server) Endpoint() string { return e.endpoint }

// Config returns an S3Config that reaches this store (path style, this
// start's access key, default region).
func (e *Server) Config() backend.S3Config {
	return backend.S3Config{
		Endpoint:  e.endpoint,
		AccessKey: e.accessKey,
		SecretKey: secretKey,
		PathStyle: true,
	}
}

// Close stops accepting connections and waits for requests in flight, up
// to the close timeout, after which remaining connections are cut and the
// timeout is reported. Later calls return the first result.
func (e *Server) Close() error {
	e.once.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), e.closeTimeout)
		defer cancel()
		err := e.srv.Shutdown(ctx)
		if err != nil {
			e.srv.Close()
			err = fmt.Errorf("backend: embedded store shutdown: %w", err)
		}
		if serr := <-e.served; serr != nil && !errors.Is(serr, http.ErrServerClosed) {
			err = errors.Join(err, serr)
		}
		e.closeErr = err
	})
	return e.closeErr
}

// NewStore starts an embedded store on dataDir (see Start)
// and returns an S3 Store pointed at it, with the io.Closer that stops the
// server. It fails as Start does.
func NewStore(dataDir string, opts ...Option) (backend.Store, io.Closer, error) {
	e, err := Start(dataDir, opts...)
	if err != nil {
		return nil, nil, err
	}
	st, err := backend.NewS3(e.Config())
	if err != nil {
		e.Close()
		return nil, nil, err
	}
	return st, e, nil
}

// Buckets returns the names of the buckets an embedded store in dataDir
// holds, read from its files without starting it (none when there is no
// store there yet). s3seal asks before it makes a development key: a
// store with buckets was sealed under a key given before.
func Buckets(dataDir string) ([]string, error) {
	entries, err := os.ReadDir(filepath.Join(dataDir, "objects", "buckets"))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []string
	for _, e := range entries {
		if e.IsDir() {
			out = append(out, e.Name())
		}
	}
	return out, nil
}
