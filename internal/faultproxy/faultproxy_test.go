package faultproxy

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestClassify(t *testing.T) {
	cases := []struct {
		method, target string
		copy           bool
		op             Op
		part           int32
	}{
		{"GET", "/", false, ListBuckets, 0},
		{"PUT", "/b", false, CreateBucket, 0},
		{"HEAD", "/b", false, HeadBucket, 0},
		{"DELETE", "/b", false, DeleteBucket, 0},
		{"GET", "/b?location", false, GetBucketLocation, 0},
		{"GET", "/b?list-type=2&prefix=a", false, ListObjects, 0},
		{"GET", "/b/?uploads", false, ListMultipartUploads, 0},
		{"POST", "/b?delete", false, DeleteObjects, 0},
		{"PUT", "/b/k/with/slashes", false, PutObject, 0},
		{"PUT", "/b/k", true, CopyObject, 0},
		{"GET", "/b/k", false, GetObject, 0},
		{"HEAD", "/b/k", false, HeadObject, 0},
		{"DELETE", "/b/k", false, DeleteObject, 0},
		{"POST", "/b/k?uploads", false, CreateMultipartUpload, 0},
		{"PUT", "/b/k?partNumber=7&uploadId=u", false, UploadPart, 7},
		{"PUT", "/b/k?partNumber=3&uploadId=u", true, UploadPartCopy, 3},
		{"POST", "/b/k?uploadId=u", false, CompleteMultipartUpload, 0},
		{"DELETE", "/b/k?uploadId=u", false, AbortMultipartUpload, 0},
		{"GET", "/b/k?uploadId=u&part-number-marker=2", false, ListParts, 0},
		{"PATCH", "/b/k", false, Other, 0},
	}
	for _, c := range cases {
		r := httptest.NewRequest(c.method, c.target, nil)
		if c.copy {
			r.Header.Set("X-Amz-Copy-Source", "/src/obj")
		}
		if op, part := Classify(r); op != c.op || part != c.part {
			t.Errorf("%s %s copy=%v: %s part %d, want %s part %d", c.method, c.target, c.copy, op, part, c.op, c.part)
		}
	}
}

// origin is an httptest backend that records what reaches it.
type origin struct {
	*httptest.Server
	mu    sync.Mutex
	seen  []string // "METHOD /path?query host body"
	reply string
}

func newOrigin(t *testing.T) *origin {
	o := &origin{reply: "<Result>" + strings.Repeat("payload ", 500) + "</Result>"}
	o.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		o.mu.Lock()
		o.seen = append(o.seen, r.Method+" "+r.URL.RequestURI()+" "+r.Host+" "+string(body))
		o.mu.Unlock()
		w.Header().Set("ETag", `"abc"`)
		if r.Method == http.MethodPut || r.Method == http.MethodHead {
			return // bodiless 200, as PutObject and UploadPart answer
		}
		w.Header().Set("Content-Type", "application/xml")
		_, _ = io.WriteString(w, o.reply)
	}))
	t.Cleanup(o.Close)
	return o
}

func (o *origin) requests() []string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return append([]string(nil), o.seen...)
}

