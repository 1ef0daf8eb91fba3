package sealstore

import (
	"errors"
	"strings"
	"testing"
)

// unreadBody fails the test that reads it.
type unreadBody struct{ t *testing.T }

func (b unreadBody) Read([]byte) (int, error) {
	b.t.Error("the body was read")
	return 0, errors.New("read")
}

// TestEmptyMetaKey: a metadata header with an empty name (x-amz-meta-:
// v, which HTTP allows) cannot be sealed (format 2 has no empty key): it
// is refused as the client's error before the body is read, on a PUT and
// a CreateMultipartUpload, never an internal error after the upload.
func TestEmptyMetaKey(t *testing.T) {
	f := newFixture(t)
	meta := map[string]string{"": "v", "ok": "1"}
	_, err := f.st.Put(f.ctx, PutInput{Bucket: bucket, Key: "k", Body: unreadBody{t}, Size: 1, Meta: meta})
	if c := errorCode(err); c == "" || c == "InternalError" {
		t.Errorf("PUT: %v, want the client's error", err)
	}
	_, err = f.st.CreateMultipart(f.ctx, CreateMultipartInput{Bucket: bucket, Key: "m", Meta: meta})
	if c := errorCode(err); c == "" || c == "InternalError" {
		t.Errorf("CreateMultipart: %v, want the client's error", err)
	}
	if _, err := f.st.Put(f.ctx, PutInput{Bucket: bucket, Key: "k2", Body: strings.NewReader("x"), Size: 1, Meta: map[string]string{"ok": "1"}}); err != nil {
		t.Fatal(err)
	}
	_, err = f.st.Copy(f.ctx, CopyInput{SrcBucket: bucket, SrcKey: "k2", Bucket: bucket, Key: "k3", ReplaceMeta: true, Meta: meta})
	if c := errorCode(err); c == "" || c == "InternalError" {
		t.Errorf("copy (REPLACE): %v, want the client's error", err)
	}
}
