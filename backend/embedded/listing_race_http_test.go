package embedded

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/s3seal/s3seal/backend"
)

// TestListingOverHTTPWhileOverwritingCompletingAndDeleting: through the
// store's HTTP API, in a bucket with versioning enabled, listers page V1
// and V2 (max-keys 5 and 7, with and without "/" as delimiter) while
// writers overwrite the stable keys by PUT and by multipart completion
// (each overwrite archives the previous version), and put, delete and
// abort keys sorting next to them. Every key present the whole time is
// listed exactly once per listing, in order.
func TestListingOverHTTPWhileOverwritingCompletingAndDeleting(t *testing.T) {
	ctx := context.Background()
	const bucket = "race"
	st := versionedBucket(t, bucket, WithMinPartSize(1))
	put := func(key, body string) error {
		_, err := st.PutObject(ctx, backend.PutInput{Bucket: bucket, Key: key, Body: strings.NewReader(body), Size: int64(len(body))})
		return err
	}
	var stable []string
	for i := 0; i < 60; i++ {
		for _, k := range []string{fmt.Sprintf("s%02d", i), fmt.Sprintf("d%d/s%02d", i%4, i), fmt.Sprintf("d%d/e/s%02d/", i%3, i)} {
			if err := put(k, k); err != nil {
				t.Fatal(err)
			}
			stable = append(stable, k)
		}
	}
	sort.Strings(stable)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	writer := func(w int, step func(i int) error) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				if err := step(i); err != nil {
					t.Errorf("writer %d: %v", w, err)
					return
				}
			}
		}()
	}
	writer(0, func(i int) error { return put(stable[i*7%len(stable)], fmt.Sprint("v", i)) })
	writer(1, func(i int) error {
		key := stable[i*11%len(stable)]
		id, err := st.CreateMultipartUpload(ctx, backend.CreateMultipartInput{Bucket: bucket, Key: key})
		if err != nil {
			return err
		}
		var parts []backend.CompletedPart
		for n := int32(1); n <= 2; n++ {
			body := []byte(fmt.Sprint("part", n, i))
			etag, err := st.UploadPart(ctx, backend.UploadPartInput{Bucket: bucket, Key: key, UploadID: id, PartNumber: n,
				Body: bytes.NewReader(body), Size: int64(len(body))})
			if err != nil {
				return err
			}
			parts = append(parts, backend.CompletedPart{PartNumber: n, ETag: etag})
		}
		if i%5 == 4 {
			return st.AbortMultipartUpload(ctx, bucket, key, id)
		}
		_, err = st.CompleteMultipartUpload(ctx, backend.CompleteMultipartInput{Bucket: bucket, Key: key, UploadID: id, Parts: parts})
		return err
	})
	writer(2, func(i int) error {
		s := stable[i*13%len(stable)]
		base := strings.TrimSuffix(s, "/")
		for _, k := range []string{base + "-", base + ".x", base + "0", strings.TrimSuffix(base, "s"+base[len(base)-2:]) + "t/" + fmt.Sprint(i%9)} {
			if i%2 == 0 {
				put(k, "t") // may be refused: an object beside keys under its name
			} else if err := st.DeleteObject(ctx, bucket, k); err != nil {
				return err
			}
		}
		return nil
	})
	for round := 0; round < 12; round++ {
		for _, v2 := range []bool{false, true} {
			for _, delim := range []string{"", "/"} {
				var all []string
				in := backend.ListInput{Bucket: bucket, V2: v2, Delimiter: delim, MaxKeys: 5}
				if v2 {
					in.MaxKeys = 7
				}
				for pages := 0; ; pages++ {
					if pages > 2000 {
						t.Fatal("listing does not end")
					}
					out, err := st.ListObjects(ctx, in)
					if err != nil {
						t.Fatal(err)
					}
					var page []string
					for _, en := range out.Entries {
						page = append(page, en.Key)
					}
					page = append(page, out.CommonPrefixes...)
					sort.Strings(page)
					all = append(all, page...)
					if !out.IsTruncated {
						break
					}
					if v2 {
						in.ContinuationToken = out.NextContinuationToken
					} else {
						in.Marker = page[len(page)-1]
					}
				}
				if !sort.StringsAreSorted(all) || len(slices.Compact(slices.Clone(all))) != len(all) {
					t.Fatalf("round %d v2 %v delimiter %q: out of order or twice: %q", round, v2, delim, all)
				}
				want := stable
				if delim == "/" {
					want = []string{"d0/", "d1/", "d2/", "d3/"}
					for _, k := range stable {
						if !strings.Contains(k, "/") {
							want = append(want, k)
						}
					}
					sort.Strings(want)
				}
				var got []string
				for _, k := range all {
					if slices.Contains(want, k) {
						got = append(got, k)
					}
				}
				if !slices.Equal(got, want) {
					t.Fatalf("round %d v2 %v delimiter %q: %d of the %d stable items listed; missing %q", round, v2, delim, len(got), len(want), missing(want, got))
				}
			}
		}
	}
	close(stop)
	wg.Wait()
}

func missing(want, got []string) []string {
	var out []string
	for _, k := range want {
		if !slices.Contains(got, k) {
			out = append(out, k)
		}
	}
	return out
}
