package faultproxy

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
)

// outcome names what a client saw of one request: the status, and "error"
// when a 200 carried an <Error> body.
func outcome(t *testing.T, method, url string) string {
	t.Helper()
	resp, body, err := do(t, method, url, "body")
	if err != nil {
		return "cut"
	}
	if resp.StatusCode == 200 && strings.Contains(body, "<Error>") {
		return "200-error"
	}
	return fmt.Sprint(resp.StatusCode)
}

var chaosTestShapes = []Shape{
	{PutObject, ForwardThenErrorInBody, 1}, {PutObject, SlowDown, 1}, {PutObject, ServerError, 1},
	{GetObject, SlowDown, 1}, {GetObject, ServerError, 2},
}

// runChaos sends n PUTs and n GETs through a proxy in chaos mode with
// seed, PUTs first or alternating, and returns what each operation's
// requests saw, in order.
func runChaos(t *testing.T, seed uint64, n int, alternate bool) (puts, gets []string, st ChaosStats) {
	t.Helper()
	p := startProxy(t, newOrigin(t))
	p.Chaos(ChaosConfig{Seed: seed, Rate: 0.3, Shapes: chaosTestShapes})
	put := func(i int) { puts = append(puts, outcome(t, "PUT", fmt.Sprintf("%s/b/k%d", p.URL(), i))) }
	get := func(i int) { gets = append(gets, outcome(t, "GET", fmt.Sprintf("%s/b/k%d", p.URL(), i))) }
	for i := 0; i < n; i++ {
		put(i)
		if alternate {
			get(i)
		}
	}
	if !alternate {
		for i := 0; i < n; i++ {
			get(i)
		}
	}
	if got := p.Requests(""); len(got) != 0 {
		t.Errorf("chaos mode kept %d requests, want none", len(got))
	}
	return puts, gets, p.ChaosStats()
}

// TestChaosDeterministicForASeed: the same seed gives each operation the
// same faults in the same order, however the operations interleave; another
// seed gives others.
func TestChaosDeterministicForASeed(t *testing.T) {
	puts1, gets1, st1 := runChaos(t, 42, 100, false)
	puts2, gets2, st2 := runChaos(t, 42, 100, true)
	if !slices.Equal(puts1, puts2) || !slices.Equal(gets1, gets2) {
		t.Fatalf("seed 42 twice: different outcomes\nputs %v\n     %v\ngets %v\n     %v", puts1, puts2, gets1, gets2)
	}
	if fmt.Sprint(st1.Faults) != fmt.Sprint(st2.Faults) || st1.Requests != 200 || st1.Total() == 0 {
		t.Fatalf("stats differ or are empty: %+v vs %+v", st1, st2)
	}
	puts3, gets3, _ := runChaos(t, 43, 100, false)
	if slices.Equal(puts1, puts3) && slices.Equal(gets1, gets3) {
		t.Fatal("seeds 42 and 43 gave the same outcomes")
	}
	// What the client saw is what the stats count, shape by shape.
	seen := map[string]int{}
	for _, o := range puts1 {
		seen["PUT "+o]++
	}
	for _, o := range gets1 {
		seen["GET "+o]++
	}
	want := map[string]int{
		"PUT 200-error": st1.Faults[ShapeCount{PutObject, ForwardThenErrorInBody}],
		"PUT 503":       st1.Faults[ShapeCount{PutObject, SlowDown}],
		"PUT 500":       st1.Faults[ShapeCount{PutObject, ServerError}],
		"GET 503":       st1.Faults[ShapeCount{GetObject, SlowDown}],
		"GET 500":       st1.Faults[ShapeCount{GetObject, ServerError}],
	}
	for k, n := range want {
		if seen[k] != n {
			t.Errorf("%s: client saw %d, stats count %d", k, seen[k], n)
		}
	}
}

