package sealstore

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"testing"

	"github.com/s3seal/s3seal/backend"
	"github.com/s3seal/s3seal/backend/embedded"
	"github.com/s3seal/s3seal/crypto"
)

// reshapingStore is the embedded store behind a reverse proxy that changes
// GET answers: chunked drops Content-Length (the answer goes chunked, as
// gateways and compressing proxies send it); noRange drops the Range
// header (a store that ignores ranges answers 200 with the whole object).
func reshapingStore(t *testing.T, chunked, noRange bool) (direct, shaped backend.Store, kr *crypto.Keyring) {
	t.Helper()
	e, err := embedded.Start(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	direct, err = backend.NewS3(e.Config())
	if err != nil {
		t.Fatal(err)
	}
	if err := direct.CreateBucket(context.Background(), bucket); err != nil {
		t.Fatal(err)
	}
	u, _ := url.Parse(e.Config().Endpoint)
	// The proxy forwards the signed request as is (same Host header).
	rp := &httputil.ReverseProxy{Rewrite: func(pr *httputil.ProxyRequest) {
		pr.SetURL(u)
		pr.Out.Host = u.Host
	}}
	rp.ModifyResponse = func(resp *http.Response) error {
		if chunked && resp.Request.Method == http.MethodGet && resp.StatusCode/100 == 2 {
			resp.Header.Del("Content-Length")
			resp.ContentLength = -1
		}
		return nil
	}
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if noRange && r.Method == http.MethodGet {
			r.Header.Del("Range")
		}
		rp.ServeHTTP(w, r)
	})
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	cfg := e.Config()
	cfg.Endpoint = srv.URL
	shaped, err = backend.NewS3(cfg)
	if err != nil {
		t.Fatal(err)
	}
	key, _ := crypto.GenerateKey()
	kr, _ = crypto.NewKeyring("k1", map[string][]byte{"k1": key})
	return direct, shaped, kr
}

// TestGetPlaintextChunkedAnswer: with plaintext reads allowed, a store
// whose GET answer carries no Content-Length (chunked) must not make
// s3seal serve the object as empty: the backend client reads the missing
// length as 0, and the plaintext reader then serves 0 bytes as a clean,
// complete 200.
func TestGetPlaintextChunkedAnswer(t *testing.T) {
	direct, shaped, kr := reshapingStore(t, true, false)
	ctx := context.Background()
	data := bytes.Repeat([]byte("written before s3seal "), 1000)
	if _, err := direct.PutObject(ctx, backend.PutInput{Bucket: bucket, Key: "old", Body: bytes.NewReader(data), Size: int64(len(data))}); err != nil {
		t.Fatal(err)
	}
	st, err := New(Direct(shaped), kr, Options{SpoolDir: t.TempDir(), AllowPlaintextReads: true})
	if err != nil {
		t.Fatal(err)
	}
	info, rd, err := st.Get(ctx, bucket, "old", nil)
	if err != nil {
		t.Logf("get: %v (an error is acceptable; a short clean body is not)", err)
		return
	}
	defer rd.Close()
	got, rerr := io.ReadAll(io.LimitReader(rd, rd.Len))
	if rerr == nil && !bytes.Equal(got, data) {
		t.Fatalf("a chunked answer of a %d-byte plaintext object was served cleanly as %d bytes (info.Size %d, rd.Len %d)",
			len(data), len(got), info.Size, rd.Len)
	}
}

// TestGetSealedChunkedAnswer: a sealed object answered chunked by the
// store is whole and authentic; s3seal must serve it, not report it as
// damaged (a false integrity alarm).
func TestGetSealedChunkedAnswer(t *testing.T) {
	direct, shaped, kr := reshapingStore(t, true, false)
	ctx := context.Background()
	w, _ := New(Direct(direct), kr, Options{SpoolDir: t.TempDir()})
	data := bytes.Repeat([]byte("sealed "), 20000)
	if _, err := w.Put(ctx, PutInput{Bucket: bucket, Key: "k", Body: bytes.NewReader(data), Size: int64(len(data))}); err != nil {
		t.Fatal(err)
	}
	st, _ := New(Direct(shaped), kr, Options{SpoolDir: t.TempDir()})
	_, rd, err := st.Get(ctx, bucket, "k", nil)
	if err != nil {
		t.Fatalf("GET of a whole, authentic object answered chunked: %v (integrity alarm: %v)", err, errors.Is(err, ErrIntegrity))
	}
	defer rd.Close()
	if got, err := io.ReadAll(io.LimitReader(rd, rd.Len)); err != nil || !bytes.Equal(got, data) {
		t.Fatalf("got %d bytes, %v", len(got), err)
	}
}

// TestGetPlaintextRangeIgnored: with plaintext reads allowed, a store
// that ignores Range (200 with the whole object, no Content-Range) must
// not make s3seal serve the object's first bytes as the asked range.
func TestGetPlaintextRangeIgnored(t *testing.T) {
	direct, shaped, kr := reshapingStore(t, false, true)
	ctx := context.Background()
	data := []byte("0123456789abcdefghijklmnopqrstuvwxyz")
	if _, err := direct.PutObject(ctx, backend.PutInput{Bucket: bucket, Key: "old", Body: bytes.NewReader(data), Size: int64(len(data))}); err != nil {
		t.Fatal(err)
	}
	st, _ := New(Direct(shaped), kr, Options{SpoolDir: t.TempDir(), AllowPlaintextReads: true})
	_, rd, err := st.Get(ctx, bucket, "old", &Range{First: 10, Last: 15})
	if err != nil {
		t.Logf("ranged get: %v (an error is acceptable)", err)
		return
	}
	defer rd.Close()
	got, rerr := io.ReadAll(io.LimitReader(rd, rd.Len))
	if rerr == nil && string(got) != "abcdef" {
		t.Fatalf("range 10-15 served cleanly as %q (Off %d Len %d), want \"abcdef\"", got, rd.Off, rd.Len)
	}
}
