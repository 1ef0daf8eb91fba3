package e2e

import (
	"bytes"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"

	"github.com/s3seal/s3seal/checksum"
	"github.com/s3seal/s3seal/internal/faultproxy"
)

// TestMultipartStoreStripsUploadAlgorithm: the upload state's checksum
// algorithm and type also stand in plain user metadata of
// .s3seal/uploads/<u>/info, bound to nothing. A store that drops them (a
// CopyObject of info onto itself) must not turn an upload the client
// created with SHA-256 into one without an algorithm: s3seal reads the
// sealed settings, so a second s3seal (or the same after a restart) still
// wants SHA-256 parts, lists the upload with SHA-256 and completes a
// COMPOSITE SHA-256 object.
func TestMultipartStoreStripsUploadAlgorithm(t *testing.T) {
	t.Parallel()
	m := startMoto(t)
	b := "defsum-strip"
	pa, c := startWithBucket(t, sealOpts{Backend: m}, mustCreateBucket, b)
	ctx := ctxT(t)
	k := aws.String("obj")
	cr, err := c.CreateMultipartUpload(ctx, &s3.CreateMultipartUploadInput{Bucket: aws.String(b), Key: k,
		ChecksumAlgorithm: types.ChecksumAlgorithmSha256})
	if err != nil {
		t.Fatal(err)
	}
	id := cr.UploadId
	p1 := patternBytes(401, 5*mib)
	u1, err := c.UploadPart(ctx, &s3.UploadPartInput{Bucket: aws.String(b), Key: k, UploadId: id, PartNumber: aws.Int32(1),
		Body: bytes.NewReader(p1), ChecksumAlgorithm: types.ChecksumAlgorithmSha256})
	if err != nil {
		t.Fatal(err)
	}

	// The store rewrites the upload state's metadata without the algorithm.
	rewriteUploadState(ctx, t, motoClient(t, m), b, func(meta map[string]string) {
		n := len(meta)
		for mk := range meta {
			if strings.HasPrefix(strings.ToLower(mk), "checksum-") {
				delete(meta, mk)
			}
		}
		if len(meta) == n {
			t.Fatalf("info metadata has no checksum-* entry: %v", meta)
		}
	})

	// Another s3seal process with the same key (no cached upload state).
	pb := startS3seal(t, sealOpts{Backend: m, Key: pa.Key})
	cb := sdkFor(t, pb)
	lu, err := cb.ListMultipartUploads(ctx, &s3.ListMultipartUploadsInput{Bucket: aws.String(b)})
	if err != nil {
		t.Fatal(err)
	}
	if len(lu.Uploads) != 1 || lu.Uploads[0].ChecksumAlgorithm != types.ChecksumAlgorithmSha256 {
		t.Errorf("ListMultipartUploads after the store dropped the algorithm: %+v, want the upload with SHA256 (or a refusal)", lu.Uploads)
	}
	p2 := patternBytes(402, 1000)
	u2, err := cb.UploadPart(ctx, &s3.UploadPartInput{Bucket: aws.String(b), Key: k, UploadId: id, PartNumber: aws.Int32(2),
		Body: bytes.NewReader(p2)})
	if err == nil {
		t.Errorf("UploadPart without a SHA-256 to an upload created with SHA256 was accepted (the store dropped the algorithm)")
	} else {
		t.Logf("UploadPart without SHA-256: %v", err)
		return
	}
	res, err := cb.CompleteMultipartUpload(ctx, &s3.CompleteMultipartUploadInput{Bucket: aws.String(b), Key: k, UploadId: id,
		MultipartUpload: &types.CompletedMultipartUpload{Parts: []types.CompletedPart{
			{PartNumber: aws.Int32(1), ETag: u1.ETag, ChecksumSHA256: u1.ChecksumSHA256},
			{PartNumber: aws.Int32(2), ETag: u2.ETag},
		}}})
	if err != nil {
		t.Logf("completion refused: %v", err)
		return
	}
	hd, err := cb.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String(b), Key: k, ChecksumMode: types.ChecksumModeEnabled})
	if err != nil {
		t.Fatal(err)
	}
	t.Errorf("completion succeeded: answer SHA256 %q CRC64NVME %q type %q; HEAD SHA256 %q CRC64NVME %q type %q; want the upload's SHA256 COMPOSITE (or a refusal)",
		aws.ToString(res.ChecksumSHA256), aws.ToString(res.ChecksumCRC64NVME), res.ChecksumType,
		aws.ToString(hd.ChecksumSHA256), aws.ToString(hd.ChecksumCRC64NVME), hd.ChecksumType)
}