// TestChaosRate: over many requests the share faulted is the rate, within
// five standard deviations, and every shape of the operation is drawn.
func TestChaosRate(t *testing.T) {
	p := startProxy(t, newOrigin(t))
	const n, rate = 2000, 0.1
	p.Chaos(ChaosConfig{Seed: 7, Rate: rate, Shapes: chaosTestShapes})
	for i := 0; i < n; i++ {
		outcome(t, "GET", p.URL()+"/b/k")
	}
	st := p.ChaosStats()
	sd := math.Sqrt(n * rate * (1 - rate))
	if got := float64(st.Total()); math.Abs(got-n*rate) > 5*sd || st.Requests != n {
		t.Fatalf("%d faults of %d requests at rate %v, want %v ± %.0f", st.Total(), st.Requests, rate, n*rate, 5*sd)
	}
	slow, srv := st.Faults[ShapeCount{GetObject, SlowDown}], st.Faults[ShapeCount{GetObject, ServerError}]
	if slow == 0 || srv == 0 || len(st.Faults) != 2 {
		t.Fatalf("faults by shape %v, want both GET shapes and nothing else", st.Faults)
	}
	// ServerError has twice SlowDown's weight.
	if r := float64(srv) / float64(slow); r < 1.3 || r > 3 {
		t.Errorf("ServerError/SlowDown = %d/%d, want about 2", srv, slow)
	}
	// An operation without shapes is never faulted nor counted.
	for i := 0; i < 50; i++ {
		if o := outcome(t, "HEAD", p.URL()+"/b/k"); o != "200" {
			t.Fatalf("HEAD without shapes: %s", o)
		}
	}
	if got := p.ChaosStats().Requests; got != n {
		t.Fatalf("requests counted %d, want %d", got, n)
	}
}

// TestChaosCompleteThenGone: the completion is forwarded and answered 200
// with an <Error>; from then on every request of that upload id is 404
// NoSuchUpload without reaching the store, as on a store that completed it.
// Other uploads are untouched.
func TestChaosCompleteThenGone(t *testing.T) {
	o := newOrigin(t)
	p := startProxy(t, o)
	p.Chaos(ChaosConfig{Seed: 1, Rate: 1, Shapes: []Shape{{CompleteMultipartUpload, CompleteThenGone, 1}}})
	if got := outcome(t, "POST", p.URL()+"/b/k?uploadId=u1"); got != "200-error" {
		t.Fatalf("first completion: %s, want 200-error", got)
	}
	if n := len(o.requests()); n != 1 {
		t.Fatalf("store saw %d requests, want the completion", n)
	}
	for _, r := range []struct{ method, target string }{{"POST", "/b/k?uploadId=u1"}, {"GET", "/b/k?uploadId=u1"}, {"DELETE", "/b/k?uploadId=u1"}} {
		resp, body, err := do(t, r.method, p.URL()+r.target, "")
		if err != nil || resp.StatusCode != 404 || !strings.Contains(body, "<Code>NoSuchUpload</Code>") {
			t.Fatalf("%s %s after the completion: %v %v %s", r.method, r.target, resp, err, body)
		}
	}
	if n := len(o.requests()); n != 1 {
		t.Fatalf("store saw %d requests, want only the first completion", n)
	}
	// Another upload's completion is forwarded.
	if got := outcome(t, "POST", p.URL()+"/b/k?uploadId=u2"); got != "200-error" || len(o.requests()) != 2 {
		t.Fatalf("other upload: %s, store saw %d", got, len(o.requests()))
	}
	st := p.ChaosStats()
	if st.Faults[ShapeCount{CompleteMultipartUpload, CompleteThenGone}] != 2 || st.GoneAnswers != 3 {
		t.Fatalf("stats %+v", st)
	}
}

// TestChaosCompleteThenGoneOnlyAfterSuccess: a completion the store
// refused does not make its upload gone.
func TestChaosCompleteThenGoneOnlyAfterSuccess(t *testing.T) {
	o := newOrigin(t)
	o.reply = "<Error><Code>InvalidPart</Code></Error>"
	p := startProxy(t, o)
	p.Chaos(ChaosConfig{Seed: 1, Rate: 1, Shapes: []Shape{{CompleteMultipartUpload, CompleteThenGone, 1}}})
	outcome(t, "POST", p.URL()+"/b/k?uploadId=u1")
	outcome(t, "POST", p.URL()+"/b/k?uploadId=u1")
	if n := len(o.requests()); n != 2 {
		t.Fatalf("store saw %d completions, want 2", n)
	}
}

// TestChaosRulesWinAndResetEnds: a programmed rule takes its request
// before chaos draws; Reset turns chaos off.
func TestChaosRulesWinAndResetEnds(t *testing.T) {
	p := startProxy(t, newOrigin(t))
	p.Chaos(ChaosConfig{Seed: 1, Rate: 1, Shapes: []Shape{{GetObject, ServerError, 1}}})
	p.Inject(Rule{Op: GetObject, Attempt: 1, Fault: SlowDown})
	if got := outcome(t, "GET", p.URL()+"/b/k"); got != "503" {
		t.Fatalf("rule: %s", got)
	}
	if got := outcome(t, "GET", p.URL()+"/b/k"); got != "500" {
		t.Fatalf("chaos: %s", got)
	}
	p.Reset()
	if got := outcome(t, "GET", p.URL()+"/b/k"); got != "200" {
		t.Fatalf("after Reset: %s", got)
	}
	if st := p.ChaosStats(); st.Total() != 0 {
		t.Fatalf("stats after Reset: %+v", st)
	}
}

