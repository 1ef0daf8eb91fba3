package sealstore

import (
	"bytes"
	"maps"
	"testing"
)

// Metadata keys with an underscore are sealed, so a store that drops such
// header names (moto behind Werkzeug) cannot lose them: the store never
// holds them as entries of their own, and HEAD, GET and copies give them
// back as written, beside the other keys kept in the clear.
func TestUnderscoreMetadataSealed(t *testing.T) {
	f := newFixture(t)
	want := map[string]string{"key_with_underscore": "underscore-ok", "key.with.dot": "dot-ok", "123numeric-prefix": "v", "emptyvalue": ""}
	data := []byte("data")
	if _, err := f.st.Put(f.ctx, PutInput{Bucket: bucket, Key: "u", Body: bytes.NewReader(data), Size: int64(len(data)), Meta: maps.Clone(want)}); err != nil {
		t.Fatal(err)
	}
	stored := f.backendMeta(t, "u")
	for k := range stored {
		if k == "key_with_underscore" {
			t.Errorf("the store holds %s as an entry of its own: %v", k, stored)
		}
	}
	if stored["key.with.dot"] != "dot-ok" {
		t.Errorf("other metadata not kept in the clear: %v", stored)
	}
	if got := f.statMeta(t, f.st, "u", nil); !maps.Equal(got, want) {
		t.Errorf("stat: %v, want %v", got, want)
	}
	if _, err := f.st.Copy(f.ctx, CopyInput{SrcBucket: bucket, SrcKey: "u", Bucket: bucket, Key: "u2"}); err != nil {
		t.Fatal(err)
	}
	if got := f.statMeta(t, f.st, "u2", nil); !maps.Equal(got, want) {
		t.Errorf("copy: %v, want %v", got, want)
	}
}
