package e2e

import (
	"bytes"
	"io"
	"net/http"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
)

// TestDeleteBucketAfterMultipart: s3seal keeps manifests and upload state
// under .s3seal/ in the bucket, hidden from listings. Once every client
// object is deleted the bucket can be deleted (here with `aws s3 rb
// --force`, as a user empties one), an upload still in progress included,
// as on S3. With a client object left, DeleteBucket is BucketNotEmpty and
// leaves s3seal's objects alone: the multipart object still reads after a
// restart (no manifest cached) and the upload can still complete.
func TestDeleteBucketAfterMultipart(t *testing.T) {
	t.Parallel()
	for _, be := range []string{"embedded", "moto"} {
		t.Run(be, func(t *testing.T) {
			t.Parallel()
			var m *motoServer
			if be == "moto" {
				m = startMoto(t)
			}
			p := startS3seal(t, sealOpts{Backend: m})
			c := sdkFor(t, p)
			ctx := ctxT(t)
			const bkt = "dropme"
			mustCreateBucket(t, c, bkt)
			upload := func(key string, data []byte) (string, string) {
				cr, err := c.CreateMultipartUpload(ctx, &s3.CreateMultipartUploadInput{Bucket: aws.String(bkt), Key: aws.String(key)})
				if err != nil {
					t.Fatal(err)
				}
				up, err := c.UploadPart(ctx, &s3.UploadPartInput{Bucket: aws.String(bkt), Key: aws.String(key), UploadId: cr.UploadId,
					PartNumber: aws.Int32(1), Body: bytes.NewReader(data)})
				if err != nil {
					t.Fatal(err)
				}
				return aws.ToString(cr.UploadId), aws.ToString(up.ETag)
			}
			mpData := patternBytes(1, 100000)
			id, etag := upload("mp", mpData)
			if _, err := c.CompleteMultipartUpload(ctx, &s3.CompleteMultipartUploadInput{Bucket: aws.String(bkt), Key: aws.String("mp"),
				UploadId: aws.String(id), MultipartUpload: &types.CompletedMultipartUpload{Parts: []types.CompletedPart{{PartNumber: aws.Int32(1), ETag: aws.String(etag)}}}}); err != nil {
				t.Fatal(err)
			}
			pending, _ := upload("pending", patternBytes(2, 1000))
			if _, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String(bkt), Key: aws.String("plain"), Body: bytes.NewReader([]byte("x"))}); err != nil {
				t.Fatal(err)
			}
			if _, err := c.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: aws.String(bkt), Key: aws.String("plain")}); err != nil {
				t.Fatal(err)
			}

			_, err := c.DeleteBucket(ctx, &s3.DeleteBucketInput{Bucket: aws.String(bkt)})
			wantStatus(t, "DeleteBucket with an object left", err, http.StatusConflict, "BucketNotEmpty")

			// A fresh process: nothing cached, so the manifest must be there.
			p.Stop()
			p = startS3seal(t, sealOpts{Backend: m, DataDir: p.DataDir, Key: p.Key})
			c = sdkFor(t, p)
			obj, err := c.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(bkt), Key: aws.String("mp")})
			if err != nil {
				t.Fatalf("multipart object after BucketNotEmpty: %v", err)
			}
			got, err := io.ReadAll(obj.Body)
			obj.Body.Close()
			if err != nil || !bytes.Equal(got, mpData) {
				t.Fatalf("multipart object after BucketNotEmpty: %d bytes, %v", len(got), err)
			}
			if _, err := c.ListParts(ctx, &s3.ListPartsInput{Bucket: aws.String(bkt), Key: aws.String("pending"), UploadId: aws.String(pending)}); err != nil {
				t.Fatalf("upload after BucketNotEmpty: %v", err)
			}

			newAWSCLI(t, p).run("s3", "rb", "--force", "s3://"+bkt)
			_, err = c.HeadBucket(ctx, &s3.HeadBucketInput{Bucket: aws.String(bkt)})
			wantStatus(t, "HeadBucket after rb --force", err, http.StatusNotFound, "")
			if _, err := c.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String(bkt)}); err != nil {
				t.Fatalf("CreateBucket again: %v", err)
			}
			out, err := c.ListMultipartUploads(ctx, &s3.ListMultipartUploadsInput{Bucket: aws.String(bkt)})
			if err != nil || len(out.Uploads) != 0 {
				t.Fatalf("uploads of the deleted bucket: %v %v", out, err)
			}
		})
	}
}
