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

func Must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

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

func ReadAll(t *testing.T, rc io.ReadCloser) []byte {
	t.Helper()
	defer rc.Close()
	b, err := io.ReadAll(rc)
	Must(t, err)
	return b
}

func RandBytes(t *testing.T, n int) []byte {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return b
}

func RandHex(t *testing.T, n int) string { return hex.EncodeToString(RandBytes(t, n)) }

func MD5Hex(b []byte) string { s := md5.Sum(b); return hex.EncodeToString(s[:]) }

func MD5Base64(b []byte) string { s := md5.Sum(b); return base64.StdEncoding.EncodeToString(s[:]) }
