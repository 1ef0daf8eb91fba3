package s3api

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
)

// Multipart answers as AWS words them (versitygw's integration suite):
// part-list errors, NoSuchBucket before NoSuchUpload, listing arguments,
// the absolute Location and conditional completions.
func TestMultipartAWSAnswers(t *testing.T) {
	url, ctx, c := newBucketServer(t, adminCreds())
	b, k := aws.String("bkt"), aws.String("dir/obj")
	create := func() *string {
		t.Helper()
		cr, err := c.CreateMultipartUpload(ctx, &s3.CreateMultipartUploadInput{Bucket: b, Key: k})
		if err != nil {
			t.Fatal(err)
		}
		return cr.UploadId
	}
	part := func(id *string, n int32, size int) types.CompletedPart {
		t.Helper()
		up, err := c.UploadPart(ctx, &s3.UploadPartInput{Bucket: b, Key: k, UploadId: id, PartNumber: aws.Int32(n),
			Body: bytes.NewReader(randData(size, uint64(n)))})
		if err != nil {
			t.Fatal(err)
		}
		return types.CompletedPart{PartNumber: aws.Int32(n), ETag: up.ETag}
	}
	complete := func(id *string, parts ...types.CompletedPart) (*s3.CompleteMultipartUploadOutput, error) {
		return c.CompleteMultipartUpload(ctx, &s3.CompleteMultipartUploadInput{Bucket: b, Key: k, UploadId: id,
			MultipartUpload: &types.CompletedMultipartUpload{Parts: parts}})
	}
	const invalidPart = "One or more of the specified parts could not be found.  The part may not have been uploaded, or the specified entity tag may not match the part's entity tag."
	id := create()
	p1, p2 := part(id, 1, 100), part(id, 2, 100)
	_, err := complete(id, p2, p1)
	checkErr(t, "parts out of order", err, "InvalidPartOrder", "The list of parts was not in ascending order. Parts must be ordered by part number.")
	_, err = complete(id, types.CompletedPart{PartNumber: aws.Int32(1), ETag: aws.String(`"0123456789abcdef0123456789abcdef"`)})
	checkErr(t, "wrong ETag", err, "InvalidPart", invalidPart)
	_, err = complete(id, types.CompletedPart{PartNumber: aws.Int32(3), ETag: p1.ETag})
	checkErr(t, "missing part", err, "InvalidPart", invalidPart)
	_, err = complete(id, p1, p2)
	checkErr(t, "small part", err, "EntityTooSmall", "Your proposed upload is smaller than the minimum allowed size")

	noUpload := "The specified multipart upload does not exist. The upload ID may be invalid, or the upload may have been aborted or completed."
	_, err = c.ListParts(ctx, &s3.ListPartsInput{Bucket: b, Key: k, UploadId: aws.String("nope")})
	checkErr(t, "list parts of no upload", err, "NoSuchUpload", noUpload)
	_, err = c.UploadPart(ctx, &s3.UploadPartInput{Bucket: b, Key: aws.String("other"), UploadId: id, PartNumber: aws.Int32(1), Body: strings.NewReader("x")})
	checkErr(t, "part for another key", err, "NoSuchUpload", noUpload)
	nb := aws.String("nobucket")
	_, err = c.UploadPart(ctx, &s3.UploadPartInput{Bucket: nb, Key: k, UploadId: id, PartNumber: aws.Int32(1), Body: strings.NewReader("x")})
	checkErr(t, "part in missing bucket", err, "NoSuchBucket", "The specified bucket does not exist.")
	_, err = c.AbortMultipartUpload(ctx, &s3.AbortMultipartUploadInput{Bucket: nb, Key: k, UploadId: id})
	checkErr(t, "abort in missing bucket", err, "NoSuchBucket", "The specified bucket does not exist.")
	_, err = c.CompleteMultipartUpload(ctx, &s3.CompleteMultipartUploadInput{Bucket: nb, Key: k, UploadId: id,
		MultipartUpload: &types.CompletedMultipartUpload{Parts: []types.CompletedPart{p1}}})
	checkErr(t, "complete in missing bucket", err, "NoSuchBucket", "The specified bucket does not exist.")

	_, err = c.ListParts(ctx, &s3.ListPartsInput{Bucket: b, Key: k, UploadId: id, MaxParts: aws.Int32(-3)})
	checkErr(t, "max-parts -3", err, "InvalidArgument", "Argument -3 must be an integer between 0 and 2147483647")
	for _, v := range []string{"invalid", "2736457823532448723"} {
		_, err = c.ListParts(ctx, &s3.ListPartsInput{Bucket: b, Key: k, UploadId: id, PartNumberMarker: aws.String(v)})
		checkErr(t, "part-number-marker "+v, err, "InvalidArgument", "Provided "+v+" not an integer or within integer range")
	}
	_, err = c.ListParts(ctx, &s3.ListPartsInput{Bucket: b, Key: k, UploadId: id, PartNumberMarker: aws.String("-14")})
	checkErr(t, "part-number-marker -14", err, "InvalidArgument", "Argument -14 must be an integer between 0 and 2147483647")
	_, err = c.ListMultipartUploads(ctx, &s3.ListMultipartUploadsInput{Bucket: b, MaxUploads: aws.Int32(-3)})
	checkErr(t, "max-uploads -3", err, "InvalidArgument", "Argument -3 must be an integer between 0 and 2147483647")

	p1 = part(id, 1, 5*mib)
	for _, h := range [][2]*string{{aws.String(`"x"`), aws.String(`"y"`)}, {nil, aws.String(`"y"`)}} {
		_, err = c.CompleteMultipartUpload(ctx, &s3.CompleteMultipartUploadInput{Bucket: b, Key: k, UploadId: id,
			IfMatch: h[0], IfNoneMatch: h[1], MultipartUpload: &types.CompletedMultipartUpload{Parts: []types.CompletedPart{p1}}})
		checkErr(t, "conditions", err, "NotImplemented", "A header you provided implies functionality that is not implemented.")
	}
	out, err := complete(id, p1, part(id, 2, 10))
	if err != nil {
		t.Fatal(err)
	}
	if want := url + "/bkt/dir/obj"; aws.ToString(out.Location) != want {
		t.Errorf("Location %q, want %q", aws.ToString(out.Location), want)
	}
}

