package lfs

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/s3seal/s3seal/backend/embedded"
	"github.com/s3seal/s3seal/crypto"
	"github.com/s3seal/s3seal/sealstore"
)

// fuzzHandler is a Handler over an embedded store, without a network.
func fuzzHandler(f *testing.F) (*Handler, *sealstore.Store) {
	f.Helper()
	be, closer, err := embedded.NewStore(f.TempDir())
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { closer.Close() })
	key, _ := crypto.GenerateKey()
	kr, err := crypto.NewKeyring("k1", map[string][]byte{"k1": key})
	if err != nil {
		f.Fatal(err)
	}
	if err := be.CreateBucket(context.Background(), testBucket); err != nil {
		f.Fatal(err)
	}
	st, err := sealstore.New(sealstore.Direct(be), kr, sealstore.Options{SpoolDir: f.TempDir(), BackendChecksum: true, OwnerPendingAge: time.Nanosecond})
	if err != nil {
		f.Fatal(err)
	}
	h, err := New(Config{Store: st, Producer: &fakeProducer{}, Keyring: kr, Bucket: testBucket, PartSize: sealstore.MinPartSize,
		Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		f.Fatal(err)
	}
	return h, st
}

// serveJSON sends body to the handler and returns the status and, for an
// error, its code (checked to be a JSON error with a code and message).
func serveJSON(t *testing.T, h *Handler, method, path string, body []byte) (int, string, []byte) {
	t.Helper()
	r := httptest.NewRequest(method, path, bytes.NewReader(body))
	r.Header.Set("Content-Type", "application/json")
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	if w.Code == http.StatusOK {
		return w.Code, "", w.Body.Bytes()
	}
	var e struct{ Code, Message string }
	if err := json.Unmarshal(w.Body.Bytes(), &e); err != nil || e.Code == "" || e.Message == "" {
		t.Fatalf("%.80q: status %d with body %.200q", body, w.Code, w.Body.Bytes())
	}
	return w.Code, e.Code, w.Body.Bytes()
}

// FuzzDownloadRequest: any POST /lfs/download body never panics the
// handler; a refusal is a JSON error with a code, never a 5xx other than
// 502 integrity_failure (the client's size or SHA-256 is not the blob's);
// a download is served only for the configured bucket, a key under the
// namespace with no empty, "." or ".." segment, backslash or NUL, in
// stream mode (presign is not configured here), and only when the
// integrity the client states is the blob's.
func FuzzDownloadRequest(f *testing.F) {
	h, st := fuzzHandler(f)
	const blobKey = "default/t/lfs/2026/01/01/obj-1"
	blob := []byte("hello, fuzz")
	if _, err := st.Put(context.Background(), sealstore.PutInput{Bucket: testBucket, Key: blobKey, Body: bytes.NewReader(blob), Size: int64(len(blob))}); err != nil {
		f.Fatal(err)
	}
	sum := sha256.Sum256(blob)
	hexSum := hex.EncodeToString(sum[:])
	for _, s := range []string{
		`{"bucket":"lfs","key":"` + blobKey + `","mode":"stream"}`,
		`{"bucket":" lfs ","key":" ` + blobKey + ` ","mode":" STREAM ","integrity":{"sha256":"` + strings.ToUpper(hexSum) + `","size":11}}`,
		`{"bucket":"lfs","key":"` + blobKey + `","mode":"stream","integrity":{"sha256":"` + hexSum + `","checksum_alg":"SHA256","size":12}}`,
		`{"bucket":"lfs","key":"` + blobKey + `","mode":"stream","integrity":{"sha256":"00","checksum_alg":"md5"}}`,
		`{"bucket":"lfs","key":"` + blobKey + `","mode":"stream","integrity":{"size":-1}}`,
		`{"bucket":"lfs","key":"` + blobKey + `"}`,
		`{"bucket":"lfs","key":"default/t/../x","mode":"stream"}`,
		`{"bucket":"lfs","key":"default//x","mode":"stream"}`,
		`{"bucket":"lfs","key":"default/x\\y","mode":"stream"}`,
		`{"bucket":"lfs","key":"default/x\u0000","mode":"stream"}`,
		`{"bucket":"lfs","key":".s3seal/x","mode":"stream"}`,
		`{"bucket":"other","key":"default/x","mode":"stream"}`,
		`{"bucket":"lfs","key":"default/x","mode":"copy","expires_seconds":-5}`,
		`{"bucket":1}`, `[]`, `null`, ``, `{"bucket":"lfs"} trailing`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		status, code, _ := serveJSON(t, h, http.MethodPost, "/lfs/download", body)
		if status >= 500 && code != "integrity_failure" {
			t.Fatalf("%.80q: %d %s", body, status, code)
		}
		if status != http.StatusOK {
			return
		}
		var in downloadRequest
		if err := json.NewDecoder(bytes.NewReader(body)).Decode(&in); err != nil {
			t.Fatalf("%.80q: served a body that is no JSON: %v", body, err)
		}
		key := strings.TrimSpace(in.Key)
		if strings.TrimSpace(in.Bucket) != testBucket || key != blobKey || strings.ToLower(strings.TrimSpace(in.Mode)) != "stream" {
			t.Fatalf("%.80q: served", body)
		}
		if in.Integrity != nil {
			if s := strings.ToLower(strings.TrimSpace(in.Integrity.SHA256)); s != "" && s != hexSum {
				t.Fatalf("%.80q: served under a wrong SHA-256", body)
			}
			if in.Integrity.Size != nil && *in.Integrity.Size >= 0 && *in.Integrity.Size != int64(len(blob)) {
				t.Fatalf("%.80q: served under a wrong size", body)
			}
		}
	})
}
