package e2e

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
)

// TestMultipartViews: what clients see of uploads in progress and of
// s3seal's own state: ListMultipartUploads and ListParts report the
// client's parts (plaintext sizes and MD5s), listings with and without a
// delimiter never show the .s3seal/ state or manifests, an aborted upload
// cannot be completed, and two processes completing one upload at once
// leave one correct object. On both backends.
func TestMultipartViews(t *testing.T) {
	t.Parallel()
	for _, be := range []string{"embedded", "moto"} {
		t.Run(be, func(t *testing.T) {
			t.Parallel()
			start := sharedBackend(t, be)
			a, b := sdkFor(t, start()), sdkFor(t, start())
			ctx := ctxT(t)
			bkt := aws.String("mpviews")
			mustCreateBucket(t, a, "mpviews")
			putObj(t, a, "mpviews", "plain", []byte("plain object"))
			done := []mpPart{{1, patternBytes(960, 5*mib)}, {2, patternBytes(961, 100)}}
			mpUpload(t, a, "mpviews", "done", done)

			cr, err := a.CreateMultipartUpload(ctx, &s3.CreateMultipartUploadInput{Bucket: bkt, Key: aws.String("open")})
			if err != nil {
				t.Fatal(err)
			}
			open := []mpPart{{3, patternBytes(962, 5*mib+9)}, {7, patternBytes(963, 12345)}}
			mpSendParts(t, b, "mpviews", "open", aws.ToString(cr.UploadId), open)

			lu, err := b.ListMultipartUploads(ctx, &s3.ListMultipartUploadsInput{Bucket: bkt})
			if err != nil {
				t.Fatalf("ListMultipartUploads: %v", err)
			}
			if len(lu.Uploads) != 1 || aws.ToString(lu.Uploads[0].Key) != "open" || aws.ToString(lu.Uploads[0].UploadId) != aws.ToString(cr.UploadId) {
				var got []string
				for _, u := range lu.Uploads {
					got = append(got, aws.ToString(u.Key)+" "+aws.ToString(u.UploadId))
				}
				t.Errorf("ListMultipartUploads = %q, want only open %s", got, aws.ToString(cr.UploadId))
			}
			lp, err := a.ListParts(ctx, &s3.ListPartsInput{Bucket: bkt, Key: aws.String("open"), UploadId: cr.UploadId})
			if err != nil {
				t.Fatalf("ListParts: %v", err)
			}
			if len(lp.Parts) != len(open) {
				t.Fatalf("ListParts: %d parts, want %d", len(lp.Parts), len(open))
			}
			for i, p := range lp.Parts {
				if aws.ToInt32(p.PartNumber) != open[i].N || aws.ToInt64(p.Size) != int64(len(open[i].Data)) || unquote(p.ETag) != md5Hex(open[i].Data) {
					t.Errorf("ListParts[%d] = #%d %d bytes %s, want #%d %d %s", i, aws.ToInt32(p.PartNumber), aws.ToInt64(p.Size),
						unquote(p.ETag), open[i].N, len(open[i].Data), md5Hex(open[i].Data))
				}
			}

			v2, err := a.ListObjectsV2(ctx, &s3.ListObjectsV2Input{Bucket: bkt})
			if err != nil {
				t.Fatal(err)
			}
			var keys []string
			for _, o := range v2.Contents {
				keys = append(keys, aws.ToString(o.Key))
			}
			if strings.Join(keys, ",") != "done,plain" {
				t.Errorf("ListObjectsV2 keys %q, want done and plain only", keys)
			}
			v1, err := a.ListObjects(ctx, &s3.ListObjectsInput{Bucket: bkt, Delimiter: aws.String("/")})
			if err != nil {
				t.Fatal(err)
			}
			if len(v1.CommonPrefixes) != 0 || len(v1.Contents) != 2 {
				var pre []string
				for _, p := range v1.CommonPrefixes {
					pre = append(pre, aws.ToString(p.Prefix))
				}
				t.Errorf("ListObjects delimiter /: %d objects, prefixes %q; want 2 objects and no prefix", len(v1.Contents), pre)
			}

			if _, err := b.AbortMultipartUpload(ctx, &s3.AbortMultipartUploadInput{Bucket: bkt, Key: aws.String("open"), UploadId: cr.UploadId}); err != nil {
				t.Fatalf("AbortMultipartUpload: %v", err)
			}
			_, err = completeIn(a, ctx, "mpviews", "open", aws.ToString(cr.UploadId), open)
			wantStatus(t, "completing an aborted upload", err, http.StatusNotFound, "NoSuchUpload")
			if be == "embedded" { // moto answers 500 to a part for an aborted upload
				_, err = a.UploadPart(ctx, &s3.UploadPartInput{Bucket: bkt, Key: aws.String("open"), UploadId: cr.UploadId,
					PartNumber: aws.Int32(1), Body: strings.NewReader("late")})
				wantStatus(t, "a part for an aborted upload", err, http.StatusNotFound, "NoSuchUpload")
			}

		})
	}
}

// TestMultipartRacingCompletions: two processes complete one upload at
// the same moment; one wins, the other gets NoSuchUpload, and the object
// is whole and readable. On both backends.
func TestMultipartRacingCompletions(t *testing.T) {
	t.Parallel()
	for _, be := range []string{"embedded", "moto"} {
		t.Run(be, func(t *testing.T) {
			t.Parallel()
			start := sharedBackend(t, be)
			a, b := sdkFor(t, start()), sdkFor(t, start())
			ctx := ctxT(t)
			bkt := aws.String("mprace")
			mustCreateBucket(t, a, "mprace")
			for round := range 3 {
				// Two processes complete one upload at the same moment.
				cr, err := a.CreateMultipartUpload(ctx, &s3.CreateMultipartUploadInput{Bucket: bkt, Key: aws.String("race")})
				if err != nil {
					t.Fatal(err)
				}
				race := []mpPart{{1, patternBytes(970+uint64(10*round), 5*mib)}, {2, patternBytes(971+uint64(10*round), 777)}}
				mpSendParts(t, a, "mprace", "race", aws.ToString(cr.UploadId), race)
				var wg sync.WaitGroup
				errs := make([]error, 2)
				for i, c := range []*s3.Client{a, b} {
					wg.Add(1)
					go func() {
						defer wg.Done()
						_, errs[i] = completeIn(c, ctx, "mprace", "race", aws.ToString(cr.UploadId), race)
					}()
				}
				wg.Wait()
				if errs[0] != nil && errs[1] != nil {
					t.Errorf("both racing completions failed: %v; %v", errs[0], errs[1])
				}
				for _, err := range errs {
					if code, _ := apiCode(err); err != nil && code != "NoSuchUpload" && code != "ConditionalRequestConflict" {
						t.Errorf("racing completion: %v", err)
					}
				}
				checkObject(t, b, "mprace", "race", joinParts(race), mpETag(race[0].Data, race[1].Data))
			}
		})
	}
}

// completeIn completes an upload with the parts' MD5s as ETags.
func completeIn(c *s3.Client, ctx context.Context, bucket, key, id string, parts []mpPart) (*s3.CompleteMultipartUploadOutput, error) {
	var cps []types.CompletedPart
	for _, p := range parts {
		cps = append(cps, types.CompletedPart{PartNumber: aws.Int32(p.N), ETag: aws.String(md5Hex(p.Data))})
	}
	return c.CompleteMultipartUpload(ctx, &s3.CompleteMultipartUploadInput{Bucket: aws.String(bucket), Key: aws.String(key),
		UploadId: aws.String(id), MultipartUpload: &types.CompletedMultipartUpload{Parts: cps}})
}
