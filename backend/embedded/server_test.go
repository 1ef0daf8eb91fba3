package embedded

import (
	"bytes"
	"context"
	"crypto/md5"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/s3seal/s3seal/backend"
	"github.com/s3seal/s3seal/backend/internal/storetest"
)

func startEmbedded(t *testing.T, dir string) (*Server, *backend.S3) {
	t.Helper()
	e, err := Start(dir)
	storetest.Must(t, err)
	t.Cleanup(func() { e.Close() })
	st, err := backend.NewS3(e.Config())
	storetest.Must(t, err)
	return e, st
}

func TestEmbeddedSurvivesRestart(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	e, st := startEmbedded(t, dir)
	storetest.Must(t, st.CreateBucket(ctx, "keep"))
	out := storetest.Put(ctx, t, st, "keep", "a/b", []byte("persistent"), map[string]string{"k": "v"}, backend.Headers{CacheControl: "no-store"})
	storetest.Must(t, e.Close())
	if _, err := st.HeadObject(ctx, "keep", "a/b"); err == nil {
		t.Fatal("store still answers after Close")
	}

	_, st = startEmbedded(t, dir)
	obj, err := st.GetObject(ctx, backend.GetInput{Bucket: "keep", Key: "a/b"})
	storetest.Must(t, err)
	if got := string(storetest.ReadAll(t, obj.Body)); got != "persistent" {
		t.Errorf("body after restart = %q", got)
	}
	if obj.Info.ETag != out.ETag || obj.Info.Meta["k"] != "v" || obj.Info.Headers.CacheControl != "no-store" {
		t.Errorf("info after restart = %+v", obj.Info)
	}
}

// TestEmbeddedPutStreams checks that a 64 MiB upload from a file travels
// through the SDK client and the embedded server without being held in
// memory: both run in this process, so TotalAlloc covers both sides.
func TestEmbeddedPutStreams(t *testing.T) {
	if testing.Short() {
		t.Skip("writes 64 MiB twice")
	}
	ctx := context.Background()
	_, st := startEmbedded(t, t.TempDir())
	storetest.Must(t, st.CreateBucket(ctx, "big"))

	const size = 64 << 20
	f, err := os.Create(filepath.Join(t.TempDir(), "big.bin"))
	storetest.Must(t, err)
	defer f.Close()
	h := md5.New()
	chunk := storetest.RandBytes(t, 1<<20)
	for range size >> 20 {
		f.Write(chunk)
		h.Write(chunk)
	}
	sum := h.Sum(nil)

	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	out, err := st.PutObject(ctx, backend.PutInput{
		Bucket: "big", Key: "blob", Body: f, Size: size,
		ContentMD5: base64.StdEncoding.EncodeToString(sum),
	})
	storetest.Must(t, err)
	runtime.ReadMemStats(&after)
	if out.ETag != hex.EncodeToString(sum) {
		t.Errorf("ETag %s, want %x", out.ETag, sum)
	}
	alloc := after.TotalAlloc - before.TotalAlloc
	t.Logf("PUT of %d MiB allocated %.1f MiB in total", size>>20, float64(alloc)/(1<<20))
	if alloc > 8<<20 {
		t.Errorf("PUT of 64 MiB allocated %d bytes: the body is buffered somewhere", alloc)
	}
}

func TestEmbeddedKeysAndCleanup(t *testing.T) {
	ctx := context.Background()
	_, st := startEmbedded(t, t.TempDir())
	storetest.Must(t, st.CreateBucket(ctx, "keys"))
	storetest.Must(t, st.CreateBucket(ctx, "other"))
	storetest.Put(ctx, t, st, "other", "x", []byte("victim"), nil, backend.Headers{})

	// Keys that would alias other paths are refused, not written elsewhere.
	for _, k := range []string{"../other/x", "a/../x", "a/./b/", "a//b", "./a"} {
		_, err := st.PutObject(ctx, backend.PutInput{Bucket: "keys", Key: k, Body: bytes.NewReader([]byte("evil")), Size: 4})
		storetest.WantCode(t, err, "InvalidArgument", 400)
		_, err = st.HeadObject(ctx, "keys", k)
		storetest.WantCode(t, err, "NotFound", 404)
		storetest.Must(t, st.DeleteObject(ctx, "keys", k))
	}
	obj, err := st.GetObject(ctx, backend.GetInput{Bucket: "other", Key: "x"})
	storetest.Must(t, err)
	if got := string(storetest.ReadAll(t, obj.Body)); got != "victim" {
		t.Errorf("other/x = %q", got)
	}

	// Deleting a/b leaves no directory "a" behind that would block key "a".
	storetest.Put(ctx, t, st, "keys", "a/b/c", []byte("1"), nil, backend.Headers{})
	res, err := st.DeleteObjects(ctx, "keys", []string{"a/b/c"})
	storetest.Must(t, err)
	if len(res) != 1 || res[0].Code != "" {
		t.Fatalf("DeleteObjects = %+v", res)
	}
	storetest.Put(ctx, t, st, "keys", "a", []byte("2"), nil, backend.Headers{})
	page, err := st.ListObjects(ctx, backend.ListInput{Bucket: "keys", Delimiter: "/"})
	storetest.Must(t, err)
	if got := storetest.EntryKeys(page.Entries); !slices.Equal(got, []string{"a"}) || len(page.CommonPrefixes) != 0 {
		t.Errorf("listing = %v %v", got, page.CommonPrefixes)
	}
}

