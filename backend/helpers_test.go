package backend

import (
	"bytes"
	"context"
	"crypto/md5"
	"encoding/base64"
	"errors"
	"io"
	"testing"
)

// The helpers of the package's own tests, which cannot import
// internal/storetest (it imports this package); storetest has the same
// ones for the tests that run a store.

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// wantCode checks that err is an *Error with the code and status.
func wantCode(t *testing.T, err error, code string, status int) {
	t.Helper()
	var e *Error
	if !errors.As(err, &e) {
		t.Errorf("error %v (%T), want *Error %s", err, err, code)
		return
	}
	if e.Code != code || e.StatusCode != status {
		t.Errorf("error code %q status %d (%v), want %q %d", e.Code, e.StatusCode, err, code, status)
	}
}

func readAll(t *testing.T, rc io.ReadCloser) []byte {
	t.Helper()
	defer rc.Close()
	b, err := io.ReadAll(rc)
	must(t, err)
	return b
}

func md5b64(b []byte) string { s := md5.Sum(b); return base64.StdEncoding.EncodeToString(s[:]) }

func put(ctx context.Context, t *testing.T, st Store, bucket, key string, data []byte, meta map[string]string, hdr Headers) PutOutput {
	t.Helper()
	out, err := st.PutObject(ctx, PutInput{
		Bucket: bucket, Key: key, Body: bytes.NewReader(data), Size: int64(len(data)),
		ContentMD5: md5b64(data), Meta: meta, Headers: hdr,
	})
	if err != nil {
		t.Fatalf("PutObject %s: %v", key, err)
	}
	return out
}
