package embedded

import (
	"context"
	"strings"

	"github.com/s3seal/s3seal/backend"
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
	old := []string{"a/", "a/b", "c/d/e", "f"}
	b := bucketWithKeys(t, root, old...)
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

// TestListingFollowsVersionRestores: in a versioned bucket whose listings
// are held, deleting the latest version brings the previous one back into
// the listing, a delete marker takes the key out, and deleting the marker
// brings it back, in directories the index already holds.
func TestListingFollowsVersionRestores(t *testing.T) {
	ctx := context.Background()
	const bucket = "vers"
	st := versionedBucket(t, bucket)
	put := func(key string) string {
		out, err := st.PutObject(ctx, backend.PutInput{Bucket: bucket, Key: key, Body: strings.NewReader(key), Size: int64(len(key))})
		if err != nil {
			t.Fatal(err)
		}
		return out.VersionID
	}
	list := func() []string {
		out, err := st.ListObjects(ctx, backend.ListInput{Bucket: bucket, V2: true, MaxKeys: 2})
		if err != nil {
			t.Fatal(err)
		}
		var keys []string
		for {
			for _, en := range out.Entries {
				keys = append(keys, en.Key)
			}
			if !out.IsTruncated {
				return keys
			}
			out, err = st.ListObjects(ctx, backend.ListInput{Bucket: bucket, V2: true, MaxKeys: 2, ContinuationToken: out.NextContinuationToken})
			if err != nil {
				t.Fatal(err)
			}
		}
	}
	put("d/a")
	put("d/k")
	put("d/z")
	v2 := put("d/k")
	want := []string{"d/a", "d/k", "d/z"}
	if got := list(); !slices.Equal(got, want) {
		t.Fatalf("listed %q, want %q", got, want)
	}
	if _, err := st.DeleteObjectVersion(ctx, backend.DeleteInput{Bucket: bucket, Key: "d/k", VersionID: v2}); err != nil {
		t.Fatal(err)
	}
	if got := list(); !slices.Equal(got, want) {
		t.Fatalf("after the latest version's delete listed %q, want %q", got, want)
	}
	out, err := st.DeleteObjectVersion(ctx, backend.DeleteInput{Bucket: bucket, Key: "d/k"})
	if err != nil || !out.DeleteMarker {
		t.Fatalf("delete marker: %+v %v", out, err)
	}
	if got, w := list(), []string{"d/a", "d/z"}; !slices.Equal(got, w) {
		t.Fatalf("under a delete marker listed %q, want %q", got, w)
	}
	if _, err := st.DeleteObjectVersion(ctx, backend.DeleteInput{Bucket: bucket, Key: "d/k", VersionID: out.VersionID}); err != nil {
		t.Fatal(err)
	}
	if got := list(); !slices.Equal(got, want) {
		t.Fatalf("after the delete marker's delete listed %q, want %q", got, want)
	}
}

// versionedBucket starts a store over HTTP (with opts) holding bucket,
// versioning enabled, and a client of it.
func versionedBucket(t *testing.T, bucket string, opts ...Option) *backend.S3 {
	t.Helper()
	e, err := Start(t.TempDir(), opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	st, err := backend.NewS3(e.Config())
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := st.CreateBucket(ctx, bucket); err != nil {
		t.Fatal(err)
	}
	if err := st.PutBucketVersioning(ctx, bucket, "Enabled"); err != nil {
		t.Fatal(err)
	}
	return st
}