// TestDefaultShapes: only what a real store answers to each operation: no
// 200-<Error> to a read, no forwarded-then-failed upload creation; stalls
// only when asked for, at a lower weight.
func TestDefaultShapes(t *testing.T) {
	for _, stalls := range []bool{false, true} {
		nStalls := 0
		for _, s := range DefaultShapes(stalls) {
			switch s.Fault {
			case ForwardThenErrorInBody, CompleteThenGone, ErrorInBody:
				if !slices.Contains([]Op{PutObject, UploadPart, UploadPartCopy, CopyObject, CompleteMultipartUpload}, s.Op) {
					t.Errorf("%s on %s: no store answers that", s.Fault, s.Op)
				}
			}
			if s.Op == CreateMultipartUpload && (s.Fault == ForwardThenCut || s.Fault == ForwardThenErrorInBody || s.Fault == ForwardThenStall) {
				t.Errorf("%s on CreateMultipartUpload leaves an upload no one knows", s.Fault)
			}
			if s.Fault == CompleteThenGone && s.Op != CompleteMultipartUpload {
				t.Errorf("CompleteThenGone on %s", s.Op)
			}
			if s.Fault.IsStall() {
				nStalls++
				if !stalls {
					t.Errorf("stall %s on %s without stalls", s.Fault, s.Op)
				}
				if s.Weight >= 10 {
					t.Errorf("stall %s on %s at weight %d, want below the others' 10", s.Fault, s.Op, s.Weight)
				}
			}
		}
		if stalls && nStalls == 0 {
			t.Error("no stall shapes with stalls on")
		}
	}
	// Each operation of a multipart upload and a read has shapes.
	for _, op := range []Op{PutObject, UploadPart, UploadPartCopy, CompleteMultipartUpload, GetObject, HeadObject, ListObjects} {
		if !slices.ContainsFunc(DefaultShapes(false), func(s Shape) bool { return s.Op == op }) {
			t.Errorf("no shape for %s", op)
		}
	}
}

// TestChaosForgetsCompletedUploads: in chaos mode a completion the store
// accepted, even one answered untouched, makes its upload gone: its retry
// is NoSuchUpload, not moto's second completion. A faulted completion the
// store never saw leaves the upload alive.
func TestChaosForgetsCompletedUploads(t *testing.T) {
	o := newOrigin(t)
	p := startProxy(t, o)
	p.Chaos(ChaosConfig{Seed: 1, Rate: 0})
	if got := outcome(t, "POST", p.URL()+"/b/k?uploadId=u1"); got != "200" {
		t.Fatalf("completion: %s", got)
	}
	resp, body, err := do(t, "POST", p.URL()+"/b/k?uploadId=u1", "")
	if err != nil || resp.StatusCode != 404 || !strings.Contains(body, "<Code>NoSuchUpload</Code>") || len(o.requests()) != 1 {
		t.Fatalf("second completion: %v %v %s; store saw %d", resp, err, body, len(o.requests()))
	}
	p.Chaos(ChaosConfig{Seed: 1, Rate: 1, Shapes: []Shape{{CompleteMultipartUpload, SlowDown, 1}}})
	if got := outcome(t, "POST", p.URL()+"/b/k?uploadId=u2"); got != "503" {
		t.Fatalf("SlowDown completion: %s", got)
	}
	p.Reset()
	if got := outcome(t, "POST", p.URL()+"/b/k?uploadId=u2"); got != "200" || len(o.requests()) != 2 {
		t.Fatalf("completion after a SlowDown: %s; store saw %d", got, len(o.requests()))
	}
}

// TestChaosReachesBucketDocuments: chaos mode faults s3seal's bucket
// documents as any other request (a soak run exercises their failures);
// only the programmed rules and counts leave them out.
func TestChaosReachesBucketDocuments(t *testing.T) {
	p := startProxy(t, newOrigin(t))
	p.Chaos(ChaosConfig{Seed: 1, Rate: 1, Shapes: []Shape{{PutObject, ServerError, 1}, {GetObject, ServerError, 1}}})
	for _, m := range []string{"PUT", "GET"} {
		if got := outcome(t, m, p.URL()+"/b/.s3seal/bucket/owner"); got != "500" {
			t.Errorf("%s of a bucket document under chaos at rate 1: %s, want 500", m, got)
		}
	}
	if st := p.ChaosStats(); st.Total() != 2 {
		t.Errorf("chaos drew %d faults, want 2", st.Total())
	}
}
