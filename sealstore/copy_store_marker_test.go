package sealstore

import (
	"testing"
)

// A copy whose source is a delete marker (the current one, or one named
// by its version id) answers as the copy that reads its source answers.
func TestStoreCopyOfDeleteMarkerAnswersAsTheReadingCopy(t *testing.T) {
	for name, f := range copyFixtures(t) {
		t.Run(name, func(t *testing.T) {
			f.enableVersioning(t)
			f.put(t, "src", randBytes(1000, 121))
			dm, err := f.st.DeleteVersion(f.ctx, DeleteInput{Bucket: bucket, Key: "src"})
			if err != nil || !dm.DeleteMarker {
				t.Fatalf("delete: %+v %v", dm, err)
			}
			for _, vid := range []string{"", dm.VersionID} {
				_, byStore := f.st.Copy(f.ctx, CopyInput{SrcBucket: bucket, SrcKey: "src", SrcVersionID: vid, Bucket: bucket, Key: "dst"})
				_, byRead := f.st.Copy(f.ctx, CopyInput{SrcBucket: bucket, SrcKey: "src", SrcVersionID: vid, Bucket: bucket, Key: "dst",
					Cond: &Condition{IfNoneMatch: true}})
				t.Logf("version %q: store copy %v; reading copy %v", vid, byStore, byRead)
				if byStore == nil || byRead == nil || StoreCode(byStore) != StoreCode(byRead) || byStore.Error() != byRead.Error() {
					t.Errorf("version %q: store copy answers %v, the reading copy %v", vid, byStore, byRead)
				}
			}
		})
	}
}
