package e2e

import (
	"bytes"
	"io"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"

	"github.com/s3seal/s3seal/checksum"
)

// TestMultipartDefaultChecksumWithClientChecksums: an upload created
// without an algorithm whose parts carry other checksums (the SDK's
// default CRC32 on its default settings, a SHA-1, a copied part) completes,
// as on S3 since 2025, with the FULL_OBJECT CRC64NVME of the plaintext; a
// CRC64NVME stated on the completion is ignored; HEAD and
// GetObjectAttributes give the same, and UploadPart and ListParts report
// the client's checksums. Parts of 5 MiB, so that moto takes them.
func TestMultipartDefaultChecksumWithClientChecksums(t *testing.T) {
	onEachStore(t, func(t *testing.T, p *sealProc) {
		c := sdkFor(t, p)
		ctx := ctxT(t)
		bucket, key := "defsum", "obj"
		mustCreateBucket(t, c, bucket)
		p1 := patternBytes(131, 5*mib+17)
		src := patternBytes(132, 6*mib)
		putObj(t, c, bucket, "src", src)
		p2 := src[mib/2 : mib/2+5*mib]
		p3 := patternBytes(133, 1234)
		whole := append(append(append([]byte{}, p1...), p2...), p3...)
		cr, err := c.CreateMultipartUpload(ctx, &s3.CreateMultipartUploadInput{Bucket: aws.String(bucket), Key: aws.String(key)})
		if err != nil {
			t.Fatal(err)
		}
		u1, err := c.UploadPart(ctx, &s3.UploadPartInput{Bucket: aws.String(bucket), Key: aws.String(key), UploadId: cr.UploadId,
			PartNumber: aws.Int32(1), Body: bytes.NewReader(p1)}, func(o *s3.Options) {
			o.RequestChecksumCalculation = aws.RequestChecksumCalculationWhenSupported // the SDK's default: a CRC32
		})
		if err != nil {
			t.Fatal(err)
		}
		if got := aws.ToString(u1.ChecksumCRC32); got != algSum(checksum.CRC32, p1) || u1.ChecksumCRC64NVME != nil {
			t.Errorf("UploadPart 1 answers CRC32 %q CRC64NVME %v, want the client's CRC32 alone", got, u1.ChecksumCRC64NVME)
		}
		u2, err := c.UploadPartCopy(ctx, &s3.UploadPartCopyInput{Bucket: aws.String(bucket), Key: aws.String(key), UploadId: cr.UploadId,
			PartNumber: aws.Int32(2), CopySource: aws.String(bucket + "/src"), CopySourceRange: aws.String("bytes=524288-5767167")})
		if err != nil {
			t.Fatal(err)
		}
		u3, err := c.UploadPart(ctx, &s3.UploadPartInput{Bucket: aws.String(bucket), Key: aws.String(key), UploadId: cr.UploadId,
			PartNumber: aws.Int32(3), Body: bytes.NewReader(p3), ChecksumAlgorithm: types.ChecksumAlgorithmSha1})
		if err != nil {
			t.Fatal(err)
		}
		if got := aws.ToString(u3.ChecksumSHA1); got != algSum(checksum.SHA1, p3) || u3.ChecksumCRC64NVME != nil {
			t.Errorf("UploadPart 3 answers SHA1 %q CRC64NVME %v, want the client's SHA1 alone", got, u3.ChecksumCRC64NVME)
		}
		lp, err := c.ListParts(ctx, &s3.ListPartsInput{Bucket: aws.String(bucket), Key: aws.String(key), UploadId: cr.UploadId})
		if err != nil {
			t.Fatal(err)
		}
		if len(lp.Parts) != 3 {
			t.Fatalf("ListParts: %d parts", len(lp.Parts))
		}
		if got := aws.ToString(lp.Parts[0].ChecksumCRC32); got != algSum(checksum.CRC32, p1) || lp.Parts[0].ChecksumCRC64NVME != nil {
			t.Errorf("ListParts part 1: CRC32 %q CRC64NVME %v, want the client's CRC32 alone", got, lp.Parts[0].ChecksumCRC64NVME)
		}
		if got := aws.ToString(lp.Parts[2].ChecksumSHA1); got != algSum(checksum.SHA1, p3) {
			t.Errorf("ListParts part 3: SHA1 %q, want the client's", got)
		}

		want := algSum(checksum.CRC64NVME, whole)
		res, err := c.CompleteMultipartUpload(ctx, &s3.CompleteMultipartUploadInput{Bucket: aws.String(bucket), Key: aws.String(key),
			UploadId: cr.UploadId, ChecksumCRC64NVME: aws.String("vqf3hRLTlJw="), // not this object's: ignored
			MultipartUpload: &types.CompletedMultipartUpload{Parts: []types.CompletedPart{
				{PartNumber: aws.Int32(1), ETag: u1.ETag, ChecksumCRC32: u1.ChecksumCRC32},
				{PartNumber: aws.Int32(2), ETag: u2.CopyPartResult.ETag},
				{PartNumber: aws.Int32(3), ETag: u3.ETag},
			}}})
		if err != nil {
			t.Fatal(err)
		}
		if got := aws.ToString(res.ChecksumCRC64NVME); got != want || res.ChecksumType != types.ChecksumTypeFullObject ||
			res.ChecksumCRC32 != nil || res.ChecksumSHA1 != nil {
			t.Errorf("completion: CRC64NVME %q type %q CRC32 %v SHA1 %v, want FULL_OBJECT %q alone",
				got, res.ChecksumType, res.ChecksumCRC32, res.ChecksumSHA1, want)
		}
		head, err := c.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String(bucket), Key: aws.String(key), ChecksumMode: types.ChecksumModeEnabled})
		if err != nil {
			t.Fatal(err)
		}
		if got := aws.ToString(head.ChecksumCRC64NVME); got != want || head.ChecksumType != types.ChecksumTypeFullObject || head.ChecksumCRC32 != nil {
			t.Errorf("HEAD: CRC64NVME %q type %q CRC32 %v, want FULL_OBJECT %q alone", got, head.ChecksumType, head.ChecksumCRC32, want)
		}
		attrs, err := c.GetObjectAttributes(ctx, &s3.GetObjectAttributesInput{Bucket: aws.String(bucket), Key: aws.String(key),
			ObjectAttributes: []types.ObjectAttributes{types.ObjectAttributesChecksum, types.ObjectAttributesObjectParts}})
		if err != nil {
			t.Fatal(err)
		}
		if attrs.Checksum == nil || aws.ToString(attrs.Checksum.ChecksumCRC64NVME) != want ||
			attrs.Checksum.ChecksumType != types.ChecksumTypeFullObject || attrs.Checksum.ChecksumCRC32 != nil {
			t.Errorf("GetObjectAttributes Checksum %+v, want FULL_OBJECT CRC64NVME %q alone", attrs.Checksum, want)
		}
		if op := attrs.ObjectParts; op == nil || len(op.Parts) != 3 {
			t.Errorf("GetObjectAttributes ObjectParts %+v, want 3 parts", op)
		} else {
			for i, data := range [][]byte{p1, p2, p3} {
				if got := aws.ToString(op.Parts[i].ChecksumCRC64NVME); got != algSum(checksum.CRC64NVME, data) || op.Parts[i].ChecksumCRC32 != nil {
					t.Errorf("ObjectParts part %d: CRC64NVME %q CRC32 %v, want the part's CRC64NVME alone", i+1, got, op.Parts[i].ChecksumCRC32)
				}
			}
		}
		g, err := c.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(bucket), Key: aws.String(key)})
		if err != nil {
			t.Fatal(err)
		}
		defer g.Body.Close()
		if got, err := io.ReadAll(g.Body); err != nil || !bytes.Equal(got, whole) {
			t.Errorf("GET: %d bytes (%v), not the plaintext of %d", len(got), err, len(whole))
		}
	})
}

