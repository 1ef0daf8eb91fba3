// Package faultproxy is a test-support HTTP reverse proxy that sits in
// front of a real S3 endpoint (the embedded gofakes3 store, moto_server)
// and injects the failures flaky object stores produce: a 200 whose body is
// an <Error>, before or after the backend did the work; a connection cut
// mid-answer; delays; 503 SlowDown; 404 NoSuchUpload; stalls (no answer,
// an upload no longer read, a body that stops mid-stream, a body dripped a
// byte at a time). Faults are programmed
// per S3 operation and per attempt (the n-th request of that operation,
// optionally of one part number), or drawn at random from a seed at a
// given rate (Chaos, for soak runs). It is imported only by tests.
//
// The proxy rewrites the Host header to the target's. SigV4 signs the Host
// the client addressed (the proxy), so a target that verifies signatures
// (AWS, MinIO, Ceph) would refuse the forwarded requests; the embedded
// store (which checks the access key and its own Host, not the signature)
// and moto_server do not verify them, and those are the targets it is for.
// Requests must be path-style.
package faultproxy

import (
	"bytes"
	"crypto/sha256"
	"encoding/xml"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Fault is what the proxy does to a matching request.
type Fault int

const (
	// ErrorInBody answers 200 with an <Error> body without forwarding:
	// the backend never saw the request.
	ErrorInBody Fault = iota + 1
	// ForwardThenErrorInBody forwards the request, then replaces the
	// answer with 200 and an <Error> body: the backend did the work, the
	// client is told it failed (complete-then-error).
	ForwardThenErrorInBody
	// ForwardThenCut forwards the request, then sends the status line,
	// the headers and half the answer's body, and closes the connection
	// (at once, with no answer at all, when the body is empty).
	ForwardThenCut
	// Delay waits Rule.Delay (or until the client goes away), then
	// forwards.
	Delay
	// SlowDown answers 503 SlowDown without forwarding.
	SlowDown
	// NoSuchUpload answers 404 NoSuchUpload without forwarding.
	NoSuchUpload
	// Stall reads the request and never answers, without forwarding: a
	// store that accepts connections and stops working. It holds the
	// connection until the client goes away or the proxy is closed.
	Stall
	// ForwardThenStall forwards the request, then never answers: the
	// store did the work and its answer never comes.
	ForwardThenStall
	// StallReading reads half the request body (all of it when there is
	// none) and then stops reading, without forwarding: a store that stops
	// taking an upload's bytes.
	StallReading
	// ForwardThenStallBody forwards the request, sends the status line,
	// the headers and half the answer's body, then sends nothing more and
	// holds the connection open (a GET whose body stops mid-stream).
	ForwardThenStallBody
	// Drip forwards the request and sends the answer's headers, then its
	// body one byte per Rule.Delay (default 1 s): a store on a very slow
	// link, which moves bytes all the time.
	Drip
)

// bucketDocPath begins the key of every request for one of s3seal's
// bucket documents (sealstore.BucketDocPrefix).
const bucketDocPath = ".s3seal/bucket/"

// bucketDoc reports whether a path-style URL path ("/bucket/key") names
// one of s3seal's bucket documents: its key, not only somewhere in it.
func bucketDoc(path string) bool {
	_, key, _ := strings.Cut(strings.TrimPrefix(path, "/"), "/")
	return strings.HasPrefix(key, bucketDocPath)
}

// uncounted is match's seen for a request it neither counted nor
// recorded.
const uncounted = -2

// Rule programs one fault.
type Rule struct {
	Op Op
	// Part, when not 0, matches only requests for that part number, and
	// Attempt then counts that part's requests.
	Part int32
	// Attempt is the n-th matching request (1-based); 0 matches all.
	Attempt int
	// Path, when set, matches only requests for that URL path (path
	// style: "/bucket/key"); Attempt still counts all requests of Op.
	// Requests for s3seal's bucket documents match only a rule that
	// names their path (Attempt is then not counted), and are never
	// counted or recorded (chaos still draws for them).
	Path  string
	Fault Fault
	Delay time.Duration // for Delay and Drip
	// Code and Message of the <Error> body of ErrorInBody and
	// ForwardThenErrorInBody. Default InternalError, "The server did not
	// respond in time."
	Code, Message string
}

// Request is what the proxy saw of one request.
type Request struct {
	Op         Op
	Part       int32
	Attempt    int // n-th request of Op (of Op and Part when Part is set)
	BodySHA256 [32]byte
	BodyLen    int
	Fault      Fault // 0: forwarded untouched
	dropped    bool  // its body never came whole: not a request after all
}

type counterKey struct {
	op   Op
	part int32
}

// Proxy is a running fault-injecting proxy.
type Proxy struct {
	target *url.URL
	srv    *http.Server
	ln     net.Listener
	tr     *http.Transport

	stop      chan struct{} // closed by Close: stalled requests give up
	closeOnce sync.Once
	held      atomic.Int64 // stalled requests whose connection is held now

	mu       sync.Mutex
	rules    []Rule
	counts   map[counterKey]int
	requests []Request
	chaos    *chaos // the seeded random mode, when on (Chaos)
}

// Start serves a proxy to target (an http URL) on a random loopback port.
func Start(target string) (*Proxy, error) {
	u, err := url.Parse(target)
	if err != nil || u.Scheme != "http" || u.Host == "" {
		return nil, fmt.Errorf("faultproxy: target %q is not an http URL", target)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	p := &Proxy{target: u, ln: ln, counts: map[counterKey]int{}, stop: make(chan struct{}),
		tr: &http.Transport{DisableCompression: true, MaxIdleConnsPerHost: 16}}
	p.srv = &http.Server{Handler: p, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = p.srv.Serve(ln) }()
	return p, nil
}

// URL is the proxy's endpoint, e.g. http://127.0.0.1:PORT.
func (p *Proxy) URL() string { return "http://" + p.ln.Addr().String() }

// Close stops the proxy and cuts the connections it holds.
func (p *Proxy) Close() error {
	p.closeOnce.Do(func() { close(p.stop) })
	p.tr.CloseIdleConnections()
	return p.srv.Close()
}

// Held is the number of stalled requests whose connection the proxy holds
// now: a client that went away no longer counts.
func (p *Proxy) Held() int { return int(p.held.Load()) }

// Inject adds rules. A request takes the first rule that matches it.
func (p *Proxy) Inject(rules ...Rule) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.rules = append(p.rules, rules...)
}

// Reset removes every rule, turns chaos off and forgets the requests seen
// and their counts.
func (p *Proxy) Reset() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.rules, p.requests, p.counts, p.chaos = nil, nil, map[counterKey]int{}, nil
}

