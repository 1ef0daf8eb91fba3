package lfs

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/s3seal/s3seal/backend"
	"github.com/s3seal/s3seal/s3api"
)

func downloadBody(env Envelope, mode string) map[string]any {
	return map[string]any{"bucket": env.Bucket, "key": env.Key, "mode": mode,
		"integrity": map[string]any{"sha256": env.SHA256, "checksum_alg": "sha256", "size": env.Size}}
}

func TestDownloadStreamVerifies(t *testing.T) {
	e := newEnv(t)
	_, srv := e.replica(nil)
	for _, n := range []int{1000, 300 << 10} {
		data := randBytes(n, uint64(n))
		env := envelopeOf(t, produce(t, srv.URL, "orders", data, map[string]string{"Content-Type": "text/plain"}))

		a := doJSON(t, "POST", srv.URL+"/lfs/download", downloadBody(env, "stream"))
		if a.status != 200 || !bytes.Equal(a.body, data) || a.header.Get("X-Kafscale-LFS-Checksum") != "sha256="+env.SHA256 ||
			a.header.Get("X-Kafscale-LFS-Content-Length") != jsonInt(n) || a.header.Get("Content-Type") != "text/plain" {
			t.Fatalf("%d: status %d, %d bytes, headers %v", n, a.status, len(a.body), a.header)
		}
		// Without integrity the blob is still authenticated by sealstore.
		if a := doJSON(t, "POST", srv.URL+"/lfs/download", map[string]any{"bucket": env.Bucket, "key": env.Key, "mode": "stream"}); a.status != 200 || !bytes.Equal(a.body, data) {
			t.Fatalf("%d without integrity: %d", n, a.status)
		}

		// A tampered envelope: the size is refused before any byte.
		bad := downloadBody(env, "stream")
		bad["integrity"].(map[string]any)["size"] = env.Size + 1
		if a := doJSON(t, "POST", srv.URL+"/lfs/download", bad); a.status != 502 || a.code(t) != "integrity_failure" {
			t.Fatalf("size: %d %s", a.status, a.body[:min(len(a.body), 200)])
		}
		// A wrong SHA-256 is never a clean success: a small blob gets 502, a
		// larger one a body cut short of its Content-Length.
		bad = downloadBody(env, "stream")
		sha := []byte(env.SHA256)
		if sha[10] == '0' {
			sha[10] = '1'
		} else {
			sha[10] = '0'
		}
		bad["integrity"].(map[string]any)["sha256"] = string(sha)
		b, _ := json.Marshal(bad)
		resp, err := http.Post(srv.URL+"/lfs/download", "application/json", bytes.NewReader(b))
		if err != nil {
			t.Fatal(err)
		}
		got, rerr := io.ReadAll(resp.Body)
		resp.Body.Close()
		if n > holdBack && resp.StatusCode != 200 {
			t.Fatalf("%d: status %d, want the stream cut", n, resp.StatusCode)
		}
		if resp.StatusCode == 200 && rerr == nil {
			t.Fatalf("%d: a blob failing its SHA-256 was served whole (%d bytes)", n, len(got))
		}
		if resp.StatusCode == 200 && int64(len(got)) >= env.Size {
			t.Fatalf("%d: all %d bytes were sent before the check", n, len(got))
		}
		if n <= holdBack && (resp.StatusCode != 502 || !strings.Contains(string(got), "integrity_failure")) {
			t.Fatalf("small blob: %d %s", resp.StatusCode, got)
		}
	}
}

func TestDownloadRequestErrors(t *testing.T) {
	e := newEnv(t)
	_, srv := e.replica(nil)
	for _, tc := range []struct {
		body   map[string]any
		status int
		code   string
	}{
		{map[string]any{"bucket": "lfs"}, 400, "invalid_request"},
		{map[string]any{"bucket": "other", "key": "default/t/lfs/x", "mode": "stream"}, 400, "invalid_bucket"},
		{map[string]any{"bucket": "lfs", "key": "/default/t", "mode": "stream"}, 400, "invalid_key"},
		{map[string]any{"bucket": "lfs", "key": "default/../x", "mode": "stream"}, 400, "invalid_key"},
		{map[string]any{"bucket": "lfs", "key": "other/t/lfs/x", "mode": "stream"}, 400, "invalid_key"},
		{map[string]any{"bucket": "lfs", "key": ".s3seal/uploads/x", "mode": "stream"}, 400, "invalid_key"},
		{map[string]any{"bucket": "lfs", "key": "default/t/lfs/x", "mode": "copy"}, 400, "invalid_mode"},
		{map[string]any{"bucket": "lfs", "key": "default/t/lfs/x", "mode": "stream"}, 404, "object_not_found"},
		{map[string]any{"bucket": "lfs", "key": "default/t/lfs/x", "mode": "presign"}, 400, "invalid_mode"}, // not configured
	} {
		if a := doJSON(t, "POST", srv.URL+"/lfs/download", tc.body); a.status != tc.status || a.code(t) != tc.code {
			t.Fatalf("%v: %d %s", tc.body, a.status, a.body)
		}
	}
}

