package retry

import (
	"bytes"
	"context"
	"crypto/sha256"
	"io"
	"testing"

	"github.com/s3seal/s3seal/backend"
	"github.com/s3seal/s3seal/backend/embedded"
	"github.com/s3seal/s3seal/internal/faultproxy"
)

// proxied returns the SDK client (one attempt per call, with the given
// timeouts) to the embedded store through a fault proxy, and the proxy.
func proxied(t *testing.T, timeouts ...backend.Timeouts) (*faultproxy.Proxy, *backend.S3) {
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
	cfg := emb.Config()
	cfg.Endpoint = fp.URL()
	cfg.MaxAttempts = 1
	if len(timeouts) > 0 {
		cfg.Timeouts = timeouts[0]
	}
	raw, err := backend.NewS3(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := raw.CreateBucket(context.Background(), "bkt"); err != nil {
		t.Fatal(err)
	}
	return fp, raw
}

func TestStorePutSurvivesCutAndErrorBody(t *testing.T) {
	fp, raw := proxied(t)
	fp.Inject(faultproxy.Rule{Op: faultproxy.PutObject, Attempt: 1, Fault: faultproxy.ForwardThenCut},
		faultproxy.Rule{Op: faultproxy.PutObject, Attempt: 2, Fault: faultproxy.ErrorInBody})
	st := NewStore(raw, Policies{Default: fast})
	data := bytes.Repeat([]byte("sealed"), 20000)
	if _, err := st.PutObject(context.Background(), backend.PutInput{Bucket: "bkt", Key: "k", Body: bytes.NewReader(data), Size: int64(len(data))}); err != nil {
		t.Fatal(err)
	}
	puts := fp.Requests(faultproxy.PutObject)
	if len(puts) != 3 {
		t.Fatalf("%d PUTs, want 3", len(puts))
	}
	for i, r := range puts {
		if r.BodySHA256 != sha256.Sum256(data) {
			t.Fatalf("attempt %d sent other bytes", i+1)
		}
	}
}

func TestReadSourceResumesAfterCutGETs(t *testing.T) {
	fp, raw := proxied(t)
	st := NewStore(raw, Policies{Default: fast, SourceRead: fast})
	data := make([]byte, 200_000)
	for i := range data {
		data[i] = byte(i % 251)
	}
	if _, err := st.PutObject(context.Background(), backend.PutInput{Bucket: "bkt", Key: "src", Body: bytes.NewReader(data), Size: int64(len(data))}); err != nil {
		t.Fatal(err)
	}
	fp.Inject(faultproxy.Rule{Op: faultproxy.GetObject, Attempt: 1, Fault: faultproxy.ForwardThenCut},
		faultproxy.Rule{Op: faultproxy.GetObject, Attempt: 2, Fault: faultproxy.ForwardThenCut})
	r := st.(SourceReader).ReadSource(context.Background(), backend.GetInput{Bucket: "bkt", Key: "src"}, int64(len(data)))
	got, err := io.ReadAll(r)
	r.Close()
	if err != nil || !bytes.Equal(got, data) {
		t.Fatalf("err=%v, %d bytes, equal=%v", err, len(got), bytes.Equal(got, data))
	}
	if n := len(fp.Requests(faultproxy.GetObject)); n != 3 {
		t.Fatalf("%d GETs, want 3 (two cut, resumed each time)", n)
	}
}

func TestReadSourceRefusesAnotherVersion(t *testing.T) {
	// The source is overwritten after the first GET broke: the reopen is
	// pinned to the first ETag and fails instead of splicing versions.
	fp, raw := proxied(t)
	st := NewStore(raw, Policies{Default: fast, SourceRead: fast})
	put := func(b []byte) {
		if _, err := st.PutObject(context.Background(), backend.PutInput{Bucket: "bkt", Key: "src", Body: bytes.NewReader(b), Size: int64(len(b))}); err != nil {
			t.Fatal(err)
		}
	}
	v1 := bytes.Repeat([]byte("1"), 100_000)
	put(v1)
	fp.Inject(faultproxy.Rule{Op: faultproxy.GetObject, Attempt: 1, Fault: faultproxy.ForwardThenCut})
	r := st.(SourceReader).ReadSource(context.Background(), backend.GetInput{Bucket: "bkt", Key: "src"}, int64(len(v1)))
	defer r.Close()
	buf := make([]byte, 1000)
	if _, err := io.ReadFull(r, buf); err != nil {
		t.Fatal(err)
	}
	put(bytes.Repeat([]byte("2"), 100_000))
	got, err := io.ReadAll(r)
	if backend.ErrorCode(err) != "PreconditionFailed" || bytes.ContainsRune(got, '2') {
		t.Fatalf("err=%v, read %d more bytes (spliced: %v)", err, len(got), bytes.ContainsRune(got, '2'))
	}
}
