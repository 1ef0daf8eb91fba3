package s3api

import (
	"bytes"
	"net/http"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
)

// ListObjects (V1 and V2) names each object's checksum algorithm and type,
// as S3 does: FULL_OBJECT for a PUT, the upload's type for a multipart
// object, and S3's default FULL_OBJECT CRC64NVME for an upload created
// without an algorithm, even when its parts named another.
func TestListObjectsChecksums(t *testing.T) {
	_, ctx, c := newBucketServer(t, adminCreds())
	b := aws.String("bkt")
	type sum struct {
		alg types.ChecksumAlgorithm
		typ types.ChecksumType
	}
	want := map[string]sum{}
	for _, alg := range []types.ChecksumAlgorithm{types.ChecksumAlgorithmCrc32, types.ChecksumAlgorithmSha256, types.ChecksumAlgorithmCrc32c} {
		key := "put-" + string(alg)
		if _, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: b, Key: aws.String(key), Body: strings.NewReader(key), ChecksumAlgorithm: alg}); err != nil {
			t.Fatal(err)
		}
		want[key] = sum{alg, types.ChecksumTypeFullObject}
	}
	multipart := func(key string, alg types.ChecksumAlgorithm, typ types.ChecksumType, partAlg types.ChecksumAlgorithm) {
		t.Helper()
		cr, err := c.CreateMultipartUpload(ctx, &s3.CreateMultipartUploadInput{Bucket: b, Key: aws.String(key), ChecksumAlgorithm: alg, ChecksumType: typ})
		if err != nil {
			t.Fatal(err)
		}
		var parts []types.CompletedPart
		for n, p := range [][]byte{bytes.Repeat([]byte("p"), 5<<20), []byte("tail")} {
			up, err := c.UploadPart(ctx, &s3.UploadPartInput{Bucket: b, Key: aws.String(key), UploadId: cr.UploadId,
				PartNumber: aws.Int32(int32(n + 1)), Body: bytes.NewReader(p), ChecksumAlgorithm: partAlg})
			if err != nil {
				t.Fatal(err)
			}
			parts = append(parts, types.CompletedPart{PartNumber: aws.Int32(int32(n + 1)), ETag: up.ETag,
				ChecksumCRC32: up.ChecksumCRC32, ChecksumSHA1: up.ChecksumSHA1})
		}
		if _, err := c.CompleteMultipartUpload(ctx, &s3.CompleteMultipartUploadInput{Bucket: b, Key: aws.String(key), UploadId: cr.UploadId,
			MultipartUpload: &types.CompletedMultipartUpload{Parts: parts}}); err != nil {
			t.Fatal(err)
		}
		want[key] = sum{alg, typ}
		if alg == "" {
			want[key] = sum{types.ChecksumAlgorithmCrc64nvme, types.ChecksumTypeFullObject}
		}
	}
	multipart("mp-sha1", types.ChecksumAlgorithmSha1, types.ChecksumTypeComposite, types.ChecksumAlgorithmSha1)
	multipart("mp-crc32", types.ChecksumAlgorithmCrc32, types.ChecksumTypeFullObject, types.ChecksumAlgorithmCrc32)
	multipart("mp-none", "", "", types.ChecksumAlgorithmCrc32)

	check := func(what string, contents []types.Object) {
		t.Helper()
		if len(contents) != len(want) {
			t.Fatalf("%s: %d objects, want %d", what, len(contents), len(want))
		}
		for _, o := range contents {
			w := want[aws.ToString(o.Key)]
			var got sum
			if len(o.ChecksumAlgorithm) > 0 {
				got.alg = o.ChecksumAlgorithm[0]
			}
			got.typ = o.ChecksumType
			if got != w || len(o.ChecksumAlgorithm) > 1 {
				t.Errorf("%s: %s lists %v %q, want %q %q", what, aws.ToString(o.Key), o.ChecksumAlgorithm, o.ChecksumType, w.alg, w.typ)
			}
		}
	}
	v1, err := c.ListObjects(ctx, &s3.ListObjectsInput{Bucket: b})
	if err != nil {
		t.Fatal(err)
	}
	check("V1", v1.Contents)
	v2, err := c.ListObjectsV2(ctx, &s3.ListObjectsV2Input{Bucket: b})
	if err != nil {
		t.Fatal(err)
	}
	check("V2", v2.Contents)
}

// ListMultipartUploads names each upload's checksum algorithm and type as
// given at CreateMultipartUpload; an upload created without one has
// neither element.
func TestListMultipartUploadsChecksums(t *testing.T) {
	url, ctx, c := newBucketServer(t, adminCreds())
	b := aws.String("bkt")
	want := map[string][2]string{
		"a": {"CRC32", "COMPOSITE"},
		"b": {"CRC32C", "FULL_OBJECT"},
		"c": {"CRC64NVME", "FULL_OBJECT"},
		"d": {"SHA512", "COMPOSITE"},
		"e": {"XXHASH128", "COMPOSITE"},
		"f": {"", ""},
	}
	for key, w := range want {
		if _, err := c.CreateMultipartUpload(ctx, &s3.CreateMultipartUploadInput{Bucket: b, Key: aws.String(key),
			ChecksumAlgorithm: types.ChecksumAlgorithm(w[0]), ChecksumType: types.ChecksumType(w[1])}); err != nil {
			t.Fatal(err)
		}
	}
	out, err := c.ListMultipartUploads(ctx, &s3.ListMultipartUploadsInput{Bucket: b})
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Uploads) != len(want) {
		t.Fatalf("%d uploads, want %d", len(out.Uploads), len(want))
	}
	for _, u := range out.Uploads {
		if got, w := [2]string{string(u.ChecksumAlgorithm), string(u.ChecksumType)}, want[aws.ToString(u.Key)]; got != w {
			t.Errorf("%s: %v, want %v", aws.ToString(u.Key), got, w)
		}
	}
	// Without a checksum, neither element is there at all.
	resp, raw := doSigned(t, http.MethodGet, url+"/bkt?uploads=&prefix=f", nil, "")
	if resp.StatusCode != http.StatusOK || strings.Contains(raw, "Checksum") || !strings.Contains(raw, "<Key>f</Key>") {
		t.Errorf("upload without a checksum: %d %s", resp.StatusCode, raw)
	}
}
