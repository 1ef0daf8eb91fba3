package e2e

import (
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"

	"github.com/s3seal/s3seal/backend"
	"github.com/s3seal/s3seal/backend/embedded"
	"github.com/s3seal/s3seal/internal/faultproxy"
)

// embeddedBehindProxy starts an embedded store in the test process and a
// fault proxy in front of it; it returns the store's configuration (for
// its credentials) and the proxy.
func embeddedBehindProxy(t *testing.T) (backend.S3Config, *faultproxy.Proxy) {
	t.Helper()
	emb, err := embedded.Start(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { emb.Close() })
	fp, err := faultproxy.Start(emb.Endpoint())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { fp.Close() })
	return emb.Config(), fp
}

// motoBehindProxy starts moto and a fault proxy in front of it; it
// returns both, the proxy's URL being the endpoint to give s3seal.
func motoBehindProxy(t *testing.T) (*motoServer, *faultproxy.Proxy) {
	t.Helper()
	m := startMoto(t)
	fp, err := faultproxy.Start(m.Endpoint)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { fp.Close() })
	return m, fp
}

// motoBehindHandler serves h in front of m on a loopback port: h sees
// each request first and calls forward to pass it on to moto (with moto's
// Host), or answers it itself. It returns the store to give s3seal.
func motoBehindHandler(t *testing.T, m *motoServer, h func(w http.ResponseWriter, r *http.Request, forward func())) *motoServer {
	t.Helper()
	target, _ := url.Parse(m.Endpoint)
	rp := httputil.NewSingleHostReverseProxy(target)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h(w, r, func() {
			r.Host = target.Host
			rp.ServeHTTP(w, r)
		})
	})}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	return &motoServer{Endpoint: "http://" + ln.Addr().String()}
}

// startFaulty runs s3seal against an embedded store in the test process
// behind a fault proxy, and returns both.
func startFaulty(t *testing.T) (*sealProc, *faultproxy.Proxy) {
	t.Helper()
	cfg, fp := embeddedBehindProxy(t)
	p := startS3seal(t, sealOpts{
		Backend: &motoServer{Endpoint: fp.URL()},
		// Later flags win: the embedded store's own credentials.
		Args: []string{"--backend-access-key", cfg.AccessKey, "--backend-secret-key", cfg.SecretKey},
	})
	return p, fp
}

// A backend PUT that the store performed but answered with a 200 <Error>,
// then one whose answer was cut: s3seal retries with the same ciphertext
// and the client sees one clean success.
func TestFaultsPutRetriedWithSameBytes(t *testing.T) {
	p, fp := startFaulty(t)
	c := sdkFor(t, p)
	mustCreateBucket(t, c, "faults")
	fp.Reset() // count from here: CreateBucket PUTs the bucket's owner document
	fp.Inject(faultproxy.Rule{Op: faultproxy.PutObject, Attempt: 1, Fault: faultproxy.ForwardThenErrorInBody},
		faultproxy.Rule{Op: faultproxy.PutObject, Attempt: 2, Fault: faultproxy.ForwardThenCut})
	body := patternBytes(7, 300_000)
	putObj(t, c, "faults", "obj", body)
	puts := fp.Requests(faultproxy.PutObject)
	if len(puts) != 3 {
		t.Fatalf("backend saw %d PUTs, want 3", len(puts))
	}
	for i, r := range puts[1:] {
		if r.BodySHA256 != puts[0].BodySHA256 {
			t.Fatalf("attempt %d sent other ciphertext than the first", i+2)
		}
	}
	if got := getObj(t, c, "faults", "obj"); !bytes.Equal(got, body) {
		t.Fatal("object read back differs")
	}
	if log := p.Log(); !strings.Contains(log, "retrying backend call") || !strings.Contains(log, "operation=PutObject") {
		t.Fatalf("no retry event in the log:\n%s", log)
	}
}

// A backend that keeps answering SlowDown: s3seal gives up after its
// attempts and answers a transient error the client retries.
func TestFaultsGiveUpIsTransient(t *testing.T) {
	p, fp := startFaulty(t)
	c := sdkFor(t, p)
	mustCreateBucket(t, c, "faults")
	putObj(t, c, "faults", "obj", []byte("hello"))
	fp.Reset() // count from here: the set-up read the bucket's documents
	fp.Inject(faultproxy.Rule{Op: faultproxy.GetObject, Fault: faultproxy.SlowDown})
	_, err := c.GetObject(ctxT(t), &s3.GetObjectInput{Bucket: aws.String("faults"), Key: aws.String("obj")})
	wantStatus(t, "GET while the backend slows down", err, 503, "SlowDown")
	if n := len(fp.Requests(faultproxy.GetObject)); n != 4 {
		t.Fatalf("backend saw %d GETs, want 4 (one per attempt, no SDK retries)", n)
	}
}

