package sealstore

import (
	"bytes"
	"strings"
	"testing"

	"github.com/s3seal/s3seal/crypto"
)

// A copy of an object whose metadata is at the limit, under the longest
// key id, with a SHA-512 checksum: the copy's envelope with its origin
// would pass the store's 2 KB, so it is sealed again; either way it
// succeeds and reads back with the metadata.
func TestStoreCopyWithMetadataAtTheLimit(t *testing.T) {
	f := newFixture(t)
	kid := strings.Repeat("k", 64)
	kr, err := crypto.NewKeyring(kid, map[string][]byte{kid: mustKey(t)})
	if err != nil {
		t.Fatal(err)
	}
	st, err := New(Direct(f.be), kr, Options{SpoolDir: t.TempDir(), OwnerPendingAge: 1})
	if err != nil {
		t.Fatal(err)
	}
	f.st, f.kr = st, kr
	data := randBytes(70000, 111)
	// 3 (encoding) + 4 + len("big") + len(value) = MaxObjectMeta
	meta := map[string]string{"big": strings.Repeat("v", crypto.MaxObjectMeta-3-4-3)}
	sha := "0DXMjmYz0rFoj5OhDBp6SxGzD2ujpHzgF6CBiVrkqTbVAPGuODkZEhYdeJMODxCnkxJNIbVnhmbwyYTKwJ+Q3w=="
	if _, err := st.Put(f.ctx, PutInput{Bucket: bucket, Key: "src", Body: bytes.NewReader(data), Size: int64(len(data)), Meta: meta,
		Finalize: func() (map[string]string, error) { return map[string]string{"sha512": sha}, nil }}); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Copy(f.ctx, CopyInput{SrcBucket: bucket, SrcKey: "src", Bucket: bucket, Key: "dst"}); err != nil {
		t.Fatal(err)
	}
	info, got, err := f.get(t, "dst", nil)
	if err != nil || !bytes.Equal(got, data) || info.Meta["big"] != meta["big"] {
		t.Fatalf("copy reads %d bytes, meta %d bytes: %v", len(got), len(info.Meta["big"]), err)
	}
	n := 0
	for k, v := range f.backendMeta(t, "dst") {
		n += len(k) + len(v)
	}
	if n > 2048 {
		t.Errorf("the copy's metadata at the store is %d bytes", n)
	}
}
