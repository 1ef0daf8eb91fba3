package storetest

import (
	"bytes"
	"context"
	"crypto/md5"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"io"
	"testing"

	"github.com/s3seal/s3seal/backend"
)

// Put writes data at bucket/key with its Content-MD5 and fails the test
// on an error.
func Put(ctx context.Context, t *testing.T, st backend.Store, bucket, key string, data []byte, meta map[string]string, hdr backend.Headers) backend.PutOutput {
	t.Helper()
	out, err := st.PutObject(ctx, backend.PutInput{
		Bucket: bucket, Key: key, Body: bytes.NewReader(data), Size: int64(len(data)),
		ContentMD5: MD5Base64(data), Meta: meta, Headers: hdr,
	})
	if err != nil {
		t.Fatalf("PutObject %s: %v", key, err)
	}
	return out
}

// WantCode checks that err is an *Error with the code and status.
func WantCode(t *testing.T, err error, code string, status int) {
	t.Helper()
	var e *backend.Error
	if !errors.As(err, &e) {
		t.Errorf("error %v (%T), want *Error %s", err, err, code)
		return
	}
	if e.Code != code || e.StatusCode != status {
		t.Errorf("error code %q status %d (%v), want %q %d", e.Code, e.StatusCode, err, code, status)
	}
}

// Must fails the test on an error.
func Must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// EntryKeys are the keys of a listing's entries.
func EntryKeys(es []backend.ListEntry) []string {
	out := make([]string, len(es))
	for i, e := range es {
		out[i] = e.Key
	}
	return out
}

func lastOr(s []string) string {
	if len(s) == 0 {
		return ""
	}
	return s[len(s)-1]
}

// ReadAll reads and closes rc.
func ReadAll(t *testing.T, rc io.ReadCloser) []byte {
	t.Helper()
	defer rc.Close()
	b, err := io.ReadAll(rc)
	Must(t, err)
	return b
}

// RandBytes are n random bytes.
func RandBytes(t *testing.T, n int) []byte {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return b
}

// randHex is n random bytes in hex.
func randHex(t *testing.T, n int) string { return hex.EncodeToString(RandBytes(t, n)) }

// md5hex is b's MD5 in hex (an S3 ETag of a single-part object).
func md5hex(b []byte) string { s := md5.Sum(b); return hex.EncodeToString(s[:]) }

// MD5Base64 is b's MD5 in base64 (a Content-MD5 header).
func MD5Base64(b []byte) string { s := md5.Sum(b); return base64.StdEncoding.EncodeToString(s[:]) }