// Requests returns the requests seen of op, in arrival order (all of them
// when op is "").
func (p *Proxy) Requests(op Op) []Request {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []Request
	for _, r := range p.requests {
		if !r.dropped && (op == "" || r.Op == op) {
			out = append(out, r)
		}
	}
	return out
}

// match counts the request and picks its rule, or, when no rule matches
// and chaos is on, draws its fault; seen is the index of its Request,
// whose body record wants filling in (-1 under chaos: no record kept).
func (p *Proxy) match(req *http.Request, op Op, part int32) (rule Rule, seen int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if bucketDoc(req.URL.Path) {
		// s3seal's bucket documents, which any request may read once its
		// cache is old: rules and counts are for the requests a test
		// drives, so these pass untouched and uncounted, unless a rule
		// names their path. Chaos, which counts nothing, draws for them
		// as for any request: a soak run exercises their failures.
		for _, r := range p.rules {
			if r.Path == req.URL.Path && r.Op == op {
				return r, uncounted
			}
		}
		if p.chaos != nil {
			return Rule{Op: op, Fault: p.chaos.draw(op, req), Delay: p.chaos.cfg.Delay}, uncounted
		}
		return Rule{}, uncounted
	}
	p.counts[counterKey{op, 0}]++
	nOp := p.counts[counterKey{op, 0}]
	nPart := nOp
	if part != 0 {
		p.counts[counterKey{op, part}]++
		nPart = p.counts[counterKey{op, part}]
	}
	for _, r := range p.rules {
		n := nOp
		if r.Part != 0 {
			n = nPart
		}
		if r.Op == op && (r.Part == 0 || r.Part == part) && (r.Attempt == 0 || r.Attempt == n) && (r.Path == "" || r.Path == req.URL.Path) {
			rule = r
			break
		}
	}
	if rule.Fault == 0 && p.chaos != nil {
		rule = Rule{Op: op, Fault: p.chaos.draw(op, req), Delay: p.chaos.cfg.Delay}
	}
	if p.chaos != nil {
		return rule, -1
	}
	attempt := nOp
	if part != 0 {
		attempt = nPart
	}
	p.requests = append(p.requests, Request{Op: op, Part: part, Attempt: attempt, Fault: rule.Fault})
	return rule, len(p.requests) - 1
}