// UploadPartCopy and ListParts answers as S3 gives them: a missing
// destination or source bucket is NoSuchBucket, a malformed range names its
// form without a period, a part copied into an upload without an algorithm
// reports no checksum, and ListParts of such an upload says "null".
func TestMultipartCopyAnswers(t *testing.T) {
	_, ctx, c := newBucketServer(t, adminCreds())
	b, k := aws.String("bkt"), aws.String("obj")
	if _, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: b, Key: aws.String("src"), Body: strings.NewReader("source data"),
		ChecksumAlgorithm: types.ChecksumAlgorithmSha1}); err != nil {
		t.Fatal(err)
	}
	cr, err := c.CreateMultipartUpload(ctx, &s3.CreateMultipartUploadInput{Bucket: b, Key: k})
	if err != nil {
		t.Fatal(err)
	}
	copyPart := func(bucket, src, rng string) (*s3.UploadPartCopyOutput, error) {
		in := &s3.UploadPartCopyInput{Bucket: aws.String(bucket), Key: k, UploadId: cr.UploadId, PartNumber: aws.Int32(1), CopySource: aws.String(src)}
		if rng != "" {
			in.CopySourceRange = aws.String(rng)
		}
		return c.UploadPartCopy(ctx, in)
	}
	_, err = copyPart("nobucket", "Copy-Source", "")
	checkErr(t, "missing destination bucket", err, "NoSuchBucket", "The specified bucket does not exist.")
	_, err = copyPart("bkt", "nosrc/bucket/src/obj", "")
	checkErr(t, "missing source bucket", err, "NoSuchBucket", "The specified bucket does not exist.")
	_, err = copyPart("bkt", "bkt/src", "bytes=200-100")
	checkErr(t, "bad range", err, "InvalidArgument", "The x-amz-copy-source-range value must be of the form bytes=first-last where first and last are the zero-based offsets of the first and last bytes to copy")
	out, err := copyPart("bkt", "bkt/src", "")
	if err != nil {
		t.Fatal(err)
	}
	if r := out.CopyPartResult; r.ChecksumCRC64NVME != nil || r.ChecksumCRC32 != nil || r.ChecksumSHA1 != nil {
		t.Errorf("copied part of an upload without algorithm reports checksums: %+v", r)
	}
	lp, err := c.ListParts(ctx, &s3.ListPartsInput{Bucket: b, Key: k, UploadId: cr.UploadId})
	if err != nil {
		t.Fatal(err)
	}
	if lp.ChecksumAlgorithm != "null" || lp.ChecksumType != "null" {
		t.Errorf("ListParts without algorithm: %q %q, want null null", lp.ChecksumAlgorithm, lp.ChecksumType)
	}
}

