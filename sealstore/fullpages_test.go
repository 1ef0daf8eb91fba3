package sealstore

import (
	"testing"

	"github.com/s3seal/s3seal/backend"
)

// A page with hidden keys inside it (a bucket document sorts before most
// client keys) is filled to max-keys from where the store's page ended,
// as S3 fills its pages (s3-tests count the keys of a truncated page).
func TestListingPagesFullPastHiddenKeys(t *testing.T) {
	f := newFixture(t)
	if err := f.st.PutBucketDoc(f.ctx, bucket, "owner", []byte(`{"id":"x"}`)); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"a", "b", "c"} {
		f.put(t, k, []byte(k))
	}
	for _, v2 := range []bool{false, true} {
		page, err := f.st.List(f.ctx, backend.ListInput{Bucket: bucket, V2: v2, MaxKeys: 2})
		if err != nil {
			t.Fatal(err)
		}
		if len(page.Entries) != 2 || page.Entries[0].Key != "a" || page.Entries[1].Key != "b" || !page.IsTruncated {
			t.Errorf("V2 %v: first page %+v, want a and b, truncated", v2, page.Entries)
		}
		in := backend.ListInput{Bucket: bucket, V2: v2, MaxKeys: 2, Marker: page.NextMarker, ContinuationToken: page.NextContinuationToken}
		if !v2 && in.Marker == "" {
			in.Marker = "b"
		}
		page, err = f.st.List(f.ctx, in)
		if err != nil || len(page.Entries) != 1 || page.Entries[0].Key != "c" || page.IsTruncated {
			t.Errorf("V2 %v: second page %+v, %v; want c alone", v2, page.Entries, err)
		}
	}
}