// forget takes back the counting of a request whose body never came whole,
// as if it had not been made: only whole requests count as attempts.
func (p *Proxy) forget(op Op, part int32, seen int) {
	if seen == uncounted {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.counts[counterKey{op, 0}]--
	if part != 0 {
		p.counts[counterKey{op, part}]--
	}
	if seen >= 0 && seen < len(p.requests) { // kept in place: other requests hold their index
		p.requests[seen].dropped = true
	}
}

// record notes the body of the seen-th request.
func (p *Proxy) record(seen int, body []byte) {
	if seen < 0 {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if seen < len(p.requests) { // Reset may have emptied the list meanwhile
		p.requests[seen].BodySHA256, p.requests[seen].BodyLen = sha256.Sum256(body), len(body)
	}
}

// hold keeps a stalled request's connection open, answering nothing, until
// the client goes away or the proxy closes.
func (p *Proxy) hold(r *http.Request) {
	p.held.Add(1)
	defer p.held.Add(-1)
	select {
	case <-r.Context().Done():
	case <-p.stop:
		// Returning would let net/http answer 200 for a handler that
		// wrote nothing, before Close cuts the connection: abort instead.
		panic(http.ErrAbortHandler)
	}
}

// drip sends resp's status and headers, then its body one byte per every
// (1 s when 0), until the body ends or the client goes away.
func (p *Proxy) drip(w http.ResponseWriter, r *http.Request, resp *http.Response, every time.Duration) {
	if every <= 0 {
		every = time.Second
	}
	copyHeader(w.Header(), resp.Header)
	w.WriteHeader(resp.StatusCode)
	w.(http.Flusher).Flush()
	b := make([]byte, 1)
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		n, err := resp.Body.Read(b)
		if n > 0 {
			if _, werr := w.Write(b[:n]); werr != nil {
				return
			}
			w.(http.Flusher).Flush()
		}
		if err != nil {
			return
		}
		select {
		case <-t.C:
		case <-r.Context().Done():
			return
		case <-p.stop:
			return
		}
	}
}

func (p *Proxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	op, part := Classify(r)
	rule, seen := p.match(r, op, part)
	if rule.Fault == StallReading {
		half := r.ContentLength / 2
		if half > 0 {
			_, _ = io.CopyN(io.Discard, r.Body, half)
		}
		p.hold(r)
		return
	}
	body, err := io.ReadAll(r.Body)
	if err != nil {
		p.forget(op, part, seen) // the client broke off: no request came
		return
	}
	p.record(seen, body)
	switch rule.Fault {
	case Stall:
		p.hold(r)
		return
	case ErrorInBody:
		writeError(w, http.StatusOK, rule.code(), rule.message())
		return
	case SlowDown:
		writeError(w, http.StatusServiceUnavailable, "SlowDown", "Please reduce your request rate.")
		return
	case ServerError:
		writeError(w, http.StatusInternalServerError, "InternalError", "We encountered an internal error. Please try again.")
		return
	case NoSuchUpload:
		writeError(w, http.StatusNotFound, "NoSuchUpload", "The specified upload does not exist.")
		return
	case Delay:
		t := time.NewTimer(rule.Delay)
		select {
		case <-t.C:
		case <-r.Context().Done():
			t.Stop()
			return
		}
	}
	resp, err := p.forward(r, body)
	if err != nil {
		writeError(w, http.StatusBadGateway, "BadGateway", "faultproxy: "+err.Error())
		return
	}
	defer resp.Body.Close()
	if op == CompleteMultipartUpload && p.chaosOn() {
		// A real store forgets an upload once it completed it: later
		// requests of it are NoSuchUpload (moto completes it again, or
		// answers 500), whatever the client was told of this answer.
		data, _ := io.ReadAll(resp.Body)
		if resp.StatusCode == http.StatusOK && !bytes.Contains(data, []byte("<Error>")) {
			p.markGone(r.URL.Query().Get("uploadId"))
		}
		resp.Body = io.NopCloser(bytes.NewReader(data))
	}
	switch rule.Fault {
	case ForwardThenErrorInBody:
		_, _ = io.Copy(io.Discard, resp.Body)
		writeError(w, http.StatusOK, rule.code(), rule.message())
	case CompleteThenGone: // the upload is gone already (above)
		writeError(w, http.StatusOK, rule.code(), rule.message())
	case ForwardThenCut:
		cut(w, resp)
	case ForwardThenStall:
		_, _ = io.Copy(io.Discard, resp.Body)
		p.hold(r)
	case ForwardThenStallBody:
		data, _ := io.ReadAll(resp.Body)
		copyHeader(w.Header(), resp.Header)
		w.Header().Set("Content-Length", fmt.Sprint(len(data)))
		w.WriteHeader(resp.StatusCode)
		_, _ = w.Write(data[:len(data)/2])
		w.(http.Flusher).Flush()
		p.hold(r)
	case Drip:
		p.drip(w, r, resp, rule.Delay)
	default:
		copyHeader(w.Header(), resp.Header)
		w.WriteHeader(resp.StatusCode)
		_, _ = io.Copy(w, resp.Body)
	}
}

// forward sends r with body to the target, Host rewritten to the
// target's.
func (p *Proxy) forward(r *http.Request, body []byte) (*http.Response, error) {
	u := *p.target
	u.Path, u.RawPath, u.RawQuery = r.URL.Path, r.URL.RawPath, r.URL.RawQuery
	out, err := http.NewRequestWithContext(r.Context(), r.Method, u.String(), bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	copyHeader(out.Header, r.Header)
	out.Header.Del("Connection")
	out.Host = p.target.Host
	out.ContentLength = int64(len(body))
	if len(body) == 0 {
		out.Body = http.NoBody
	}
	return p.tr.RoundTrip(out)
}

// cut sends the status line, the headers and half the body of resp, then
// closes the connection.
func cut(w http.ResponseWriter, resp *http.Response) {
	data, _ := io.ReadAll(resp.Body)
	hj, ok := w.(http.Hijacker)
	if !ok {
		panic("faultproxy: connection cannot be hijacked")
	}
	if len(data) > 0 {
		copyHeader(w.Header(), resp.Header)
		w.Header().Set("Content-Length", fmt.Sprint(len(data)))
		w.WriteHeader(resp.StatusCode)
		_, _ = w.Write(data[:len(data)/2])
		w.(http.Flusher).Flush()
	}
	conn, buf, err := hj.Hijack()
	if err != nil {
		return
	}
	_ = buf.Flush()
	_ = conn.Close()
}

func copyHeader(dst, src http.Header) {
	for k, vs := range src {
		dst[k] = append([]string(nil), vs...)
	}
}

func (r Rule) code() string {
	if r.Code == "" {
		return "InternalError"
	}
	return r.Code
}

func (r Rule) message() string {
	if r.Message == "" {
		return "The server did not respond in time."
	}
	return r.Message
}

// writeError answers an S3 <Error> document with the given status.
func writeError(w http.ResponseWriter, status int, code, message string) {
	var b bytes.Buffer
	b.WriteString(`<?xml version="1.0" encoding="UTF-8"?>` + "\n<Error><Code>")
	_ = xml.EscapeText(&b, []byte(code))
	b.WriteString("</Code><Message>")
	_ = xml.EscapeText(&b, []byte(message))
	b.WriteString("</Message><RequestId>faultproxy</RequestId></Error>")
	w.Header().Set("Content-Type", "application/xml")
	w.Header().Set("Content-Length", fmt.Sprint(b.Len()))
	w.WriteHeader(status)
	_, _ = w.Write(b.Bytes())
}
