package s3api

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
)

// Keys and s3seal's reserved ".s3seal/" namespace: no listing, marker or
// write lets a client see or break s3seal's own objects.

// A key of 230 bytes whose segments are all short (S3 allows 1024, and
// the embedded store documents only a 255-byte limit per segment): gofakes3
// keeps each object's metadata in one flat file named by the whole key
// ("/" replaced by "_") plus 33 bytes of hash, which exceeds the 255-byte
// file-name limit. The PUT succeeds (or is a 400 naming a limit) and
// the bucket stays listable.
func TestEmbeddedLongKeyShortSegments(t *testing.T) {
	_, ctx, c := newBucketServer(t, adminCreds())
	b := aws.String("bkt")
	if _, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: b, Key: aws.String("ok"), Body: strings.NewReader("fine")}); err != nil {
		t.Fatal(err)
	}
	key := strings.Repeat("abcdefghi/", 23) + "z" // 231 bytes, short segments
	_, perr := c.PutObject(ctx, &s3.PutObjectInput{Bucket: b, Key: aws.String(key), Body: strings.NewReader("x")})
	t.Logf("PUT of a %d-byte key: err=%v status=%d code=%q", len(key), perr, httpStatus(perr), apiCode(perr))
	if perr != nil && httpStatus(perr) >= 500 {
		t.Errorf("PUT of a %d-byte key with 9-byte segments: %v (status %d), want success or a 400 naming the limit", len(key), perr, httpStatus(perr))
	}
	list, err := c.ListObjectsV2(ctx, &s3.ListObjectsV2Input{Bucket: b})
	if err != nil {
		t.Errorf("the whole bucket can no longer be listed after that PUT: %v", err)
	} else {
		for _, o := range list.Contents {
			t.Logf("listed %q %d", aws.ToString(o.Key), aws.ToInt64(o.Size))
		}
	}
	if _, err := c.GetObject(ctx, &s3.GetObjectInput{Bucket: b, Key: aws.String("ok")}); err != nil {
		t.Errorf("GET of another key: %v", err)
	}
	// The embedded store stores such keys (its metadata file
	// gets a hashed name): the object reads back, and once deleted it
	// leaves nothing behind that blocks "abcdefghi" or DeleteBucket. A PUT
	// of "abcdefghi" beside a stored "abcdefghi/..." is rightly refused,
	// so it is made once that key is deleted.
	if perr == nil {
		if got := readObject(t, c, "bkt", key); got != "x" {
			t.Errorf("GET of the %d-byte key: %q, want \"x\"", len(key), got)
		}
		if _, err := c.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: b, Key: aws.String(key)}); err != nil {
			t.Fatalf("DELETE of the %d-byte key: %v", len(key), err)
		}
	}
	// A failed or deleted PUT left nothing behind: nothing is listed under
	// "abcdefghi/", so an object "abcdefghi" can be stored.
	if _, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: b, Key: aws.String("abcdefghi"), Body: strings.NewReader("x")}); err != nil {
		t.Errorf("PUT abcdefghi (nothing listed under abcdefghi/): %v", err)
	}
	for _, k := range []string{"abcdefghi", "ok"} {
		if _, err := c.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: b, Key: aws.String(k)}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := c.DeleteBucket(ctx, &s3.DeleteBucketInput{Bucket: b}); err != nil {
		t.Errorf("DeleteBucket of the emptied bucket: %v", err)
	}
}

