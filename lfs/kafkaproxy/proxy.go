// Package kafkaproxy serves the Kafka protocol to ordinary producers and
// consumers: s3seal stands in for the whole cluster (the only broker, the
// leader of every partition, every coordinator), stores the value of each
// produced record marked LFS_BLOB through the LFS module (sealed), sends
// the brokers the envelope instead, and forwards everything else to the
// broker that owns it. Requests and responses are encoded and decoded by
// franz-go's kmsg; brokers are reached through lfs/brokers.
package kafkaproxy

import (
	"context"
	"crypto/tls"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
	"golang.org/x/sync/semaphore"

	"github.com/s3seal/s3seal/lfs"
	"github.com/s3seal/s3seal/lfs/brokers"
)

// Defaults of Config.
const (
	DefaultMaxRequest  = 64 << 20
	DefaultMaxInFlight = 8
	DefaultWait        = 10 * time.Second
	// nodeID is the broker id s3seal gives itself in Metadata and
	// FindCoordinator answers.
	nodeID = 0
	// maxHeaders bounds the headers of one record.
	maxHeaders = 10000
)

// Config configures a Proxy. Blobs, Brokers and Advertise are required.
type Config struct {
	Blobs   *lfs.Handler
	Brokers *brokers.Forwarder
	// Advertise is the host:port clients are told to connect to.
	Advertise string
	// TLS, when set, is the listener's TLS toward clients.
	TLS *tls.Config
	// SASL, when set, requires clients to authenticate first.
	SASL *SASLConfig
	// MayUse reports whether the client authenticated as principal ("":
	// anonymous) may produce to and consume from topic. Nil: any topic.
	MayUse func(principal, topic string) bool
	// MaxRequest bounds one request; a larger one closes the connection,
	// as a broker past socket.request.max.bytes does. Default 64 MiB.
	MaxRequest int
	// MaxInFlight bounds the requests held at once: memory is at most
	// MaxRequest times MaxInFlight for requests (the buffers of requests
	// read and of large ones kept for the next, buffers.go), and as much
	// again for the answers (Fetch sizes are capped at MaxRequest).
	// Default 8.
	MaxInFlight int
	// Wait is how long a request waits for room before its connection is
	// closed. Default 10 s.
	Wait   time.Duration
	Logger *slog.Logger
}

// Proxy is the Kafka listener.
type Proxy struct {
	cfg     Config
	log     *slog.Logger
	budget  *semaphore.Weighted // bytes of requests received and not yet answered
	bufs    *bufs               // buffers of past requests, for the next
	metrics *Metrics
	txns    *txnBook
	adv     struct {
		host string
		port int32
	}

	mu    sync.Mutex
	conns map[net.Conn]struct{}
	ln    net.Listener
	done  bool
	wg    sync.WaitGroup
}