// TestEmbeddedInterruptedPutKeepsObject cuts an overwrite short; the old
// object must stay readable and intact.
func TestEmbeddedInterruptedPutKeepsObject(t *testing.T) {
	ctx := context.Background()
	e, st := startEmbedded(t, t.TempDir())
	storetest.Must(t, st.CreateBucket(ctx, "cut"))
	out := storetest.Put(ctx, t, st, "cut", "k", []byte("original"), map[string]string{"v": "1"}, backend.Headers{})

	conn, err := net.Dial("tcp", strings.TrimPrefix(e.Endpoint(), "http://"))
	storetest.Must(t, err)
	fmt.Fprintf(conn, "PUT /cut/k HTTP/1.1\r\nHost: %s\r\nContent-Length: 1000\r\n\r\npartial", strings.TrimPrefix(e.Endpoint(), "http://"))
	time.Sleep(100 * time.Millisecond) // let the server start consuming the body
	conn.Close()

	deadline := time.Now().Add(1500 * time.Millisecond)
	for {
		obj, err := st.GetObject(ctx, backend.GetInput{Bucket: "cut", Key: "k"})
		storetest.Must(t, err)
		got := string(storetest.ReadAll(t, obj.Body))
		if got != "original" || obj.Info.ETag != out.ETag || obj.Info.Meta["v"] != "1" {
			t.Fatalf("after cut PUT: %q etag %s meta %v", got, obj.Info.ETag, obj.Info.Meta)
		}
		if time.Now().After(deadline) {
			break
		}
		time.Sleep(300 * time.Millisecond)
	}
}

func TestEmbeddedHTTPGuards(t *testing.T) {
	ctx := context.Background()
	e, st := startEmbedded(t, t.TempDir())
	storetest.Must(t, st.CreateBucket(ctx, "guard"))
	storetest.Put(ctx, t, st, "guard", "k", []byte("x"), map[string]string{"m": "1"}, backend.Headers{})

	do := func(mod func(*http.Request)) *http.Response {
		req, _ := http.NewRequest(http.MethodHead, e.Endpoint()+"/guard/k", nil)
		req.Header.Set("Authorization", "AWS4-HMAC-SHA256 Credential="+e.Config().AccessKey+
			"/20260101/us-east-1/s3/aws4_request, SignedHeaders=host, Signature=00")
		mod(req)
		resp, err := http.DefaultClient.Do(req)
		storetest.Must(t, err)
		resp.Body.Close()
		return resp
	}
	if r := do(func(r *http.Request) { r.Header.Set("Origin", "https://evil.example") }); r.StatusCode != 403 {
		t.Errorf("request with Origin: %d, want 403", r.StatusCode)
	}
	if r := do(func(r *http.Request) { r.Host = "evil.example" }); r.StatusCode != 403 {
		t.Errorf("request with foreign Host: %d, want 403", r.StatusCode)
	}
	if r := do(func(r *http.Request) { r.Header.Del("Authorization") }); r.StatusCode != 403 {
		t.Errorf("unsigned request: %d, want 403", r.StatusCode)
	}
	if r := do(func(r *http.Request) {
		r.Header.Set("Authorization", "AWS4-HMAC-SHA256 Credential=s3seal-guess/20260101/us-east-1/s3/aws4_request, SignedHeaders=host, Signature=00")
	}); r.StatusCode != 403 {
		t.Errorf("request with another access key: %d, want 403", r.StatusCode)
	}
	if other, _ := startEmbedded(t, t.TempDir()); other.Config().AccessKey == e.Config().AccessKey {
		t.Error("two starts share an access key")
	}
	r := do(func(*http.Request) {})
	if r.StatusCode != 200 || r.Header.Get("X-Amz-Meta-M") != "1" {
		t.Fatalf("plain HEAD: %d %v", r.StatusCode, r.Header)
	}
	// Request headers of the PUT (date, payload hash) are not echoed back.
	for h := range r.Header {
		if strings.HasPrefix(h, "X-Amz-") && !strings.HasPrefix(h, "X-Amz-Meta-") && h != "X-Amz-Request-Id" && h != "X-Amz-Id-2" {
			t.Errorf("HEAD echoes %s: %v", h, r.Header[h])
		}
	}
}