func startProxy(t *testing.T, o *origin) *Proxy {
	t.Helper()
	p, err := Start(o.URL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	return p
}

var client = &http.Client{Transport: &http.Transport{}}

func do(t *testing.T, method, url, body string) (*http.Response, string, error) {
	t.Helper()
	return doCtx(t, 10*time.Second, method, url, body)
}

func TestForwardsUntouchedWithTargetHost(t *testing.T) {
	o := newOrigin(t)
	p := startProxy(t, o)
	resp, body, err := do(t, "POST", p.URL()+"/b/k?uploadId=u1", "<CompleteMultipartUpload/>")
	if err != nil || resp.StatusCode != 200 || body != o.reply {
		t.Fatalf("status=%v err=%v body %d bytes", resp, err, len(body))
	}
	host := strings.TrimPrefix(o.URL, "http://")
	if got := o.requests(); len(got) != 1 || got[0] != "POST /b/k?uploadId=u1 "+host+" <CompleteMultipartUpload/>" {
		t.Fatalf("origin saw %q", got)
	}
	reqs := p.Requests(CompleteMultipartUpload)
	if len(reqs) != 1 || reqs[0].Attempt != 1 || reqs[0].Fault != 0 || reqs[0].BodySHA256 != sha256.Sum256([]byte("<CompleteMultipartUpload/>")) {
		t.Fatalf("recorded %+v", reqs)
	}
}

func TestErrorInBodyDoesNotForward(t *testing.T) {
	o := newOrigin(t)
	p := startProxy(t, o)
	p.Inject(Rule{Op: PutObject, Attempt: 1, Fault: ErrorInBody})
	resp, body, err := do(t, "PUT", p.URL()+"/b/k", "data")
	if err != nil || resp.StatusCode != 200 || !strings.Contains(body, "<Code>InternalError</Code><Message>The server did not respond in time.</Message>") {
		t.Fatalf("resp=%v err=%v body=%q", resp, err, body)
	}
	if len(o.requests()) != 0 {
		t.Fatalf("origin saw %q", o.requests())
	}
	// The second attempt is forwarded.
	if resp, _, err := do(t, "PUT", p.URL()+"/b/k", "data"); err != nil || resp.StatusCode != 200 || len(o.requests()) != 1 {
		t.Fatalf("second PUT: resp=%v err=%v origin=%q", resp, err, o.requests())
	}
}

func TestForwardThenErrorInBody(t *testing.T) {
	o := newOrigin(t)
	p := startProxy(t, o)
	p.Inject(Rule{Op: CompleteMultipartUpload, Fault: ForwardThenErrorInBody, Message: "This multipart completion is already in progress"})
	resp, body, err := do(t, "POST", p.URL()+"/b/k?uploadId=u1", "x")
	if err != nil || resp.StatusCode != 200 || !strings.Contains(body, "<Message>This multipart completion is already in progress</Message>") {
		t.Fatalf("resp=%v err=%v body=%q", resp, err, body)
	}
	if len(o.requests()) != 1 {
		t.Fatalf("the backend did not do the work: %q", o.requests())
	}
}

func TestForwardThenCut(t *testing.T) {
	o := newOrigin(t)
	p := startProxy(t, o)
	p.Inject(Rule{Op: GetObject, Fault: ForwardThenCut}, Rule{Op: UploadPart, Fault: ForwardThenCut})
	resp, body, err := do(t, "GET", p.URL()+"/b/k", "")
	if !errors.Is(err, io.ErrUnexpectedEOF) || resp.StatusCode != 200 || body != o.reply[:len(o.reply)/2] {
		t.Fatalf("GET: err=%v resp=%v, %d bytes", err, resp, len(body))
	}
	// A bodiless answer is cut before its status line.
	if _, _, err := do(t, "PUT", p.URL()+"/b/k?partNumber=1&uploadId=u", "part"); err == nil {
		t.Fatal("UploadPart answered despite the cut")
	}
	if len(o.requests()) != 2 {
		t.Fatalf("origin saw %q, want both requests forwarded", o.requests())
	}
}

func TestDelay(t *testing.T) {
	o := newOrigin(t)
	p := startProxy(t, o)
	p.Inject(Rule{Op: HeadObject, Fault: Delay, Delay: 200 * time.Millisecond})
	start := time.Now()
	resp, _, err := do(t, "HEAD", p.URL()+"/b/k", "")
	if err != nil || resp.StatusCode != 200 || time.Since(start) < 200*time.Millisecond || len(o.requests()) != 1 {
		t.Fatalf("resp=%v err=%v after %v", resp, err, time.Since(start))
	}
}

func TestStatusFaults(t *testing.T) {
	o := newOrigin(t)
	p := startProxy(t, o)
	p.Inject(Rule{Op: PutObject, Fault: SlowDown}, Rule{Op: ListParts, Fault: NoSuchUpload})
	resp, body, err := do(t, "PUT", p.URL()+"/b/k", "x")
	if err != nil || resp.StatusCode != 503 || !strings.Contains(body, "<Code>SlowDown</Code>") {
		t.Fatalf("SlowDown: resp=%v err=%v body=%q", resp, err, body)
	}
	resp, body, err = do(t, "GET", p.URL()+"/b/k?uploadId=u", "")
	if err != nil || resp.StatusCode != 404 || !strings.Contains(body, "<Code>NoSuchUpload</Code>") {
		t.Fatalf("NoSuchUpload: resp=%v err=%v body=%q", resp, err, body)
	}
	if len(o.requests()) != 0 {
		t.Fatalf("origin saw %q", o.requests())
	}
}

func TestAttemptsCountedPerPart(t *testing.T) {
	o := newOrigin(t)
	p := startProxy(t, o)
	p.Inject(Rule{Op: UploadPart, Part: 2, Attempt: 2, Fault: SlowDown})
	var codes []int
	for _, part := range []string{"1", "2", "1", "2", "2"} {
		resp, _, err := do(t, "PUT", p.URL()+"/b/k?uploadId=u&partNumber="+part, "part "+part)
		if err != nil {
			t.Fatal(err)
		}
		codes = append(codes, resp.StatusCode)
	}
	if want := []int{200, 200, 200, 503, 200}; !slices.Equal(codes, want) {
		t.Fatalf("statuses %v, want %v (only part 2's second request faulted)", codes, want)
	}
	var attempts []int
	for _, r := range p.Requests(UploadPart) {
		attempts = append(attempts, r.Attempt)
	}
	if want := []int{1, 1, 2, 2, 3}; !slices.Equal(attempts, want) {
		t.Fatalf("attempts %v, want %v", attempts, want)
	}
	// Identical bodies have identical digests.
	reqs := p.Requests(UploadPart)
	if reqs[1].BodySHA256 != reqs[3].BodySHA256 || bytes.Equal(reqs[0].BodySHA256[:], reqs[1].BodySHA256[:]) {
		t.Fatal("body digests do not tell bodies apart")
	}
}

// TestBucketDocumentsPassUncounted: a request for one of s3seal's bucket
// documents (which any request may read once its cache is old) is
// forwarded untouched and neither counted nor recorded, so the rules and
// counts stay those of the requests a test drives; a rule naming its
// path reaches it.
func TestBucketDocumentsPassUncounted(t *testing.T) {
	o := newOrigin(t)
	p := startProxy(t, o)
	p.Inject(Rule{Op: PutObject, Attempt: 1, Fault: ErrorInBody})
	if resp, body, err := do(t, "PUT", p.URL()+"/b/.s3seal/bucket/owner", "doc"); err != nil || resp.StatusCode != 200 || body != "" {
		t.Fatalf("document PUT: resp=%v err=%v body=%q", resp, err, body)
	}
	if n := len(p.Requests(PutObject)); n != 0 || len(o.requests()) != 1 {
		t.Fatalf("document PUT recorded %d times, origin saw %q", n, o.requests())
	}
	// The rule's first attempt is still the first client PUT.
	if _, body, err := do(t, "PUT", p.URL()+"/b/k", "data"); err != nil || !strings.Contains(body, "<Code>InternalError</Code>") {
		t.Fatalf("client PUT: err=%v body=%q, want the rule's fault", err, body)
	}
	p.Inject(Rule{Op: PutObject, Path: "/b/.s3seal/bucket/owner", Fault: ErrorInBody})
	if _, body, err := do(t, "PUT", p.URL()+"/b/.s3seal/bucket/owner", "doc"); err != nil || !strings.Contains(body, "<Code>InternalError</Code>") {
		t.Fatalf("document PUT under a rule naming its path: err=%v body=%q", err, body)
	}
}

// TestObjectKeyNamingDocumentPathFaulted: a client object whose key only
// contains s3seal's document prefix past its start is an ordinary
// request: the rules reach it and it is counted.
func TestObjectKeyNamingDocumentPathFaulted(t *testing.T) {
	o := newOrigin(t)
	p := startProxy(t, o)
	p.Inject(Rule{Op: PutObject, Attempt: 1, Fault: ErrorInBody})
	if _, body, err := do(t, "PUT", p.URL()+"/b/dir/.s3seal/bucket/owner", "data"); err != nil || !strings.Contains(body, "<Code>InternalError</Code>") {
		t.Fatalf("PUT of an object key containing the document prefix: err=%v body=%q, want the rule's fault", err, body)
	}
	if n := len(p.Requests(PutObject)); n != 1 {
		t.Fatalf("recorded %d PUTs, want 1", n)
	}
}