// A bucket holding only s3seal's own objects (a multipart upload in
// progress keeps its state under ".s3seal/"): a listing whose delimiter
// cuts ".s3seal/..." before its "/" shows a common prefix the client
// never wrote (".s3" with delimiter "3") unless the reserved prefix is
// hidden however the delimiter cuts it: nothing is listed.
func TestDelimiterHidesReservedPrefix(t *testing.T) {
	_, ctx, c := newBucketServer(t, adminCreds())
	b := aws.String("bkt")
	up, err := c.CreateMultipartUpload(ctx, &s3.CreateMultipartUploadInput{Bucket: b, Key: aws.String("k")})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.UploadPart(ctx, &s3.UploadPartInput{Bucket: b, Key: aws.String("k"), UploadId: up.UploadId,
		PartNumber: aws.Int32(1), Body: strings.NewReader("part")}); err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{"3", "e", "."} {
		l, err := c.ListObjectsV2(ctx, &s3.ListObjectsV2Input{Bucket: b, Delimiter: aws.String(d)})
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range l.CommonPrefixes {
			t.Errorf("ListObjectsV2 delimiter %q: common prefix %q (only s3seal's objects are in the bucket)", d, aws.ToString(p.Prefix))
		}
		for _, o := range l.Contents {
			t.Errorf("ListObjectsV2 delimiter %q: key %q", d, aws.ToString(o.Key))
		}
		v, err := c.ListObjectVersions(ctx, &s3.ListObjectVersionsInput{Bucket: b, Delimiter: aws.String(d)})
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range v.CommonPrefixes {
			t.Errorf("ListObjectVersions delimiter %q: common prefix %q", d, aws.ToString(p.Prefix))
		}
	}
}

// ListObjects (V1) and ListObjectVersions pages cut among s3seal's hidden
// objects (".s3seal/manifests/<oid>/<backend ETag>", ".s3seal/uploads/...")
// give no marker the client can read that names anything under
// ".s3seal/".
func TestNextMarkerNeverNamesReservedKey(t *testing.T) {
	_, ctx, c := newBucketServer(t, adminCreds())
	b := aws.String("bkt")
	up, err := c.CreateMultipartUpload(ctx, &s3.CreateMultipartUploadInput{Bucket: b, Key: aws.String("k")})
	_ = up
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.UploadPart(ctx, &s3.UploadPartInput{Bucket: b, Key: aws.String("k"), UploadId: up.UploadId,
		PartNumber: aws.Int32(1), Body: strings.NewReader("part")}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: b, Key: aws.String("z"), Body: strings.NewReader("z")}); err != nil {
		t.Fatal(err)
	}
	var marker *string
	for i := 0; i < 10; i++ {
		l, err := c.ListObjects(ctx, &s3.ListObjectsInput{Bucket: b, MaxKeys: aws.Int32(1), Marker: marker})
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("page %d: %d keys, truncated %v, NextMarker %q", i, len(l.Contents), aws.ToBool(l.IsTruncated), aws.ToString(l.NextMarker))
		if strings.HasPrefix(aws.ToString(l.NextMarker), ".s3seal/") {
			t.Errorf("NextMarker names s3seal's hidden object %q", aws.ToString(l.NextMarker))
		}
		if !aws.ToBool(l.IsTruncated) {
			break
		}
		marker = l.NextMarker
		if marker == nil && len(l.Contents) > 0 {
			marker = l.Contents[len(l.Contents)-1].Key
		}
	}
	// ListObjectVersions pages the same way: NextKeyMarker.
	var km, vm *string
	for i := 0; i < 10; i++ {
		l, err := c.ListObjectVersions(ctx, &s3.ListObjectVersionsInput{Bucket: b, MaxKeys: aws.Int32(1), KeyMarker: km, VersionIdMarker: vm})
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("versions page %d: %d versions, truncated %v, NextKeyMarker %q", i, len(l.Versions), aws.ToBool(l.IsTruncated), aws.ToString(l.NextKeyMarker))
		if strings.HasPrefix(aws.ToString(l.NextKeyMarker), ".s3seal/") {
			t.Errorf("NextKeyMarker names s3seal's hidden object %q", aws.ToString(l.NextKeyMarker))
		}
		if !aws.ToBool(l.IsTruncated) {
			break
		}
		km, vm = l.NextKeyMarker, l.NextVersionIdMarker
	}
}

