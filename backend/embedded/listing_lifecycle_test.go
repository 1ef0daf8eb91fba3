package embedded

import (
	"slices"
	"testing"

	"github.com/johannesboyne/gofakes3"
)

func listKeys(t *testing.T, b *fixedBackend, bucket string) []string {
	t.Helper()
	got, err := b.ListBucket(bucket, nil, gofakes3.ListBucketPage{MaxKeys: 1000})
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, c := range got.Contents {
		keys = append(keys, c.Key)
	}
	return keys
}

// TestListingAfterBucketRecreatedAndRestart: a bucket emptied, deleted
// and made again under its name lists only what it holds now (no
// listing of the old one kept), and a restart on the same files lists
// the same keys (the index is rebuilt from the disk).
func TestListingAfterBucketRecreatedAndRestart(t *testing.T) {
	root := t.TempDir()
	b, err := newFixedBackend(root)
	if err != nil {
		t.Fatal(err)
	}
	if err := b.CreateBucket("bkt"); err != nil {
		t.Fatal(err)
	}
	old := []string{"a/", "a/b", "c/d/e", "f"}
	for _, k := range old {
		if err := putKey(t, b, "bkt", k); err != nil {
			t.Fatal(err)
		}
	}
	if got := listKeys(t, b, "bkt"); !slices.Equal(got, old) {
		t.Fatalf("listed %q, want %q", got, old)
	}
	for _, k := range old {
		if _, err := b.DeleteObject("bkt", k); err != nil {
			t.Fatal(err)
		}
	}
	if err := b.DeleteBucket("bkt"); err != nil {
		t.Fatal(err)
	}
	if _, err := b.ListBucket("bkt", nil, gofakes3.ListBucketPage{MaxKeys: 1000}); !gofakes3.HasErrorCode(err, gofakes3.ErrNoSuchBucket) {
		t.Fatalf("listing a deleted bucket: %v", err)
	}
	if err := b.CreateBucket("bkt"); err != nil {
		t.Fatal(err)
	}
	if got := listKeys(t, b, "bkt"); len(got) != 0 {
		t.Fatalf("a bucket made again lists %q", got)
	}
	now := []string{"a", "c/d"}
	for _, k := range now {
		if err := putKey(t, b, "bkt", k); err != nil {
			t.Fatal(err)
		}
	}
	if got := listKeys(t, b, "bkt"); !slices.Equal(got, now) {
		t.Fatalf("listed %q, want %q", got, now)
	}
	b2, err := newFixedBackend(root)
	if err != nil {
		t.Fatal(err)
	}
	if got := listKeys(t, b2, "bkt"); !slices.Equal(got, now) {
		t.Fatalf("after a restart listed %q, want %q", got, now)
	}
}
