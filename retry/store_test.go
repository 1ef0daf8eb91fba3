package retry

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"sync"
	"testing"

	"github.com/s3seal/s3seal/backend"
	"github.com/s3seal/s3seal/backend/embedded"
)

// flakyStore puts a proxy in front of the embedded store that answers the
// first `faults` object PUTs the way RGW and Hetzner do when they time out:
// 200 OK with an <Error> body, after swallowing the upload.
type flakyStore struct {
	mu     sync.Mutex
	faults int
	bodies [][]byte
}

const errorBody200 = `<?xml version="1.0" encoding="UTF-8"?>
<Error><Code>InternalError</Code><Message>The server did not respond in time.</Message><RequestId>x</RequestId></Error>`

func newFlaky(t *testing.T, faults int) (*flakyStore, backend.Store) {
	t.Helper()
	emb, err := embedded.Start(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { emb.Close() })
	target, _ := url.Parse(emb.Endpoint())
	// SetURL sends the request to target with target's Host.
	rp := &httputil.ReverseProxy{Rewrite: func(r *httputil.ProxyRequest) { r.SetURL(target) }}
	f := &flakyStore{faults: faults}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		isObjectPut := r.Method == http.MethodPut && bytes.Count([]byte(r.URL.Path), []byte("/")) >= 2
		if isObjectPut {
			body, _ := io.ReadAll(r.Body)
			r.Body = io.NopCloser(bytes.NewReader(body))
			f.mu.Lock()
			f.bodies = append(f.bodies, body)
			fail := f.faults > 0
			if fail {
				f.faults--
			}
			f.mu.Unlock()
			if fail {
				w.Header().Set("Content-Type", "application/xml")
				w.WriteHeader(http.StatusOK)
				_, _ = io.WriteString(w, errorBody200)
				return
			}
		}
		rp.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	cfg := emb.Config()
	cfg.Endpoint = srv.URL
	cfg.MaxAttempts = 1 // the retry package owns retries
	st, err := backend.NewS3(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.CreateBucket(context.Background(), "bkt"); err != nil {
		t.Fatal(err)
	}
	return f, st
}

func TestStoreRetriesPutAfter200WithError(t *testing.T) {
	f, raw := newFlaky(t, 2)
	st := Store(raw, fast)
	ctx := context.Background()
	data := bytes.Repeat([]byte("ciphertext"), 10000)
	if _, err := st.PutObject(ctx, backend.PutInput{Bucket: "bkt", Key: "k", Body: bytes.NewReader(data), Size: int64(len(data))}); err != nil {
		t.Fatalf("put with two transient faults: %v", err)
	}
	if len(f.bodies) != 3 {
		t.Fatalf("backend saw %d PUT attempts, want 3", len(f.bodies))
	}
	for i, b := range f.bodies {
		if !bytes.Equal(b, data) {
			t.Fatalf("attempt %d sent %d bytes, not the rewound body", i+1, len(b))
		}
	}
	obj, err := st.GetObject(ctx, backend.GetInput{Bucket: "bkt", Key: "k"})
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(obj.Body)
	obj.Body.Close()
	if !bytes.Equal(got, data) {
		t.Fatal("stored object differs")
	}
}

func TestStoreGivesUpAfterBound(t *testing.T) {
	f, raw := newFlaky(t, 100)
	st := Store(raw, fast)
	data := []byte("x")
	_, err := st.PutObject(context.Background(), backend.PutInput{Bucket: "bkt", Key: "k", Body: bytes.NewReader(data), Size: 1})
	if backend.ErrorCode(err) != "InternalError" {
		t.Fatalf("err = %v, want the InternalError from the body", err)
	}
	if len(f.bodies) != fast.Attempts {
		t.Fatalf("%d attempts, want %d", len(f.bodies), fast.Attempts)
	}
	if _, err := raw.HeadObject(context.Background(), "bkt", "k"); !backend.IsNotFound(err) {
		t.Fatalf("object exists after every attempt failed: %v", err)
	}
}
