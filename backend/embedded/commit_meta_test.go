package embedded

import (
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/johannesboyne/gofakes3"
	"github.com/spf13/afero"
)

// failMetaRename is the store's file system with renames into metadata/
// failing, as an I/O error or a crash between commit's two renames would
// leave them.
type failMetaRename struct{ afero.Fs }

func (f failMetaRename) Rename(oldname, newname string) error {
	if strings.HasPrefix(cleanPath(newname), "metadata/") {
		return errors.New("injected: metadata rename failed")
	}
	return f.Fs.Rename(oldname, newname)
}

// TestPutOfNewKeyWhoseMetadataRenameFailsLeavesNoUnreadableObject: a PUT
// of a new key whose metadata cannot be moved into place (an I/O error, or
// a crash between commit's renames) must not leave the body behind without
// metadata: s3afero cannot read such an object (its hash is recomputed from
// the metadata path, which is missing), so HEAD and GET fail, and every
// listing through it fails (or, before, left it out).
func TestPutOfNewKeyWhoseMetadataRenameFailsLeavesNoUnreadableObject(t *testing.T) {
	b, err := newFixedBackend(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if err := b.CreateBucket("bkt"); err != nil {
		t.Fatal(err)
	}
	if err := putKey(t, b, "bkt", "a"); err != nil {
		t.Fatal(err)
	}
	good := b.fs
	b.fs = failMetaRename{good}
	if err := putKey(t, b, "bkt", "new"); err == nil {
		t.Fatal("the PUT succeeded with its metadata rename failing")
	}
	b.fs = good
	_, herr := b.HeadObject("bkt", "new")
	if herr != nil && !gofakes3.HasErrorCode(herr, gofakes3.ErrNoSuchKey) {
		t.Errorf("HEAD of the key whose PUT failed: %v, want the object or NoSuchKey", herr)
	}
	got, err := b.ListBucket("bkt", nil, gofakes3.ListBucketPage{MaxKeys: 1000})
	if err != nil {
		t.Fatalf("listing after the failed PUT: %v", err)
	}
	if len(got.Contents) == 0 || got.Contents[0].Key != "a" {
		t.Fatalf("listing after the failed PUT: %+v", got.Contents)
	}
	_ = os.ErrNotExist
}
