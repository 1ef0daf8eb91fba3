package embedded

import (
	"os"
	"path/filepath"
	"slices"
	"syscall"
	"testing"

	"github.com/johannesboyne/gofakes3"
)

// TestListingKeepsObjectWhoseMetadataIsUnreadable: an object whose
// metadata file is missing (a crash between commit's two renames) or
// unreadable is still in the bucket; a listing that leaves it out tells
// rclone sync and backup tools it was deleted (they delete their copy).
// Before listings were paged, such an object was listed.
func TestListingKeepsObjectWhoseMetadataIsUnreadable(t *testing.T) {
	for _, damage := range []string{"missing", "corrupt"} {
		t.Run(damage, func(t *testing.T) {
			root := t.TempDir()
			b := bucketWithKeys(t, root, "a", "b", "c")
			mp := filepath.Join(root, filepath.FromSlash(metaPath("bkt", "b")))
			var err error
			if damage == "missing" {
				err = os.Remove(mp)
			} else {
				err = os.WriteFile(mp, []byte(`{"File":"bkt/b","Si`), 0o600)
			}
			if err != nil {
				t.Fatal(err)
			}
			got, err := b.ListBucket("bkt", nil, gofakes3.ListBucketPage{MaxKeys: 1000})
			if err != nil {
				return // refusing the listing is safe too: nothing is taken for deleted
			}
			var keys []string
			for _, c := range got.Contents {
				keys = append(keys, c.Key)
			}
			if len(keys) != 3 {
				t.Fatalf("metadata %s: listed %q, want a, b, c (or an error)", damage, keys)
			}
		})
	}
}

// TestListingFailsWhenADirectoryCannotBeRead: a directory of the bucket
// tree that cannot be read (here: no file descriptor left, EMFILE, as
// under many connections) holds keys all the same; a listing that steps
// over it as if empty tells clients they were deleted. Before listings
// were paged, such a listing failed.
func TestListingFailsWhenADirectoryCannotBeRead(t *testing.T) {
	root := t.TempDir()
	keys := []string{"a", "d/x", "d/y", "e"}
	bucketWithKeys(t, root, keys...)
	// A fresh store on the same files: its index reads every directory.
	b, err := newFixedBackend(root)
	if err != nil {
		t.Fatal(err)
	}
	// The root's listing is held; only the directory d is read while
	// descriptors run out (no object is read: d/ is a common prefix).
	b.ix.list("buckets/bkt")
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		t.Fatal(err)
	}
	// The lowest free descriptor: with the limit there, no file opens.
	probe, err := os.Open(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	free := probe.Fd()
	probe.Close()
	low := lim
	low.Cur = uint64(free)
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &low); err != nil {
		t.Skip(err)
	}
	var list []string
	var lerr error
	func() {
		defer syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim)
		var ents []dirEnt
		ents, _ = b.ix.read("buckets/bkt/d")
		if len(ents) != 0 {
			t.Skip("the directory could still be read with no descriptor left")
		}
		var got *gofakes3.ObjectList
		got, lerr = b.ListBucket("bkt", &gofakes3.Prefix{HasPrefix: true, Prefix: "d", HasDelimiter: true, Delimiter: "/"}, gofakes3.ListBucketPage{MaxKeys: 1000})
		if lerr == nil {
			for _, c := range got.Contents {
				list = append(list, c.Key)
			}
			for _, p := range got.CommonPrefixes {
				list = append(list, p.Prefix)
			}
		}
	}()
	if lerr != nil {
		return // failing is safe: nothing is taken for deleted
	}
	if want := []string{"d/"}; !slices.Equal(list, want) {
		t.Fatalf("listed %q with the directory d unreadable, want %q or an error", list, want)
	}
}
