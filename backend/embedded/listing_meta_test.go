package embedded

import (
	"os"
	"path/filepath"
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
			b, err := newFixedBackend(root)
			if err != nil {
				t.Fatal(err)
			}
			if err := b.CreateBucket("bkt"); err != nil {
				t.Fatal(err)
			}
			for _, k := range []string{"a", "b", "c"} {
				if err := putKey(t, b, "bkt", k); err != nil {
					t.Fatal(err)
				}
			}
			mp := filepath.Join(root, filepath.FromSlash(metaPath("bkt", "b")))
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
