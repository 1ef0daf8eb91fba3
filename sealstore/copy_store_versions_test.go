package sealstore

import (
	"bytes"
	"testing"
)

// Copies the store makes in versioned and suspended buckets: of the
// current version, of an older version by id, of the null version, of a
// multipart version; each reads back as the version it copied.
func TestStoreCopiesAcrossVersions(t *testing.T) {
	for name, f := range copyFixtures(t) {
		t.Run(name, func(t *testing.T) {
			f.enableVersioning(t)
			old := randBytes(70<<10, 81)
			v1 := f.put(t, "src", old)
			cur := randBytes(90<<10, 82)
			f.put(t, "src", cur)
			p1, p2 := randBytes(MinPartSize+1, 83), randBytes(1000, 84)
			mp1 := f.twoParts(t, "mp", p1, p2)
			f.put(t, "mp", cur) // the multipart version is no longer current
			st, bs := countBytes(t, f)
			cp := func(src, vid, dst string, want []byte) {
				t.Helper()
				bs.moved()
				if _, err := st.Copy(f.ctx, CopyInput{SrcBucket: bucket, SrcKey: src, SrcVersionID: vid, Bucket: bucket, Key: dst}); err != nil {
					t.Errorf("copy %s@%s: %v", src, vid, err)
					return
				}
				wantMoved(t, name, bs, len(want))
				f.st.cache.Purge()
				if _, got, err := f.get(t, dst, nil); err != nil || !bytes.Equal(got, want) {
					t.Errorf("copy %s@%s reads %d bytes: %v", src, vid, len(got), err)
				}
			}
			cp("src", "", "c-cur", cur)
			cp("src", v1.VersionID, "c-old", old)
			cp("mp", mp1.VersionID, "c-mp", append(append([]byte{}, p1...), p2...))
			if err := f.be.PutBucketVersioning(f.ctx, bucket, "Suspended"); err != nil {
				t.Fatal(err)
			}
			null := randBytes(50<<10, 85)
			f.put(t, "nul", null)
			cp("nul", "", "c-null", null)
		})
	}
}
