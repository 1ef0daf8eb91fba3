package backend

import (
	"context"
	"slices"
	"testing"

	"github.com/s3seal/s3seal/internal/moto"
)

// moto's V1 answer says EncodingType=url but leaves CommonPrefixes raw: a
// V1 listing with a delimiter over keys with '%' in a prefix must still
// give each prefix as written (no 503 for "a%b/", no "a%2Bb/" read as
// "a+b/"), with paging by marker exact.
func TestMotoV1ListingPercentPrefixes(t *testing.T) {
	st, err := NewS3(S3Config{Endpoint: moto.Start(t), AccessKey: "test", SecretKey: "test", PathStyle: true})
	must(t, err)
	ctx := context.Background()
	must(t, st.CreateBucket(ctx, "pct"))
	keys := []string{"a+b/1", "a%2Bb/3", "a%b/4", "a b/5", "top%"}
	for _, k := range keys {
		put(ctx, t, st, "pct", k, []byte("x"), nil, Headers{})
	}
	want := []string{"a b/", "a%2Bb/", "a%b/", "a+b/", "top%"}
	for _, max := range []int32{0, 1, 2} {
		var got []string
		marker := ""
		for i := 0; i < 10; i++ {
			page, err := st.ListObjects(ctx, ListInput{Bucket: "pct", Delimiter: "/", Marker: marker, MaxKeys: max})
			if err != nil {
				t.Fatalf("max %d: %v", max, err)
			}
			n := len(got)
			got = append(got, page.CommonPrefixes...)
			for _, e := range page.Entries {
				got = append(got, e.Key)
				if e.OwnerID == "" {
					t.Errorf("V1 entry %q without owner", e.Key)
				}
			}
			slices.Sort(got[n:])
			if !page.IsTruncated {
				break
			}
			marker = page.NextMarker
			if marker == "" {
				marker = got[len(got)-1]
			}
		}
		if !slices.Equal(got, want) {
			t.Errorf("max %d: listed %q, want %q", max, got, want)
		}
	}
}
