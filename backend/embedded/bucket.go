package embedded

import (
	"net/http"

	"github.com/johannesboyne/gofakes3"
	"github.com/spf13/afero"
)

// createLaxBucket creates, for a CreateBucket request, a bucket whose name
// S3 allows but gofakes3 refuses (it wants every dot-separated label to be
// three characters or more, so "a.b-c" would be InvalidBucketName). s3seal
// checks S3's bucket naming rules itself before asking, so the embedded
// store takes what S3 takes. It reports whether it answered.
func (m *mpStore) createLaxBucket(w http.ResponseWriter, r *http.Request, bucket string) bool {
	if r.Method != http.MethodPut || !bareQuery(r.URL.Query()) || gofakes3.ValidateBucketName(bucket) == nil ||
		len(bucket) < 3 || len(bucket) > 63 {
		return false
	}
	switch err := m.fb.CreateBucket(bucket); {
	case err == nil:
		w.Header().Set("Location", "/"+bucket)
		w.WriteHeader(http.StatusOK)
	case gofakes3.HasErrorCode(err, gofakes3.ErrBucketAlreadyExists):
		writeS3Error(w, r, http.StatusConflict, "BucketAlreadyExists", "The requested bucket name is not available.")
	default:
		writeS3Error(w, r, http.StatusInternalServerError, "InternalError", "The bucket could not be created.")
	}
	return true
}

// ListBuckets lists every bucket directory, also those whose names
// gofakes3's own check refuses but createLaxBucket made.
func (b *fixedBackend) ListBuckets() ([]gofakes3.BucketInfo, error) {
	entries, err := afero.ReadDir(b.fs, "buckets")
	if err != nil {
		return nil, err
	}
	out := make([]gofakes3.BucketInfo, 0, len(entries))
	for _, e := range entries {
		if !e.IsDir() || len(e.Name()) < 3 || len(e.Name()) > 63 {
			continue
		}
		out = append(out, gofakes3.BucketInfo{Name: e.Name(), CreationDate: gofakes3.NewContentTime(e.ModTime())})
	}
	return out, nil
}

// DeleteBucket holds the tree lock, so that a PUT committing meanwhile
// neither recreates the bucket's directory nor lands in a deleted bucket.
// A bucket keeping non-current versions or delete markers is not empty.
func (b *fixedBackend) DeleteBucket(name string) error {
	b.tree.Lock()
	defer b.tree.Unlock()
	if b.hasVersions(name) {
		return gofakes3.ResourceError(gofakes3.ErrBucketNotEmpty, name)
	}
	if err := b.MultiBucketBackend.DeleteBucket(name); err != nil {
		return err
	}
	b.forgetVersions(name)
	return nil
}
