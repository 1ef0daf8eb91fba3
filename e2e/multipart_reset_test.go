package e2e

import (
	"bytes"
	"io"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
)

// resetRelay is a TCP relay that resets, once, the connection that carries
// a request whose request line contains match, after after more bytes of
// it went through: a connection reset in the middle of a request body,
// which the fault proxy (it reads whole bodies) cannot produce.
type resetRelay struct {
	ln     net.Listener
	target string
	match  string
	after  int
	armed  atomic.Bool
	fired  atomic.Bool
	wg     sync.WaitGroup
}

func startResetRelay(t *testing.T, target, match string, after int) *resetRelay {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	r := &resetRelay{ln: ln, target: strings.TrimPrefix(target, "http://"), match: match, after: after}
	r.armed.Store(true)
	go r.serve()
	t.Cleanup(func() { ln.Close(); r.wg.Wait() })
	return r
}

func (r *resetRelay) URL() string { return "http://" + r.ln.Addr().String() }

func (r *resetRelay) serve() {
	for {
		c, err := r.ln.Accept()
		if err != nil {
			return
		}
		r.wg.Add(1)
		go func() { defer r.wg.Done(); r.relay(c.(*net.TCPConn)) }()
	}
}

func (r *resetRelay) relay(c *net.TCPConn) {
	u, err := net.Dial("tcp", r.target)
	if err != nil {
		c.Close()
		return
	}
	up := u.(*net.TCPConn)
	reset := func() {
		_ = c.SetLinger(0)
		_ = up.SetLinger(0)
		c.Close()
		up.Close()
	}
	go func() { _, _ = io.Copy(c, up); c.Close() }()
	buf := make([]byte, 32<<10)
	var tail []byte
	left := -1 // bytes until the reset, once the request was seen
	for {
		n, err := c.Read(buf)
		chunk := buf[:n]
		if left < 0 && r.armed.Load() {
			win := append(tail, chunk...)
			if i := bytes.Index(win, []byte(r.match)); i >= 0 && r.armed.CompareAndSwap(true, false) {
				left = r.after + len(win) - i
			}
			tail = append([]byte(nil), win[max(0, len(win)-len(r.match)):]...)
		}
		if left >= 0 {
			if n >= left {
				_, _ = up.Write(chunk[:left])
				r.fired.Store(true)
				reset()
				return
			}
			left -= n
		}
		if n > 0 {
			if _, werr := up.Write(chunk); werr != nil {
				reset()
				return
			}
		}
		if err != nil {
			up.CloseWrite()
			return
		}
	}
}

// TestMultipartPartBodyReset: the backend connection is reset after 1 MiB
// of part 2's body; s3seal sends the part again and the upload succeeds
// with the right bytes.
func TestMultipartPartBodyReset(t *testing.T) {
	t.Parallel()
	cfg, fp := embeddedBehindProxy(t)
	rr := startResetRelay(t, fp.URL(), "?partNumber=2&uploadId=", mib)
	p := startS3seal(t, sealOpts{Backend: &motoServer{Endpoint: rr.URL()},
		Args: append([]string{"--backend-access-key", cfg.AccessKey, "--backend-secret-key", cfg.SecretKey}, fastRetries...)})
	c := sdkFor(t, p)
	mustCreateBucket(t, c, "mpreset")
	parts := []mpPart{{1, patternBytes(950, 5*mib)}, {2, patternBytes(951, 3*mib)}}
	etag := mpUpload(t, c, "mpreset", "obj", parts)
	if !rr.fired.Load() {
		t.Fatal("the relay never reset part 2's connection")
	}
	checkObject(t, c, "mpreset", "obj", joinParts(parts), etag)
	// The cut attempt never reached the proxy whole; the retry did, once.
	wantSameResends(t, fp, 2, 1)
	if log := p.Log(); !strings.Contains(log, "retrying backend call") || !strings.Contains(log, "part=2 attempt=1") {
		t.Errorf("no retry of part 2 in the log:\n%s", log)
	}
}