// On the embedded store s3seal keeps its state in the same file tree as
// client objects, so a client object named ".s3seal" would be a file where
// s3seal needs the directory ".s3seal/", and no multipart upload would
// work in that bucket afterwards. The key ".s3seal" is reserved like the
// keys under ".s3seal/": refused up front, never bucket-wide multipart
// breaking.
func TestClientKeyDotS3sealReserved(t *testing.T) {
	_, ctx, c := newBucketServer(t, adminCreds())
	b := aws.String("bkt")
	// Every write of ".s3seal" is a 400
	// InvalidArgument naming the reservation, before and after s3seal
	// has state in the bucket, and multipart uploads keep working.
	refused := func(what string, err error) {
		t.Helper()
		if apiCode(err) != "InvalidArgument" || httpStatus(err) != 400 || !strings.Contains(err.Error(), "reserved by s3seal") {
			t.Errorf("%s: %v, want 400 InvalidArgument naming the reservation", what, err)
		}
	}
	_, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: b, Key: aws.String(".s3seal"), Body: strings.NewReader("x")})
	refused("PUT .s3seal", err)
	up, err := c.CreateMultipartUpload(ctx, &s3.CreateMultipartUploadInput{Bucket: b, Key: aws.String("other")})
	if err != nil {
		t.Fatalf("CreateMultipartUpload of another key after a PUT of .s3seal: %v", err)
	}
	part, err := c.UploadPart(ctx, &s3.UploadPartInput{Bucket: b, Key: aws.String("other"), UploadId: up.UploadId,
		PartNumber: aws.Int32(1), Body: strings.NewReader("part")})
	if err != nil {
		t.Fatalf("UploadPart of another key after a PUT of .s3seal: %v", err)
	}
	// With s3seal's state under ".s3seal/" now present.
	_, err = c.PutObject(ctx, &s3.PutObjectInput{Bucket: b, Key: aws.String(".s3seal"), Body: strings.NewReader("x")})
	refused("PUT .s3seal during an upload", err)
	if _, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: b, Key: aws.String("src"), Body: strings.NewReader("s")}); err != nil {
		t.Fatal(err)
	}
	_, err = c.CopyObject(ctx, &s3.CopyObjectInput{Bucket: b, Key: aws.String(".s3seal"), CopySource: aws.String("bkt/src")})
	refused("CopyObject to .s3seal", err)
	_, err = c.CreateMultipartUpload(ctx, &s3.CreateMultipartUploadInput{Bucket: b, Key: aws.String(".s3seal")})
	refused("CreateMultipartUpload of .s3seal", err)
	// Reads and deletes are not refused: an object of that name written
	// before stays reachable.
	if _, err := c.HeadObject(ctx, &s3.HeadObjectInput{Bucket: b, Key: aws.String(".s3seal")}); httpStatus(err) != 404 {
		t.Errorf("HEAD .s3seal: %v, want 404", err)
	}
	if _, err := c.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: b, Key: aws.String(".s3seal")}); err != nil {
		t.Errorf("DELETE .s3seal: %v", err)
	}
	if _, err := c.CompleteMultipartUpload(ctx, &s3.CompleteMultipartUploadInput{Bucket: b, Key: aws.String("other"), UploadId: up.UploadId,
		MultipartUpload: &types.CompletedMultipartUpload{Parts: []types.CompletedPart{{PartNumber: aws.Int32(1), ETag: part.ETag}}}}); err != nil {
		t.Errorf("CompleteMultipartUpload: %v", err)
	}
}

// DeleteBucket answers BucketNotEmpty for client keys
// that sort around ".s3seal/", and touches neither them nor an upload.
func TestDeleteBucketKeysAroundReserved(t *testing.T) {
	url := newTestServer(t, adminCreds())
	ctx := context.Background()
	c := sdkClient(url, "ak", "sk")
	for i, k := range []string{".s3seal0", ".s3seal-x/y", ".s3sea", "\u00e9", ".s3seal\u00e9/z", "-", ".s3seal.", "~"} {
		b := aws.String(fmt.Sprintf("bkt%d", i))
		if _, err := c.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: b}); err != nil {
			t.Fatal(err)
		}
		up, err := c.CreateMultipartUpload(ctx, &s3.CreateMultipartUploadInput{Bucket: b, Key: aws.String("u")})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: b, Key: aws.String(k), Body: strings.NewReader("x")}); err != nil {
			t.Fatalf("PUT %q: %v", k, err)
		}
		_, err = c.DeleteBucket(ctx, &s3.DeleteBucketInput{Bucket: b})
		if apiCode(err) != "BucketNotEmpty" {
			t.Errorf("DeleteBucket with only %q: %v", k, err)
		}
		if _, err := c.ListParts(ctx, &s3.ListPartsInput{Bucket: b, Key: aws.String("u"), UploadId: up.UploadId}); err != nil {
			t.Errorf("upload after refused DeleteBucket (%q): %v", k, err)
		}
	}
}