// New checks cfg and returns a Proxy.
func New(cfg Config) (*Proxy, error) {
	if cfg.Blobs == nil || cfg.Brokers == nil || cfg.Advertise == "" {
		return nil, errors.New("kafkaproxy: Blobs, Brokers and Advertise are required")
	}
	if cfg.MaxRequest <= 0 {
		cfg.MaxRequest = DefaultMaxRequest
	}
	if cfg.MaxInFlight <= 0 {
		cfg.MaxInFlight = DefaultMaxInFlight
	}
	if cfg.Wait <= 0 {
		cfg.Wait = DefaultWait
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	budget := int64(cfg.MaxRequest) * int64(cfg.MaxInFlight)
	p := &Proxy{cfg: cfg, log: cfg.Logger, budget: semaphore.NewWeighted(budget), bufs: newBufs(budget),
		metrics: newMetrics(), txns: newTxnBook(), conns: map[net.Conn]struct{}{}}
	host, port, err := splitHostPort(cfg.Advertise)
	if err != nil {
		return nil, fmt.Errorf("kafkaproxy: advertised address %q: %w", cfg.Advertise, err)
	}
	p.adv.host, p.adv.port = host, port
	return p, nil
}

// Metrics returns the listener's collectors.
func (p *Proxy) Metrics() *Metrics { return p.metrics }

// Serve accepts connections on ln until Close.
func (p *Proxy) Serve(ln net.Listener) error {
	if p.cfg.TLS != nil {
		ln = tls.NewListener(ln, p.cfg.TLS)
	}
	p.mu.Lock()
	if p.done {
		p.mu.Unlock()
		return net.ErrClosed
	}
	p.ln = ln
	p.mu.Unlock()
	for {
		nc, err := ln.Accept()
		if err != nil {
			p.mu.Lock()
			done := p.done
			p.mu.Unlock()
			if done {
				return nil
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				time.Sleep(10 * time.Millisecond)
				continue
			}
			return err
		}
		p.mu.Lock()
		if p.done {
			p.mu.Unlock()
			nc.Close()
			return nil
		}
		p.conns[nc] = struct{}{}
		p.wg.Add(1)
		p.mu.Unlock()
		go func() {
			defer p.wg.Done()
			p.serveConn(nc)
			p.mu.Lock()
			delete(p.conns, nc)
			p.mu.Unlock()
		}()
	}
}

// Close stops accepting, closes every connection and waits for their
// requests to end.
func (p *Proxy) Close() error {
	p.mu.Lock()
	p.done = true
	if p.ln != nil {
		p.ln.Close()
	}
	for c := range p.conns {
		c.Close()
	}
	p.mu.Unlock()
	p.wg.Wait()
	p.bufs.close()
	return nil
}

// conn is one client connection. Requests are served one after another,
// in the order they came: a producer's pipelined batches reach the brokers
// in its order, which idempotence needs.
type conn struct {
	p         *Proxy
	nc        net.Conn
	principal string
	authed    bool
	sasl      *saslExchange
	clientID  string
}

// idleTimeout closes a connection that sends nothing (Kafka's
// connections.max.idle.ms is 10 minutes); preAuthIdle one that has not
// authenticated yet, so that connections nobody authenticates on do not
// linger.
const (
	idleTimeout = 10 * time.Minute
	preAuthIdle = 30 * time.Second
)

func (p *Proxy) serveConn(nc net.Conn) {
	defer nc.Close()
	c := &conn{p: p, nc: nc, authed: p.cfg.SASL == nil}
	p.metrics.connections.Inc()
	defer p.metrics.connections.Dec()
	for {
		idle := idleTimeout
		if !c.authed {
			idle = preAuthIdle
		}
		_ = nc.SetReadDeadline(time.Now().Add(idle))
		var size [4]byte
		if _, err := io.ReadFull(nc, size[:]); err != nil {
			return
		}
		n := int64(int32(binary.BigEndian.Uint32(size[:])))
		limit := int64(p.cfg.MaxRequest)
		if !c.authed {
			limit = maxPreAuthRequest
		}
		least := int64(8) // a request header
		if c.rawSASL() {
			least = 0 // a raw SASL token
		}
		if n < least || n > limit {
			p.log.Warn("kafka listener: request size out of bounds; closing the connection",
				"client", nc.RemoteAddr().String(), "size", n, "max", limit)
			p.metrics.refused.WithLabelValues("too_large").Inc()
			return
		}
		body, held, ok := c.readBody(n)
		if ok {
			ok = c.serveOne(body)
		}
		p.bufs.give(body)
		p.budget.Release(held)
		if !ok {
			return
		}
	}
}

// serveOne answers one request; false ends the connection.
func (c *conn) serveOne(body []byte) bool {
	if c.rawSASL() {
		return c.saslRaw(body)
	}
	h, req, err := parseRequest(body)
	if err != nil {
		c.p.log.Info("kafka listener: bad request; closing the connection", "client", c.nc.RemoteAddr().String(), "err", err)
		if h.key == kmsg.ApiVersions.Int16() && errors.Is(err, errVersion) {
			// What a broker does for a version it does not know: answer
			// v0 with UNSUPPORTED_VERSION and the versions it takes.
			h.version = 0
			return c.write(h, c.p.apiVersions(context.Background(), nil, 35)) == nil
		}
		return false
	}
	if h.clientID != nil {
		c.clientID = *h.clientID
	}
	if !c.authed && !preAuth(h.key) {
		c.p.log.Info("kafka listener: request before SASL authentication; closing the connection",
			"client", c.nc.RemoteAddr().String(), "api", kmsg.NameForKey(h.key))
		c.p.metrics.refused.WithLabelValues("unauthenticated").Inc()
		return false
	}
	start := time.Now()
	resp, keep := c.handle(req)
	c.p.metrics.requests.WithLabelValues(kmsg.NameForKey(h.key)).Inc()
	c.p.metrics.duration.WithLabelValues(kmsg.NameForKey(h.key)).Observe(time.Since(start).Seconds())
	if resp == nil {
		return keep // acks=0 produce: no answer
	}
	if err := c.write(h, resp); err != nil {
		return false
	}
	return keep
}

// preAuth reports the requests served before SASL authentication.
func preAuth(key int16) bool {
	switch kmsg.Key(key) {
	case kmsg.ApiVersions, kmsg.SASLHandshake, kmsg.SASLAuthenticate:
		return true
	}
	return false
}

// requestTimeout bounds what s3seal does for one request (storing blobs,
// waiting for brokers). Producers must allow it in request.timeout.ms.
const requestTimeout = 5 * time.Minute

// handle answers one request. keep false closes the connection after the
// answer (a failed authentication), or without one (a forward no broker
// answered).
func (c *conn) handle(req kmsg.Request) (kmsg.Response, bool) {
	if n := listed(req); n > maxListed {
		c.p.log.Warn("kafka listener: a request naming too many topics, partitions or groups; closing the connection",
			"client", c.nc.RemoteAddr().String(), "api", kmsg.NameForKey(req.Key()), "named", n, "max", maxListed)
		c.p.metrics.refused.WithLabelValues("too_large").Inc()
		return nil, false
	}
	ctx, cancel := context.WithTimeout(context.Background(), requestTimeout)
	defer cancel()
	switch r := req.(type) {
	case *kmsg.ApiVersionsRequest:
		return c.p.apiVersions(ctx, r, 0), true
	case *kmsg.SASLHandshakeRequest:
		return c.saslHandshake(r), true
	case *kmsg.SASLAuthenticateRequest:
		return c.saslAuthenticate(r)
	case *kmsg.MetadataRequest:
		return c.metadata(ctx, r), true
	case *kmsg.FindCoordinatorRequest:
		return c.p.findCoordinator(r), true
	case *kmsg.ProduceRequest:
		return c.produce(ctx, r), true
	}
	// A forward no broker answered is answered with an error the
	// client retries, or else ends the connection: an answer never
	// written would hold the client until its request timeout.
	resp := c.forward(ctx, req)
	if resp == nil {
		resp = coordinatorUnavailable(req)
	}
	return resp, resp != nil
}

// header is a request's header.
type header struct {
	key, version int16
	corr         int32
	clientID     *string
}

var errVersion = errors.New("unsupported version")

// parseRequest reads the request header (key, version, correlation id,
// client id, and the tag buffer of flexible versions) and has kmsg decode
// the body.
func parseRequest(b []byte) (header, kmsg.Request, error) {
	var h header
	h.key = int16(binary.BigEndian.Uint16(b))
	h.version = int16(binary.BigEndian.Uint16(b[2:]))
	h.corr = int32(binary.BigEndian.Uint32(b[4:]))
	b = b[8:]
	req := kmsg.RequestForKey(h.key)
	if req == nil || !served(h.key) {
		return h, nil, fmt.Errorf("api key %d not served", h.key)
	}
	// A version past the one s3seal lists would be one whose fields it
	// does not route by (topic ids): refused as one kmsg does not know.
	if h.version < 0 || h.version > req.MaxVersion() || (h.key != kmsg.ApiVersions.Int16() && h.version > apis[kmsg.Key(h.key)].max) {
		return h, nil, fmt.Errorf("%w: %s v%d", errVersion, kmsg.NameForKey(h.key), h.version)
	}
	if len(b) < 2 {
		return h, nil, errors.New("short header")
	}
	if l := int16(binary.BigEndian.Uint16(b)); l >= 0 {
		if len(b) < 2+int(l) {
			return h, nil, errors.New("short client id")
		}
		id := string(b[2 : 2+l])
		h.clientID = &id
		b = b[2+l:]
	} else {
		b = b[2:]
	}
	req.SetVersion(h.version)
	if req.IsFlexible() {
		var err error
		if b, err = brokers.SkipTags(b); err != nil {
			return h, nil, err
		}
	}
	if err := req.ReadFrom(b); err != nil {
		return h, nil, fmt.Errorf("decode %s v%d: %w", kmsg.NameForKey(h.key), h.version, err)
	}
	return h, req, nil
}

// write sends resp, answering the request of h.
func (c *conn) write(h header, resp kmsg.Response) error {
	resp.SetVersion(h.version)
	buf := make([]byte, 8, 64)
	binary.BigEndian.PutUint32(buf[4:], uint32(h.corr))
	// Flexible responses carry a tag buffer in the header, except
	// ApiVersions, whose response header is always v0.
	if resp.IsFlexible() && h.key != kmsg.ApiVersions.Int16() {
		buf = append(buf, 0)
	}
	buf = resp.AppendTo(buf)
	binary.BigEndian.PutUint32(buf, uint32(len(buf)-4))
	return c.writeRaw(buf)
}

// writeFrame sends b as one size-prefixed frame (a raw SASL token).
func (c *conn) writeFrame(b []byte) error {
	return c.writeRaw(append(binary.BigEndian.AppendUint32(make([]byte, 0, 4+len(b)), uint32(len(b))), b...))
}

// writeRaw sends buf as it is, within the wait.
func (c *conn) writeRaw(buf []byte) error {
	_ = c.nc.SetWriteDeadline(time.Now().Add(c.p.cfg.Wait + 30*time.Second))
	_, err := c.nc.Write(buf)
	return err
}