// Presign mode hands out a URL to s3seal's own S3 API, which serves the
// plaintext.
func TestDownloadPresignToOwnS3API(t *testing.T) {
	e := newEnv(t)
	s3srv := httptest.NewServer(s3api.New(s3api.Config{Store: e.store(), Credentials: s3api.Credentials{
		"lfs-reader": {AccessKey: "lfs-reader", SecretKey: "lfs-reader-secret", Read: []string{testBucket}}}}))
	t.Cleanup(s3srv.Close)
	_, srv := e.replica(func(c *Config) {
		c.Presign = &PresignConfig{Endpoint: s3srv.URL, AccessKey: "lfs-reader", SecretKey: "lfs-reader-secret"}
	})
	data := randBytes(70_000, 8)
	env := envelopeOf(t, produce(t, srv.URL, "orders", data, nil))
	a := doJSON(t, "POST", srv.URL+"/lfs/download", map[string]any{"bucket": env.Bucket, "key": env.Key, "mode": "presign", "expires_seconds": 60})
	var out struct {
		Mode, URL string
		ExpiresAt string `json:"expires_at"`
	}
	if err := json.Unmarshal(a.body, &out); err != nil || a.status != 200 || out.Mode != "presign" || !strings.HasPrefix(out.URL, s3srv.URL+"/lfs/") {
		t.Fatalf("%d %s", a.status, a.body)
	}
	if !strings.Contains(out.URL, "X-Amz-Expires=60") {
		t.Fatalf("expiry not applied: %s", out.URL)
	}
	resp, err := http.Get(out.URL)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !bytes.Equal(got, data) {
		t.Fatalf("presigned GET: %d, %d bytes", resp.StatusCode, len(got))
	}
}

// TestSwappedOrTamperedBlobNeverClean: a hostile backend swaps blob
// ciphertexts (with their metadata) between two keys, or flips a byte;
// stream download of blobs just under and over the 64 KiB hold-back is
// never a clean success with Go's client.
func TestSwappedOrTamperedBlobNeverClean(t *testing.T) {
	for _, size := range []int{holdBack - 1, holdBack, holdBack + 1, 3*holdBack + 5} {
		for _, attack := range []string{"swap", "flip-last", "flip-first", "truncate"} {
			t.Run(fmt.Sprintf("%d/%s", size, attack), func(t *testing.T) {
				e := newEnv(t)
				_, srv := e.replica(nil)
				d1, d2 := randBytes(size, 1), randBytes(size, 2)
				k1 := envelopeOf(t, produce(t, srv.URL, "orders", d1, nil)).Key
				k2 := envelopeOf(t, produce(t, srv.URL, "orders", d2, nil)).Key
				ctx := context.Background()
				get := func(k string) ([]byte, backend.ObjectInfo) {
					o, err := e.be.GetObject(ctx, backend.GetInput{Bucket: testBucket, Key: k})
					if err != nil {
						t.Fatal(err)
					}
					b, _ := io.ReadAll(o.Body)
					o.Body.Close()
					return b, o.Info
				}
				raw, info := get(k2)
				switch attack {
				case "flip-last":
					raw, info = get(k1)
					raw[len(raw)-20] ^= 1
				case "flip-first":
					raw, info = get(k1)
					raw[40] ^= 1
				case "truncate":
					raw, info = get(k1)
					raw = raw[:len(raw)-100]
				}
				if _, err := e.be.PutObject(ctx, backend.PutInput{Bucket: testBucket, Key: k1, Body: bytes.NewReader(raw),
					Size: int64(len(raw)), Meta: info.Meta, Headers: info.Headers}); err != nil {
					t.Fatal(err)
				}
				sum := sha256.Sum256(d1)
				for _, integ := range []map[string]any{nil, {"sha256": hex.EncodeToString(sum[:]), "size": size}} {
					body := map[string]any{"bucket": testBucket, "key": k1, "mode": "stream"}
					if integ != nil {
						body["integrity"] = integ
					}
					b, _ := jsonBody(body)
					resp, err := http.Post(srv.URL+"/lfs/download", "application/json", b)
					if err != nil {
						continue
					}
					got, rerr := io.ReadAll(resp.Body)
					resp.Body.Close()
					if resp.StatusCode == 200 && rerr == nil {
						t.Fatalf("tampered blob (%s) served as a clean 200 of %d bytes (equal to d1: %v, d2: %v)", attack, len(got),
							bytes.Equal(got, d1), bytes.Equal(got, d2))
					}
				}
			})
		}
	}
}

func jsonBody(v any) (io.Reader, error) {
	b, err := json.Marshal(v)
	return bytes.NewReader(b), err
}