// TestMultipartStoreAddsUploadAlgorithm: the store adds
// checksum-algorithm: crc32 and checksum-type: COMPOSITE to the state of
// an upload created without an algorithm, whose parts the SDK sent with
// its default CRC32. A fresh s3seal still completes it into the
// FULL_OBJECT CRC64NVME every upload created without an algorithm gets
// (the plain entries are not what s3seal reads).
func TestMultipartStoreAddsUploadAlgorithm(t *testing.T) {
	t.Parallel()
	m := startMoto(t)
	b := "defsum-add"
	pa, c := startWithBucket(t, sealOpts{Backend: m}, mustCreateBucket, b)
	ctx := ctxT(t)
	k := aws.String("obj")
	cr, err := c.CreateMultipartUpload(ctx, &s3.CreateMultipartUploadInput{Bucket: aws.String(b), Key: k})
	if err != nil {
		t.Fatal(err)
	}
	withCRC32 := func(o *s3.Options) { o.RequestChecksumCalculation = aws.RequestChecksumCalculationWhenSupported }
	p1, p2 := patternBytes(451, 5*mib), patternBytes(452, 100)
	u1, err := c.UploadPart(ctx, &s3.UploadPartInput{Bucket: aws.String(b), Key: k, UploadId: cr.UploadId, PartNumber: aws.Int32(1),
		Body: bytes.NewReader(p1)}, withCRC32)
	if err != nil {
		t.Fatal(err)
	}
	u2, err := c.UploadPart(ctx, &s3.UploadPartInput{Bucket: aws.String(b), Key: k, UploadId: cr.UploadId, PartNumber: aws.Int32(2),
		Body: bytes.NewReader(p2)}, withCRC32)
	if err != nil {
		t.Fatal(err)
	}
	rewriteUploadState(ctx, t, motoClient(t, m), b, func(meta map[string]string) {
		meta["checksum-algorithm"], meta["checksum-type"] = "crc32", "COMPOSITE"
	})
	cb := sdkFor(t, startS3seal(t, sealOpts{Backend: m, Key: pa.Key}))
	res, err := cb.CompleteMultipartUpload(ctx, &s3.CompleteMultipartUploadInput{Bucket: aws.String(b), Key: k, UploadId: cr.UploadId,
		MultipartUpload: &types.CompletedMultipartUpload{Parts: []types.CompletedPart{
			{PartNumber: aws.Int32(1), ETag: u1.ETag, ChecksumCRC32: u1.ChecksumCRC32},
			{PartNumber: aws.Int32(2), ETag: u2.ETag, ChecksumCRC32: u2.ChecksumCRC32}}}})
	if err != nil {
		t.Logf("completion refused: %v", err)
		return
	}
	want := algSum(checksum.CRC64NVME, append(append([]byte{}, p1...), p2...))
	if got := aws.ToString(res.ChecksumCRC64NVME); got != want || res.ChecksumType != types.ChecksumTypeFullObject {
		t.Errorf("completion: CRC64NVME %q CRC32 %q type %s; want CRC64NVME %q FULL_OBJECT (the store chose the object's checksum algorithm)",
			got, aws.ToString(res.ChecksumCRC32), res.ChecksumType, want)
	}
}

// TestMultipartDefaultChecksumRecordPutFaults: the PUT of a part's record (the
// two-checksum record of a part with the SDK's CRC32 in an upload created
// without an algorithm) is answered 200 <Error> without or after storing
// it, or cut; the client retries what fails. The object's CRC64NVME is
// that of its plaintext.
func TestMultipartDefaultChecksumRecordPutFaults(t *testing.T) {
	t.Parallel()
	for _, f := range []faultproxy.Fault{faultproxy.ErrorInBody, faultproxy.ForwardThenErrorInBody, faultproxy.ForwardThenCut} {
		t.Run(itoa(int(f)), func(t *testing.T) {
			t.Parallel()
			p, fp := startFaultyOn(t, "embedded")
			c := sdkFor(t, p)
			ctx := ctxT(t)
			b := "defsum-rec"
			mustCreateBucket(t, c, b)
			k := aws.String("obj")
			cr, err := c.CreateMultipartUpload(ctx, &s3.CreateMultipartUploadInput{Bucket: aws.String(b), Key: k})
			if err != nil {
				t.Fatal(err)
			}
			withCRC32 := func(o *s3.Options) { o.RequestChecksumCalculation = aws.RequestChecksumCalculationWhenSupported }
			datas := [][]byte{patternBytes(801, 5*mib), patternBytes(802, 333)}
			var cps []types.CompletedPart
			for i, d := range datas {
				fp.Reset()
				fp.Inject(faultproxy.Rule{Op: faultproxy.PutObject, Attempt: 1, Fault: f})
				var u *s3.UploadPartOutput
				for try := 0; try < 3; try++ {
					u, err = c.UploadPart(ctx, &s3.UploadPartInput{Bucket: aws.String(b), Key: k, UploadId: cr.UploadId, PartNumber: aws.Int32(int32(i + 1)),
						Body: bytes.NewReader(d)}, withCRC32)
					if err == nil {
						break
					}
					t.Logf("part %d try %d: %v", i+1, try+1, err)
				}
				if err != nil {
					t.Fatal(err)
				}
				t.Logf("part %d: store saw %d PutObjects", i+1, len(fp.Requests(faultproxy.PutObject)))
				cps = append(cps, types.CompletedPart{PartNumber: aws.Int32(int32(i + 1)), ETag: u.ETag, ChecksumCRC32: u.ChecksumCRC32})
			}
			fp.Reset()
			res, err := c.CompleteMultipartUpload(ctx, &s3.CompleteMultipartUploadInput{Bucket: aws.String(b), Key: k, UploadId: cr.UploadId,
				MultipartUpload: &types.CompletedMultipartUpload{Parts: cps}})
			if err != nil {
				t.Fatal(err)
			}
			want := algSum(checksum.CRC64NVME, bytes.Join(datas, nil))
			if got := aws.ToString(res.ChecksumCRC64NVME); got != want {
				t.Errorf("completion CRC64NVME %q, want %q", got, want)
			}
		})
	}
}