// TestCutRangedReadOfOldMultipartVersion: a store that cuts its GET
// answers mid-body while a client reads a range across the part boundary
// of an OLD multipart version (the current one is a small single PUT).
// Never wrong bytes. One cut of the first backend GET, before s3seal sent
// anything, is not a 500 integrity failure (crypto takes a truncated
// stream as damage): sealstore reads a first block that fails to verify
// once more. A store that cuts every answer still gets an error.
func TestCutRangedReadOfOldMultipartVersion(t *testing.T) {
	t.Parallel()
	_, fp := motoBehindProxy(t)
	const b = "cutoldmp"
	_, c := startWithBucket(t, sealOpts{Backend: &motoServer{Endpoint: fp.URL()}}, mustCreateVersionedBucket, b)
	ctx := ctxT(t)
	p1 := make([]byte, 5<<20)
	for i := range p1 {
		p1[i] = byte(i * 7)
	}
	p2 := bytes.Repeat([]byte("second part "), 1000)
	cm, err := c.CreateMultipartUpload(ctx, &s3.CreateMultipartUploadInput{Bucket: aws.String(b), Key: aws.String("k")})
	if err != nil {
		t.Fatal(err)
	}
	var parts []types.CompletedPart
	for i, d := range [][]byte{p1, p2} {
		up, err := c.UploadPart(ctx, &s3.UploadPartInput{Bucket: aws.String(b), Key: aws.String("k"), UploadId: cm.UploadId,
			PartNumber: aws.Int32(int32(i + 1)), Body: bytes.NewReader(d)})
		if err != nil {
			t.Fatal(err)
		}
		parts = append(parts, types.CompletedPart{ETag: up.ETag, PartNumber: aws.Int32(int32(i + 1))})
	}
	done, err := c.CompleteMultipartUpload(ctx, &s3.CompleteMultipartUploadInput{Bucket: aws.String(b), Key: aws.String("k"), UploadId: cm.UploadId,
		MultipartUpload: &types.CompletedMultipartUpload{Parts: parts}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String(b), Key: aws.String("k"), Body: bytes.NewReader([]byte("current"))}); err != nil {
		t.Fatal(err)
	}
	whole := append(append([]byte{}, p1...), p2...)
	lo, hi := len(p1)-70000, len(p1)+5000
	want := whole[lo : hi+1]
	for _, rule := range []faultproxy.Rule{
		{Op: faultproxy.GetObject, Attempt: 1, Fault: faultproxy.ForwardThenCut},
		{Op: faultproxy.GetObject, Attempt: 2, Fault: faultproxy.ForwardThenCut},
		{Op: faultproxy.GetObject, Attempt: 3, Fault: faultproxy.ForwardThenCut},
		{Op: faultproxy.GetObject, Fault: faultproxy.ForwardThenCut},
		{Op: faultproxy.GetObject, Attempt: 2, Fault: faultproxy.ForwardThenErrorInBody},
	} {
		fp.Reset()
		fp.Inject(rule)
		out, err := c.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(b), Key: aws.String("k"), VersionId: done.VersionId,
			Range: aws.String(fmt.Sprintf("bytes=%d-%d", lo, hi))})
		if err != nil {
			// Only a store that cuts every answer may make the read fail
			// (and then it must fail, never give other bytes).
			if rule.Attempt != 0 {
				t.Errorf("rule %+v: error %v; store saw %+v", rule, err, fp.Requests(faultproxy.GetObject))
			}
			continue
		}
		if rule.Attempt == 0 && rule.Fault == faultproxy.ForwardThenCut {
			got, _ := io.ReadAll(out.Body)
			out.Body.Close()
			if !bytes.HasPrefix(want, got) {
				t.Errorf("rule %+v: every answer cut, yet %d bytes not a prefix of the range", rule, len(got))
			}
			continue
		}
		got, rerr := io.ReadAll(out.Body)
		out.Body.Close()
		switch {
		case rerr != nil && bytes.HasPrefix(want, got):
			t.Logf("rule %+v: body cut after %d right bytes: %v", rule, len(got), rerr)
		case rerr != nil:
			t.Errorf("rule %+v: %d bytes then %v, and they are NOT a prefix of the range", rule, len(got), rerr)
		case !bytes.Equal(got, want):
			t.Errorf("rule %+v: 200 with %d bytes, not the range's %d (wrong bytes)", rule, len(got), len(want))
		default:
			t.Logf("rule %+v: right bytes", rule)
		}
	}
}