// AbortMultipartUpload's x-amz-if-match-initiated-time: another past time
// is PreconditionFailed and leaves the upload; the upload's own time, or a
// time in the future, aborts.
func TestAbortIfMatchInitiatedTime(t *testing.T) {
	_, ctx, c := newBucketServer(t, adminCreds())
	b, k := aws.String("bkt"), aws.String("obj")
	initiated := func(id *string) time.Time {
		t.Helper()
		out, err := c.ListMultipartUploads(ctx, &s3.ListMultipartUploadsInput{Bucket: b})
		if err != nil {
			t.Fatal(err)
		}
		for _, u := range out.Uploads {
			if *u.UploadId == *id {
				return *u.Initiated
			}
		}
		t.Fatalf("upload %s not listed", *id)
		return time.Time{}
	}
	for _, tc := range []struct {
		name  string
		at    func(init time.Time) time.Time
		abort bool
	}{
		{"same time", func(i time.Time) time.Time { return i }, true},
		{"future", func(i time.Time) time.Time { return i.AddDate(1, 0, 0) }, true},
		{"other past time", func(i time.Time) time.Time { return i.AddDate(-1, 0, 1) }, false},
	} {
		cr, err := c.CreateMultipartUpload(ctx, &s3.CreateMultipartUploadInput{Bucket: b, Key: k})
		if err != nil {
			t.Fatal(err)
		}
		_, err = c.AbortMultipartUpload(ctx, &s3.AbortMultipartUploadInput{Bucket: b, Key: k, UploadId: cr.UploadId,
			IfMatchInitiatedTime: aws.Time(tc.at(initiated(cr.UploadId)))})
		if tc.abort && err != nil {
			t.Errorf("%s: %v", tc.name, err)
		}
		if !tc.abort {
			checkErr(t, tc.name, err, "PreconditionFailed", "At least one of the pre-conditions you specified did not hold.")
			if _, err := c.ListParts(ctx, &s3.ListPartsInput{Bucket: b, Key: k, UploadId: cr.UploadId}); err != nil {
				t.Errorf("%s: upload gone: %v", tc.name, err)
			}
		}
	}
}

// max-uploads=0 lists no upload but says there are more (the
// store's 0 means its default, 1000).
func TestListUploadsMaxZero(t *testing.T) {
	_, ctx, c := newBucketServer(t, SingleCredential("ak", "sk"))
	for _, k := range []string{"a", "b"} {
		if _, err := c.CreateMultipartUpload(ctx, &s3.CreateMultipartUploadInput{Bucket: aws.String("bkt"), Key: aws.String(k)}); err != nil {
			t.Fatal(err)
		}
	}
	out, err := c.ListMultipartUploads(ctx, &s3.ListMultipartUploadsInput{Bucket: aws.String("bkt"), MaxUploads: aws.Int32(0)})
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Uploads) != 0 || !aws.ToBool(out.IsTruncated) {
		t.Errorf("max-uploads=0: %d uploads, truncated %v; want none, truncated", len(out.Uploads), aws.ToBool(out.IsTruncated))
	}
}
