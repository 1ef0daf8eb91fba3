package s3api

import (
	"bytes"
	"encoding/base64"
	"maps"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"

	"github.com/s3seal/s3seal/checksum"
)

// sumOf is the base64 checksum of b with algorithm a, as S3 prints it.
func sumOf(a checksum.Algorithm, b []byte) string {
	h := a.New()
	h.Write(b)
	return base64.StdEncoding.EncodeToString(h.Sum(nil))
}

// An upload created without an algorithm gets S3's FULL_OBJECT CRC64NVME
// even when its parts carry other checksums (the SDK's default CRC32, a
// SHA-256, a copied part): each part keeps its CRC64NVME beside the
// client's, which UploadPart and ListParts still report alone; a checksum
// stated on the completion is ignored (versitygw's
// CompleteMultipartUpload_should_ignore_the_final_checksum).
func TestMultipartDefaultChecksumBesideClients(t *testing.T) {
	_, ctx, c := newBucketServer(t, adminCreds())
	b, k := aws.String("bkt"), aws.String("obj")
	p1 := bytes.Repeat([]byte("part one "), (5<<20)/9+1)
	p2 := bytes.Repeat([]byte("two "), (5<<20)/4+1)
	p3 := []byte("copied source, the last part")
	if _, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: b, Key: aws.String("src"), Body: bytes.NewReader(p3)}); err != nil {
		t.Fatal(err)
	}
	cr, err := c.CreateMultipartUpload(ctx, &s3.CreateMultipartUploadInput{Bucket: b, Key: k})
	if err != nil {
		t.Fatal(err)
	}
	id := cr.UploadId
	u1, err := c.UploadPart(ctx, &s3.UploadPartInput{Bucket: b, Key: k, UploadId: id, PartNumber: aws.Int32(1),
		Body: bytes.NewReader(p1)}, func(o *s3.Options) {
		o.RequestChecksumCalculation = aws.RequestChecksumCalculationWhenSupported // its default CRC32
	})
	if err != nil {
		t.Fatal(err)
	}
	if aws.ToString(u1.ChecksumCRC32) != sumOf(checksum.CRC32, p1) || u1.ChecksumCRC64NVME != nil {
		t.Errorf("UploadPart 1 answers CRC32 %v CRC64NVME %v, want the client's CRC32 alone", aws.ToString(u1.ChecksumCRC32), aws.ToString(u1.ChecksumCRC64NVME))
	}
	u2, err := c.UploadPart(ctx, &s3.UploadPartInput{Bucket: b, Key: k, UploadId: id, PartNumber: aws.Int32(2),
		Body: bytes.NewReader(p2), ChecksumAlgorithm: types.ChecksumAlgorithmSha256})
	if err != nil {
		t.Fatal(err)
	}
	if aws.ToString(u2.ChecksumSHA256) != sumOf(checksum.SHA256, p2) || u2.ChecksumCRC64NVME != nil {
		t.Errorf("UploadPart 2 answers SHA256 %v CRC64NVME %v, want the client's SHA256 alone", aws.ToString(u2.ChecksumSHA256), aws.ToString(u2.ChecksumCRC64NVME))
	}
	u3, err := c.UploadPartCopy(ctx, &s3.UploadPartCopyInput{Bucket: b, Key: k, UploadId: id, PartNumber: aws.Int32(3),
		CopySource: aws.String("bkt/src")})
	if err != nil {
		t.Fatal(err)
	}

	lp, err := c.ListParts(ctx, &s3.ListPartsInput{Bucket: b, Key: k, UploadId: id})
	if err != nil {
		t.Fatal(err)
	}
	if len(lp.Parts) != 3 {
		t.Fatalf("ListParts: %d parts", len(lp.Parts))
	}
	if p := lp.Parts[0]; aws.ToString(p.ChecksumCRC32) != sumOf(checksum.CRC32, p1) || p.ChecksumCRC64NVME != nil {
		t.Errorf("ListParts part 1: CRC32 %v CRC64NVME %v, want the client's CRC32 alone", aws.ToString(p.ChecksumCRC32), aws.ToString(p.ChecksumCRC64NVME))
	}
	if p := lp.Parts[1]; aws.ToString(p.ChecksumSHA256) != sumOf(checksum.SHA256, p2) || p.ChecksumCRC64NVME != nil {
		t.Errorf("ListParts part 2: SHA256 %v CRC64NVME %v, want the client's SHA256 alone", aws.ToString(p.ChecksumSHA256), aws.ToString(p.ChecksumCRC64NVME))
	}

	whole := append(append(append([]byte{}, p1...), p2...), p3...)
	want := sumOf(checksum.CRC64NVME, whole)
	res, err := c.CompleteMultipartUpload(ctx, &s3.CompleteMultipartUploadInput{Bucket: b, Key: k, UploadId: id,
		ChecksumCRC64NVME: aws.String("vqf3hRLTlJw="), // not this object's: ignored, as S3 does
		MultipartUpload: &types.CompletedMultipartUpload{Parts: []types.CompletedPart{
			{PartNumber: aws.Int32(1), ETag: u1.ETag, ChecksumCRC32: u1.ChecksumCRC32},
			{PartNumber: aws.Int32(2), ETag: u2.ETag, ChecksumSHA256: u2.ChecksumSHA256},
			{PartNumber: aws.Int32(3), ETag: u3.CopyPartResult.ETag},
		}}})
	if err != nil {
		t.Fatal(err)
	}
	if aws.ToString(res.ChecksumCRC64NVME) != want || res.ChecksumType != types.ChecksumTypeFullObject ||
		res.ChecksumCRC32 != nil || res.ChecksumSHA256 != nil {
		t.Errorf("completion: CRC64NVME %q type %q CRC32 %v SHA256 %v, want FULL_OBJECT %q alone",
			aws.ToString(res.ChecksumCRC64NVME), res.ChecksumType, res.ChecksumCRC32, res.ChecksumSHA256, want)
	}
	head, err := c.HeadObject(ctx, &s3.HeadObjectInput{Bucket: b, Key: k, ChecksumMode: types.ChecksumModeEnabled})
	if err != nil {
		t.Fatal(err)
	}
	if aws.ToString(head.ChecksumCRC64NVME) != want || head.ChecksumType != types.ChecksumTypeFullObject ||
		head.ChecksumCRC32 != nil || head.ChecksumSHA256 != nil {
		t.Errorf("HEAD: CRC64NVME %q type %q CRC32 %v, want FULL_OBJECT %q alone",
			aws.ToString(head.ChecksumCRC64NVME), head.ChecksumType, head.ChecksumCRC32, want)
	}
	attrs, err := c.GetObjectAttributes(ctx, &s3.GetObjectAttributesInput{Bucket: b, Key: k,
		ObjectAttributes: []types.ObjectAttributes{types.ObjectAttributesChecksum, types.ObjectAttributesObjectParts}})
	if err != nil {
		t.Fatal(err)
	}
	if attrs.Checksum == nil || aws.ToString(attrs.Checksum.ChecksumCRC64NVME) != want ||
		attrs.Checksum.ChecksumType != types.ChecksumTypeFullObject || attrs.Checksum.ChecksumCRC32 != nil {
		t.Errorf("GetObjectAttributes Checksum: %+v, want FULL_OBJECT CRC64NVME %q alone", attrs.Checksum, want)
	}
	if attrs.ObjectParts == nil || len(attrs.ObjectParts.Parts) != 3 {
		t.Fatalf("GetObjectAttributes ObjectParts: %+v", attrs.ObjectParts)
	}
	for i, data := range [][]byte{p1, p2, p3} {
		p := attrs.ObjectParts.Parts[i]
		if aws.ToString(p.ChecksumCRC64NVME) != sumOf(checksum.CRC64NVME, data) || p.ChecksumCRC32 != nil || p.ChecksumSHA256 != nil {
			t.Errorf("ObjectParts part %d: CRC64NVME %v CRC32 %v SHA256 %v, want the part's CRC64NVME alone",
				i+1, aws.ToString(p.ChecksumCRC64NVME), p.ChecksumCRC32, p.ChecksumSHA256)
		}
	}
}

// S3 reports a part's own checksum in UploadPart and ListParts, without
// the CRC64NVME s3seal keeps beside it; one of an upload created with an
// algorithm is reported as kept.
func TestClientChecksums(t *testing.T) {
	for _, c := range []struct {
		alg  string
		in   map[string]string
		want map[string]string
	}{
		{"", map[string]string{"crc32": "a", "crc64nvme": "b"}, map[string]string{"crc32": "a"}},
		{"", map[string]string{"crc64nvme": "b"}, map[string]string{"crc64nvme": "b"}},
		{"", map[string]string{"sha1": "c"}, map[string]string{"sha1": "c"}},
		{"crc64nvme", map[string]string{"crc64nvme": "b"}, map[string]string{"crc64nvme": "b"}},
	} {
		if got := clientChecksums(c.alg, c.in); !maps.Equal(got, c.want) {
			t.Errorf("clientChecksums(%q, %v) = %v, want %v", c.alg, c.in, got, c.want)
		}
	}
}
