package embedded

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3afero"
	"github.com/spf13/afero"

	"github.com/s3seal/s3seal/backend/internal/storetest"
)

// flatMetaName and the rename commit must keep plain gofakes3's layout:
// an object written by s3afero is found where metaPath says, and one
// written by fixedBackend reads back through plain s3afero with its
// metadata.
func TestMetaNameMatchesS3afero(t *testing.T) {
	root := t.TempDir()
	plain, err := s3afero.MultiBucket(afero.NewBasePathFs(afero.NewOsFs(), root))
	storetest.Must(t, err)
	storetest.Must(t, plain.CreateBucket("bkt"))
	for _, k := range []string{"one", `a/b\c d`, "x/y/"} {
		if _, err := plain.PutObject("bkt", k, map[string]string{}, strings.NewReader("v"), 1, nil); err != nil {
			t.Fatal(err)
		}
		if _, err := os.Stat(filepath.Join(root, filepath.FromSlash(metaPath("bkt", k)))); err != nil {
			t.Errorf("metadata of %q: %v", k, err)
		}
	}

	fb, err := newFixedBackend(root)
	storetest.Must(t, err)
	meta := map[string]string{"X-Amz-Meta-Color": "blue", "Content-Type": "text/x"}
	if _, err := fb.PutObject("bkt", "dir/obj", meta, strings.NewReader("body"), 4, nil); err != nil {
		t.Fatal(err)
	}
	obj, err := plain.HeadObject("bkt", "dir/obj")
	storetest.Must(t, err)
	if obj.Metadata["X-Amz-Meta-Color"] != "blue" || obj.Metadata["Content-Type"] != "text/x" || obj.Size != 4 {
		t.Errorf("plain s3afero reads %v, size %d", obj.Metadata, obj.Size)
	}
}

// Keys S3 allows, up to 1024 bytes with short segments and directory
// markers among them, are stored, read, listed, replaced and deleted;
// nothing is left behind, so the bucket can be deleted afterwards.
func TestEmbeddedLongKeys(t *testing.T) {
	root := t.TempDir()
	b, err := newFixedBackend(root)
	storetest.Must(t, err)
	storetest.Must(t, b.CreateBucket("bkt"))
	long := strings.Repeat("seg/", 255) + "last" // 1024 bytes
	marker := strings.Repeat("d/", 300)          // 600 bytes, a directory marker
	keys := []string{long, marker, strings.Repeat("abcdefghi/", 23) + "z"}
	for _, k := range keys {
		for i, body := range []string{"first", "second body"} {
			meta := map[string]string{"X-Amz-Meta-Round": string(rune('0' + i))}
			if i == 0 {
				meta["X-Amz-Meta-Only-First"] = "yes"
			}
			if _, err := b.PutObject("bkt", k, meta, strings.NewReader(body), int64(len(body)), nil); err != nil {
				t.Fatalf("PUT %d-byte key (round %d): %v", len(k), i, err)
			}
		}
		obj, err := b.GetObject("bkt", k, nil)
		if err != nil {
			t.Fatalf("GET %d-byte key: %v", len(k), err)
		}
		data, _ := io.ReadAll(obj.Contents)
		obj.Contents.Close()
		if string(data) != "second body" || obj.Metadata["X-Amz-Meta-Round"] != "1" || obj.Metadata["X-Amz-Meta-Only-First"] != "" {
			t.Errorf("%d-byte key reads %q with %v", len(k), data, obj.Metadata)
		}
	}
	l, err := b.ListBucket("bkt", nil, gofakes3.ListBucketPage{MaxKeys: 100})
	storetest.Must(t, err)
	if len(l.Contents) != len(keys) {
		t.Errorf("listed %d keys, want %d", len(l.Contents), len(keys))
	}
	for _, c := range l.Contents {
		if c.Size != int64(len("second body")) {
			t.Errorf("listed %q with size %d", c.Key, c.Size)
		}
	}
	for _, k := range keys {
		if _, err := b.DeleteObject("bkt", k); err != nil {
			t.Fatalf("DELETE %d-byte key: %v", len(k), err)
		}
	}
	if left, _ := os.ReadDir(filepath.Join(root, "metadata", "bkt")); len(left) != 0 {
		t.Errorf("metadata files left: %v", left)
	}
	if err := b.DeleteBucket("bkt"); err != nil {
		t.Errorf("DeleteBucket after deleting every key: %v", err)
	}
}

// A PUT refused for its path (an object is a prefix of it) creates no
// directory, and a PUT through a bucket deleted meanwhile does not bring
// the bucket back.
func TestEmbeddedRefusedPutLeavesNothing(t *testing.T) {
	root := t.TempDir()
	b, err := newFixedBackend(root)
	storetest.Must(t, err)
	storetest.Must(t, b.CreateBucket("bkt"))
	if _, err := b.PutObject("bkt", "a", map[string]string{}, bytes.NewReader(nil), 0, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := b.PutObject("bkt", "a/b/c", map[string]string{}, bytes.NewReader(nil), 0, nil); !gofakes3.HasErrorCode(err, gofakes3.ErrInvalidArgument) {
		t.Fatalf("PUT a/b/c beside the object a: %v", err)
	}
	if st, err := os.Stat(filepath.Join(root, "buckets", "bkt", "a")); err != nil || st.IsDir() {
		t.Errorf("the object a: %v %v", st, err)
	}
	if _, err := b.DeleteObject("bkt", "a"); err != nil {
		t.Fatal(err)
	}
	storetest.Must(t, b.DeleteBucket("bkt"))
	if err := b.commit("bkt", "k/x", "k/x", "staging/none", "staging/none", func() error { return nil }); !gofakes3.HasErrorCode(err, gofakes3.ErrNoSuchBucket) {
		t.Errorf("commit into a deleted bucket: %v", err)
	}
	if _, err := os.Stat(filepath.Join(root, "buckets", "bkt")); !os.IsNotExist(err) {
		t.Errorf("the deleted bucket's directory: %v", err)
	}
}