// TestMultipartNewAlgorithmsBesideDefault: parts of an upload created
// without an algorithm with each of the newer checksums (SHA512, MD5,
// XXHASH64, XXHASH3, XXHASH128: the longest part records, SHA-512's cut in
// its key), on moto and the embedded store: UploadPart and ListParts give
// the client's checksum alone, the object gets the CRC64NVME of its
// plaintext, ObjectParts each part's CRC64NVME.
func TestMultipartNewAlgorithmsBesideDefault(t *testing.T) {
	t.Parallel()
	onEachStore(t, func(t *testing.T, p *sealProc) {
		c := sdkFor(t, p)
		ctx := ctxT(t)
		b := "defsum-newalgs"
		mustCreateBucket(t, c, b)
		k := aws.String("obj")
		cr, err := c.CreateMultipartUpload(ctx, &s3.CreateMultipartUploadInput{Bucket: aws.String(b), Key: k})
		if err != nil {
			t.Fatal(err)
		}
		algs := []types.ChecksumAlgorithm{types.ChecksumAlgorithmSha512, types.ChecksumAlgorithmMd5, types.ChecksumAlgorithmXxhash64,
			types.ChecksumAlgorithmXxhash3, types.ChecksumAlgorithmXxhash128, types.ChecksumAlgorithmSha512}
		var datas [][]byte
		var cps []types.CompletedPart
		for i, a := range algs {
			n := 5 * mib
			if i == len(algs)-1 {
				n = 999
			}
			d := patternBytes(uint64(700+i), n)
			datas = append(datas, d)
			in := &s3.UploadPartInput{Bucket: aws.String(b), Key: k, UploadId: cr.UploadId, PartNumber: aws.Int32(int32(i + 1)),
				Body: bytes.NewReader(d)}
			v := aws.String(algSum(checksum.Algorithm(a), d)) // the value in its header: the SDK computes SHA512 alone
			switch a {
			case types.ChecksumAlgorithmSha512:
				in.ChecksumSHA512 = v
			case types.ChecksumAlgorithmMd5:
				in.ChecksumMD5 = v
			case types.ChecksumAlgorithmXxhash64:
				in.ChecksumXXHASH64 = v
			case types.ChecksumAlgorithmXxhash3:
				in.ChecksumXXHASH3 = v
			case types.ChecksumAlgorithmXxhash128:
				in.ChecksumXXHASH128 = v
			}
			u, err := c.UploadPart(ctx, in)
			if err != nil {
				t.Fatalf("part %d (%s): %v", i+1, a, err)
			}
			if u.ChecksumCRC64NVME != nil {
				t.Errorf("UploadPart %d answers a CRC64NVME beside its %s", i+1, a)
			}
			cps = append(cps, types.CompletedPart{PartNumber: aws.Int32(int32(i + 1)), ETag: u.ETag})
		}
		lp, err := c.ListParts(ctx, &s3.ListPartsInput{Bucket: aws.String(b), Key: k, UploadId: cr.UploadId})
		if err != nil || len(lp.Parts) != len(algs) {
			t.Fatalf("ListParts: %v", err)
		}
		for i, pt := range lp.Parts {
			if pt.ChecksumCRC64NVME != nil {
				t.Errorf("ListParts part %d shows a CRC64NVME beside its %s", i+1, algs[i])
			}
			want := algSum(checksum.Algorithm(algs[i]), datas[i])
			got := map[types.ChecksumAlgorithm]*string{types.ChecksumAlgorithmSha512: pt.ChecksumSHA512, types.ChecksumAlgorithmMd5: pt.ChecksumMD5,
				types.ChecksumAlgorithmXxhash64: pt.ChecksumXXHASH64, types.ChecksumAlgorithmXxhash3: pt.ChecksumXXHASH3,
				types.ChecksumAlgorithmXxhash128: pt.ChecksumXXHASH128}[algs[i]]
			if aws.ToString(got) != want {
				t.Errorf("ListParts part %d %s %q, want %q", i+1, algs[i], aws.ToString(got), want)
			}
		}
		res, err := c.CompleteMultipartUpload(ctx, &s3.CompleteMultipartUploadInput{Bucket: aws.String(b), Key: k, UploadId: cr.UploadId,
			MultipartUpload: &types.CompletedMultipartUpload{Parts: cps}})
		if err != nil {
			t.Fatal(err)
		}
		want := algSum(checksum.CRC64NVME, bytes.Join(datas, nil))
		if got := aws.ToString(res.ChecksumCRC64NVME); got != want {
			t.Errorf("completion CRC64NVME %q, want %q", got, want)
		}
		ga, err := c.GetObjectAttributes(ctx, &s3.GetObjectAttributesInput{Bucket: aws.String(b), Key: k,
			ObjectAttributes: []types.ObjectAttributes{types.ObjectAttributesObjectParts}})
		if err != nil || ga.ObjectParts == nil {
			t.Fatalf("GetObjectAttributes: %v", err)
		}
		for i, pt := range ga.ObjectParts.Parts {
			if got := aws.ToString(pt.ChecksumCRC64NVME); got != algSum(checksum.CRC64NVME, datas[i]) || pt.ChecksumSHA512 != nil || pt.ChecksumMD5 != nil {
				t.Errorf("ObjectParts part %d: CRC64NVME %q SHA512 %v MD5 %v, want the part's CRC64NVME alone", i+1, got, pt.ChecksumSHA512, pt.ChecksumMD5)
			}
		}
	})
}
