package sealstore

import (
	"bytes"
	"testing"
)

// A multipart object copied onto itself with new metadata is made by the
// store, reads back with its new metadata, and leaves one manifest.
func TestStoreCopyOfMultipartOntoItself(t *testing.T) {
	for name, f := range copyFixtures(t) {
		t.Run(name, func(t *testing.T) {
			p1, p2 := randBytes(MinPartSize+3, 151), randBytes(100<<10, 152)
			whole := append(append([]byte{}, p1...), p2...)
			f.twoParts(t, "mp", p1, p2)
			st, bs := countBytes(t, f)
			bs.moved()
			if _, err := st.Copy(f.ctx, CopyInput{SrcBucket: bucket, SrcKey: "mp", Bucket: bucket, Key: "mp", ReplaceMeta: true,
				Meta: map[string]string{"color": "new"}}); err != nil {
				t.Fatal(err)
			}
			wantMoved(t, name, bs, len(whole))
			f.st.manifests.lru.Purge()
			f.st.cache.Purge()
			info, got, err := f.get(t, "mp", nil)
			if err != nil || !bytes.Equal(got, whole) || info.Meta["color"] != "new" {
				t.Fatalf("reads %d bytes, meta %v: %v", len(got), info.Meta, err)
			}
			if ms := f.manifestNames(t); storeMakesCopies(name) && len(ms) != 1 {
				t.Errorf("manifests: %v", ms)
			}
		})
	}
}
