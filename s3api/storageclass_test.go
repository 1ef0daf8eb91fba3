package s3api

import (
	"io"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
)

// x-amz-storage-class and x-amz-website-redirect-location are kept and
// reported on HEAD, GET and in listings; STANDARD is not reported on
// HEAD/GET, as S3 omits it.
func TestStorageClassAndRedirectKept(t *testing.T) {
	_, ctx, c := newBucketServer(t, adminCreds())
	b := aws.String("bkt")
	_, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: b, Key: aws.String("ia"), Body: strings.NewReader("data"),
		StorageClass: types.StorageClassStandardIa, WebsiteRedirectLocation: aws.String("/elsewhere")})
	if err != nil {
		t.Fatal(err)
	}
	head, err := c.HeadObject(ctx, &s3.HeadObjectInput{Bucket: b, Key: aws.String("ia")})
	if err != nil || head.StorageClass != types.StorageClassStandardIa || aws.ToString(head.WebsiteRedirectLocation) != "/elsewhere" {
		t.Fatalf("HEAD: class %q redirect %q (%v)", head.StorageClass, aws.ToString(head.WebsiteRedirectLocation), err)
	}
	get, err := c.GetObject(ctx, &s3.GetObjectInput{Bucket: b, Key: aws.String("ia")})
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(get.Body)
	get.Body.Close()
	if string(body) != "data" || get.StorageClass != types.StorageClassStandardIa || aws.ToString(get.WebsiteRedirectLocation) != "/elsewhere" {
		t.Fatalf("GET: %q class %q redirect %q", body, get.StorageClass, aws.ToString(get.WebsiteRedirectLocation))
	}
	if _, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: b, Key: aws.String("std"), Body: strings.NewReader("x"),
		StorageClass: types.StorageClassStandard}); err != nil {
		t.Fatal(err)
	}
	head, err = c.HeadObject(ctx, &s3.HeadObjectInput{Bucket: b, Key: aws.String("std")})
	if err != nil || head.StorageClass != "" || head.WebsiteRedirectLocation != nil {
		t.Fatalf("HEAD of STANDARD: class %q redirect %v (%v), want neither", head.StorageClass, head.WebsiteRedirectLocation, err)
	}
	// A copy takes the class and redirect from its request, not the source.
	if _, err := c.CopyObject(ctx, &s3.CopyObjectInput{Bucket: b, Key: aws.String("copy"), CopySource: aws.String("bkt/ia")}); err != nil {
		t.Fatal(err)
	}
	head, err = c.HeadObject(ctx, &s3.HeadObjectInput{Bucket: b, Key: aws.String("copy")})
	if err != nil || head.StorageClass != "" || head.WebsiteRedirectLocation != nil {
		t.Fatalf("plain copy: class %q redirect %v (%v), want neither", head.StorageClass, head.WebsiteRedirectLocation, err)
	}
	if _, err := c.CopyObject(ctx, &s3.CopyObjectInput{Bucket: b, Key: aws.String("std"), CopySource: aws.String("bkt/std"),
		StorageClass: types.StorageClassGlacierIr}); err != nil {
		t.Fatalf("copy onto itself changing the class: %v", err)
	}
	// Multipart uploads carry both from CreateMultipartUpload.
	mu, err := c.CreateMultipartUpload(ctx, &s3.CreateMultipartUploadInput{Bucket: b, Key: aws.String("mp"),
		StorageClass: types.StorageClassOnezoneIa, WebsiteRedirectLocation: aws.String("https://example.com/x")})
	if err != nil {
		t.Fatal(err)
	}
	ups, err := c.ListMultipartUploads(ctx, &s3.ListMultipartUploadsInput{Bucket: b})
	if err != nil || len(ups.Uploads) != 1 || ups.Uploads[0].StorageClass != types.StorageClassOnezoneIa {
		t.Fatalf("ListMultipartUploads: %+v (%v), want the upload's class", ups, err)
	}
	part, err := c.UploadPart(ctx, &s3.UploadPartInput{Bucket: b, Key: aws.String("mp"), UploadId: mu.UploadId,
		PartNumber: aws.Int32(1), Body: strings.NewReader("part")})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.CompleteMultipartUpload(ctx, &s3.CompleteMultipartUploadInput{Bucket: b, Key: aws.String("mp"), UploadId: mu.UploadId,
		MultipartUpload: &types.CompletedMultipartUpload{Parts: []types.CompletedPart{{PartNumber: aws.Int32(1), ETag: part.ETag}}}}); err != nil {
		t.Fatal(err)
	}
	head, err = c.HeadObject(ctx, &s3.HeadObjectInput{Bucket: b, Key: aws.String("mp")})
	if err != nil || head.StorageClass != types.StorageClassOnezoneIa || aws.ToString(head.WebsiteRedirectLocation) != "https://example.com/x" {
		t.Fatalf("multipart: class %q redirect %q (%v)", head.StorageClass, aws.ToString(head.WebsiteRedirectLocation), err)
	}
	list, err := c.ListObjectsV2(ctx, &s3.ListObjectsV2Input{Bucket: b})
	if err != nil {
		t.Fatal(err)
	}
	classes := map[string]types.ObjectStorageClass{}
	for _, o := range list.Contents {
		classes[aws.ToString(o.Key)] = o.StorageClass
	}
	if classes["ia"] != "STANDARD_IA" || classes["std"] != "GLACIER_IR" || classes["copy"] != "STANDARD" || classes["mp"] != "ONEZONE_IA" {
		t.Errorf("listed classes %v", classes)
	}
	_, err = c.PutObject(ctx, &s3.PutObjectInput{Bucket: b, Key: aws.String("bad"), Body: strings.NewReader("x"), StorageClass: "FOO"})
	checkErr(t, "unknown class", err, "InvalidStorageClass", "The storage class you specified is not valid.")
	_, err = c.PutObject(ctx, &s3.PutObjectInput{Bucket: b, Key: aws.String("bad"), Body: strings.NewReader("x"), WebsiteRedirectLocation: aws.String("elsewhere")})
	checkErr(t, "relative redirect", err, "InvalidRedirectLocation", "The website redirect location must have a prefix of 'http://' or 'https://' or '/'.")
}
