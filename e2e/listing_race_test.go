package e2e

import (
	"bytes"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
)

// TestListingThroughS3sealWhileUploading: through s3seal on its embedded
// store, clients page V1 and V2 listings (max-keys 3, with and without
// "/") while others complete and abort multipart uploads (s3seal keeps
// records of its own under .s3seal/ meanwhile, hidden from listings),
// overwrite keys and put and delete neighbours, some sorting next to
// s3seal's reserved prefix. Every key present the whole time is listed
// once per listing, in order, and no hidden key shows.
func TestListingThroughS3sealWhileUploading(t *testing.T) {
	t.Parallel()
	c := sdkFor(t, startS3seal(t, sealOpts{}))
	const bucket = "lrace"
	mustCreateBucket(t, c, bucket)
	stable := []string{".r", ".s3seal0", ".s3sealz/x", ".t", "a!b", "a-b", "a.b", "a/", "a/b", "a0", "b/c/d", "b/c0", "z"}
	for _, k := range stable {
		putObj(t, c, bucket, k, []byte(k))
	}
	sort.Strings(stable)
	ctx := ctxT(t)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	writer := func(step func(i int) error) {
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
					errs <- err
					return
				}
			}
		}()
	}
	writer(func(i int) error {
		key := stable[i%len(stable)]
		if i%2 == 0 {
			key = fmt.Sprintf("m/%d", i%5) // a key of its own
		}
		cr, err := c.CreateMultipartUpload(ctx, &s3.CreateMultipartUploadInput{Bucket: aws.String(bucket), Key: aws.String(key)})
		if err != nil {
			return err
		}
		body := []byte(key)
		up, err := c.UploadPart(ctx, &s3.UploadPartInput{Bucket: aws.String(bucket), Key: aws.String(key), UploadId: cr.UploadId,
			PartNumber: aws.Int32(1), Body: bytes.NewReader(body), ContentLength: aws.Int64(int64(len(body)))})
		if err != nil {
			return err
		}
		if i%4 == 3 {
			_, err = c.AbortMultipartUpload(ctx, &s3.AbortMultipartUploadInput{Bucket: aws.String(bucket), Key: aws.String(key), UploadId: cr.UploadId})
			return err
		}
		_, err = c.CompleteMultipartUpload(ctx, &s3.CompleteMultipartUploadInput{Bucket: aws.String(bucket), Key: aws.String(key), UploadId: cr.UploadId,
			MultipartUpload: &types.CompletedMultipartUpload{Parts: []types.CompletedPart{{PartNumber: aws.Int32(1), ETag: up.ETag}}}})
		return err
	})
	writer(func(i int) error {
		k := []string{".s", ".s3seak", ".s3sealy", "a!", "a/a", "a1", "b/c/c", "b/c/e"}[i%8]
		if i%16 < 8 {
			_, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String(bucket), Key: aws.String(k), Body: strings.NewReader("t")})
			return err
		}
		_, err := c.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: aws.String(bucket), Key: aws.String(k)})
		return err
	})
	for round := 0; round < 25; round++ {
		for _, v2 := range []bool{false, true} {
			for _, delim := range []string{"", "/"} {
				all, err := listedAll(t, c, bucket, "", delim, "", 3, v2)
				if err != nil {
					t.Fatalf("round %d v2 %v delimiter %q: %v", round, v2, delim, err)
				}
				var keys []string
				for _, it := range all {
					keys = append(keys, strings.TrimPrefix(it, "P:"))
				}
				if !sort.StringsAreSorted(keys) || len(slices.Compact(slices.Clone(keys))) != len(keys) {
					t.Fatalf("round %d v2 %v delimiter %q: out of order or twice: %q", round, v2, delim, keys)
				}
				for _, k := range keys {
					if strings.HasPrefix(k, ".s3seal/") {
						t.Fatalf("hidden key listed: %q", k)
					}
				}
				for _, k := range stable {
					item := k
					if delim == "/" {
						if i := strings.Index(k, "/"); i >= 0 {
							item = k[:i+1]
						}
					}
					if !slices.Contains(keys, item) {
						t.Fatalf("round %d v2 %v delimiter %q: %q missing from %q", round, v2, delim, item, keys)
					}
				}
			}
		}
	}
	close(stop)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Errorf("writer: %v", err)
	}
}
