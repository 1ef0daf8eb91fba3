package e2e

import (
	"bytes"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

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
	fp.Inject(faultproxy.Rule{Op: faultproxy.GetObject, Fault: faultproxy.SlowDown})
	_, err := c.GetObject(ctxT(t), &s3.GetObjectInput{Bucket: aws.String("faults"), Key: aws.String("obj")})
	wantStatus(t, "GET while the backend slows down", err, 503, "SlowDown")
	if n := len(fp.Requests(faultproxy.GetObject)); n != 4 {
		t.Fatalf("backend saw %d GETs, want 4 (one per attempt, no SDK retries)", n)
	}
}
