package e2e

import (
	"bytes"
	"io"
	"strconv"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"

	"github.com/s3seal/s3seal/checksum"
	"github.com/s3seal/s3seal/internal/faultproxy"
)

// TestMultipartDefaultChecksumEveryMix: one upload created without an
// algorithm whose parts are every kind at once: a part sent twice (CRC32,
// then again with other bytes and no checksum, the backend storing the
// first try and answering 200 <Error>), a CRC32C part whose backend answer
// is cut, a SHA-256 part, a ranged copy across the part boundary of a
// multipart source, a copy of a single-PUT source, a last part with no
// checksum; the completion states a wrong CRC64NVME and FULL_OBJECT, and
// its first backend answer is 200 <Error> after the store completed (the
// embedded store then answers NoSuchUpload: recovery). The object's
// CRC64NVME must be that of the plaintext GET returns, on HEAD, GET (the
// SDK validating) and GetObjectAttributes.
func TestMultipartDefaultChecksumEveryMix(t *testing.T) {
	t.Parallel()
	for _, be := range []string{"embedded", "moto"} {
		t.Run(be, func(t *testing.T) {
			t.Parallel()
			defaultChecksumEveryMix(t, be)
		})
	}
}

func defaultChecksumEveryMix(t *testing.T, be string) {
	p, fp := startFaultyOn(t, be)
	c := sdkFor(t, p)
	ctx := ctxT(t)
	b := "defsum-mix"
	mustCreateBucket(t, c, b)
	// A multipart source (created without an algorithm, parts 5 MiB + 3 MiB)
	// and a single-PUT source.
	srcParts := []mpPart{{1, patternBytes(201, 5*mib)}, {2, patternBytes(202, 3*mib)}}
	mpUpload(t, c, b, "mpsrc", srcParts)
	single := patternBytes(203, 5*mib+3)
	putObj(t, c, b, "single", single)

	k := aws.String("mix")
	cr, err := c.CreateMultipartUpload(ctx, &s3.CreateMultipartUploadInput{Bucket: aws.String(b), Key: k})
	if err != nil {
		t.Fatal(err)
	}
	id := cr.UploadId
	withCRC32 := func(o *s3.Options) { o.RequestChecksumCalculation = aws.RequestChecksumCalculationWhenSupported }

	fp.Reset()
	fp.Inject(faultproxy.Rule{Op: faultproxy.UploadPart, Part: 1, Attempt: 1, Fault: faultproxy.ForwardThenErrorInBody},
		faultproxy.Rule{Op: faultproxy.UploadPart, Part: 2, Attempt: 1, Fault: faultproxy.ForwardThenCut},
		faultproxy.Rule{Op: faultproxy.CompleteMultipartUpload, Attempt: 1, Fault: faultproxy.ForwardThenErrorInBody})

	p1a := patternBytes(210, 5*mib)
	if _, err := c.UploadPart(ctx, &s3.UploadPartInput{Bucket: aws.String(b), Key: k, UploadId: id, PartNumber: aws.Int32(1),
		Body: bytes.NewReader(p1a)}, withCRC32); err != nil {
		t.Fatal(err)
	}
	p1 := patternBytes(211, 5*mib+1)
	u1, err := c.UploadPart(ctx, &s3.UploadPartInput{Bucket: aws.String(b), Key: k, UploadId: id, PartNumber: aws.Int32(1),
		Body: bytes.NewReader(p1)})
	if err != nil {
		t.Fatal(err)
	}
	p2 := patternBytes(212, 5*mib+2)
	u2, err := c.UploadPart(ctx, &s3.UploadPartInput{Bucket: aws.String(b), Key: k, UploadId: id, PartNumber: aws.Int32(2),
		Body: bytes.NewReader(p2), ChecksumCRC32C: aws.String(algSum(checksum.CRC32C, p2))})
	if err != nil {
		t.Fatal(err)
	}
	p3 := patternBytes(213, 5*mib+3)
	u3, err := c.UploadPart(ctx, &s3.UploadPartInput{Bucket: aws.String(b), Key: k, UploadId: id, PartNumber: aws.Int32(3),
		Body: bytes.NewReader(p3), ChecksumAlgorithm: types.ChecksumAlgorithmSha256})
	if err != nil {
		t.Fatal(err)
	}
	// Across the source's part boundary: the last 3 MiB + 7 of part 1, and
	// all but the last byte of part 2.
	whole := joinParts(srcParts)
	first, last := 2*mib-7, 8*mib-2
	p4 := whole[first : last+1]
	u4, err := c.UploadPartCopy(ctx, &s3.UploadPartCopyInput{Bucket: aws.String(b), Key: k, UploadId: id, PartNumber: aws.Int32(4),
		CopySource: aws.String(b + "/mpsrc"), CopySourceRange: aws.String("bytes=" + itoa(first) + "-" + itoa(last))})
	if err != nil {
		t.Fatal(err)
	}
	p5 := single
	u5, err := c.UploadPartCopy(ctx, &s3.UploadPartCopyInput{Bucket: aws.String(b), Key: k, UploadId: id, PartNumber: aws.Int32(5),
		CopySource: aws.String(b + "/single")})
	if err != nil {
		t.Fatal(err)
	}
	p6 := patternBytes(216, 4321)
	u6, err := c.UploadPart(ctx, &s3.UploadPartInput{Bucket: aws.String(b), Key: k, UploadId: id, PartNumber: aws.Int32(6),
		Body: bytes.NewReader(p6)})
	if err != nil {
		t.Fatal(err)
	}
	plain := bytes.Join([][]byte{p1, p2, p3, p4, p5, p6}, nil)
	want := algSum(checksum.CRC64NVME, plain)

	res, err := c.CompleteMultipartUpload(ctx, &s3.CompleteMultipartUploadInput{Bucket: aws.String(b), Key: k, UploadId: id,
		ChecksumCRC64NVME: aws.String("vqf3hRLTlJw="), ChecksumType: types.ChecksumTypeFullObject,
		MultipartUpload: &types.CompletedMultipartUpload{Parts: []types.CompletedPart{
			{PartNumber: aws.Int32(1), ETag: u1.ETag},
			{PartNumber: aws.Int32(2), ETag: u2.ETag, ChecksumCRC32C: u2.ChecksumCRC32C},
			{PartNumber: aws.Int32(3), ETag: u3.ETag, ChecksumSHA256: u3.ChecksumSHA256},
			{PartNumber: aws.Int32(4), ETag: u4.CopyPartResult.ETag},
			{PartNumber: aws.Int32(5), ETag: u5.CopyPartResult.ETag},
			{PartNumber: aws.Int32(6), ETag: u6.ETag},
		}}})
	if err != nil {
		t.Fatalf("complete: %v", err)
	}
	if got := aws.ToString(res.ChecksumCRC64NVME); got != want {
		t.Errorf("completion CRC64NVME %q, want %q (of the plaintext)", got, want)
	}
	wantCompletions(t, fp, 2)
	if be == "embedded" && !strings.Contains(p.Log(), "completion recovered") {
		t.Errorf("no recovery in the log")
	}
	h, err := c.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String(b), Key: k, ChecksumMode: types.ChecksumModeEnabled})
	if err != nil {
		t.Fatal(err)
	}
	if got := aws.ToString(h.ChecksumCRC64NVME); got != want || h.ChecksumType != types.ChecksumTypeFullObject {
		t.Errorf("HEAD CRC64NVME %q %s, want %q FULL_OBJECT", got, h.ChecksumType, want)
	}
	g, err := c.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(b), Key: k, ChecksumMode: types.ChecksumModeEnabled},
		func(o *s3.Options) { o.ResponseChecksumValidation = aws.ResponseChecksumValidationWhenSupported })
	if err != nil {
		t.Fatal(err)
	}
	body, err := io.ReadAll(g.Body)
	g.Body.Close()
	if err != nil {
		t.Fatalf("GET body (the SDK validates the CRC64NVME): %v", err)
	}
	if !bytes.Equal(body, plain) {
		t.Errorf("GET: %d bytes, not the parts' %d", len(body), len(plain))
	}
	ga, err := c.GetObjectAttributes(ctx, &s3.GetObjectAttributesInput{Bucket: aws.String(b), Key: k,
		ObjectAttributes: []types.ObjectAttributes{types.ObjectAttributesChecksum, types.ObjectAttributesObjectParts}})
	if err != nil {
		t.Fatal(err)
	}
	if ga.Checksum == nil || aws.ToString(ga.Checksum.ChecksumCRC64NVME) != want {
		t.Errorf("GetObjectAttributes Checksum %+v, want CRC64NVME %q", ga.Checksum, want)
	}
	if ga.ObjectParts != nil {
		for i, pt := range ga.ObjectParts.Parts {
			pd := [][]byte{p1, p2, p3, p4, p5, p6}[i]
			if got := aws.ToString(pt.ChecksumCRC64NVME); got != algSum(checksum.CRC64NVME, pd) {
				t.Errorf("ObjectParts part %d CRC64NVME %q, want %q", i+1, got, algSum(checksum.CRC64NVME, pd))
			}
		}
	}
}

func itoa(n int) string { return strconv.Itoa(n) }

// TestMultipartDefaultChecksumCopySourceCut: UploadPartCopy (ranged, from a multipart
// source) while the store cuts the first answer to each source GET; a
// 0-byte last part with a CRC32; the completion sent twice (the second
// after the upload is gone). The object's CRC64NVME stays that of its
// plaintext.
func TestMultipartDefaultChecksumCopySourceCut(t *testing.T) {
	t.Parallel()
	p, fp := startFaultyOn(t, "embedded")
	c := sdkFor(t, p)
	ctx := ctxT(t)
	b := "defsum-cut"
	mustCreateBucket(t, c, b)
	srcParts := []mpPart{{1, patternBytes(301, 5*mib)}, {2, patternBytes(302, 3*mib)}}
	mpUpload(t, c, b, "mpsrc", srcParts)
	k := aws.String("cut")
	cr, err := c.CreateMultipartUpload(ctx, &s3.CreateMultipartUploadInput{Bucket: aws.String(b), Key: k})
	if err != nil {
		t.Fatal(err)
	}
	id := cr.UploadId
	fp.Reset()
	fp.Inject(faultproxy.Rule{Op: faultproxy.GetObject, Attempt: 1, Fault: faultproxy.ForwardThenCut},
		faultproxy.Rule{Op: faultproxy.GetObject, Attempt: 3, Fault: faultproxy.ForwardThenCut})
	whole := joinParts(srcParts)
	first, last := 1*mib+3, 7*mib+5
	p1 := whole[first : last+1]
	u1, err := c.UploadPartCopy(ctx, &s3.UploadPartCopyInput{Bucket: aws.String(b), Key: k, UploadId: id, PartNumber: aws.Int32(1),
		CopySource: aws.String(b + "/mpsrc"), CopySourceRange: aws.String("bytes=" + itoa(first) + "-" + itoa(last))})
	if err != nil {
		t.Logf("UploadPartCopy with the source cut: %v (a refusal is fine; retrying without faults)", err)
		fp.Reset()
		u1, err = c.UploadPartCopy(ctx, &s3.UploadPartCopyInput{Bucket: aws.String(b), Key: k, UploadId: id, PartNumber: aws.Int32(1),
			CopySource: aws.String(b + "/mpsrc"), CopySourceRange: aws.String("bytes=" + itoa(first) + "-" + itoa(last))})
		if err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("source GETs the store saw: %d", len(fp.Requests(faultproxy.GetObject)))
	fp.Reset()
	u2, err := c.UploadPart(ctx, &s3.UploadPartInput{Bucket: aws.String(b), Key: k, UploadId: id, PartNumber: aws.Int32(2),
		Body: bytes.NewReader(nil), ChecksumAlgorithm: types.ChecksumAlgorithmCrc32})
	if err != nil {
		t.Fatal(err)
	}
	want := algSum(checksum.CRC64NVME, p1)
	in := &s3.CompleteMultipartUploadInput{Bucket: aws.String(b), Key: k, UploadId: id,
		MultipartUpload: &types.CompletedMultipartUpload{Parts: []types.CompletedPart{
			{PartNumber: aws.Int32(1), ETag: u1.CopyPartResult.ETag},
			{PartNumber: aws.Int32(2), ETag: u2.ETag},
		}}}
	for i := 0; i < 2; i++ {
		res, err := c.CompleteMultipartUpload(ctx, in)
		if err != nil {
			t.Fatalf("completion %d: %v", i+1, err)
		}
		if got := aws.ToString(res.ChecksumCRC64NVME); got != want || res.ChecksumType != types.ChecksumTypeFullObject {
			t.Errorf("completion %d: CRC64NVME %q %s, want %q FULL_OBJECT", i+1, got, res.ChecksumType, want)
		}
	}
	g, err := c.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(b), Key: k, ChecksumMode: types.ChecksumModeEnabled},
		func(o *s3.Options) { o.ResponseChecksumValidation = aws.ResponseChecksumValidationWhenSupported })
	if err != nil {
		t.Fatal(err)
	}
	body, err := io.ReadAll(g.Body)
	g.Body.Close()
	if err != nil || !bytes.Equal(body, p1) {
		t.Errorf("GET: %d bytes, err %v; want the %d copied", len(body), err, len(p1))
	}
	if got := aws.ToString(g.ChecksumCRC64NVME); got != want {
		t.Errorf("GET CRC64NVME %q, want %q", got, want)
	}
}

// TestMultipartDefaultChecksumRacingPartWriters: two clients send part 1 of an upload
// created without an algorithm at once, with other bytes and other
// checksums (CRC32 by the SDK's default, SHA-256); the completion names
// the part ListParts shows. Whatever won, the object's CRC64NVME is that
// of the bytes GET returns, and a CopyObject of it keeps the right one.
func TestMultipartDefaultChecksumRacingPartWriters(t *testing.T) {
	t.Parallel()
	onEachStore(t, func(t *testing.T, p *sealProc) {
		c := sdkFor(t, p)
		ctx := ctxT(t)
		b := "defsum-race"
		mustCreateBucket(t, c, b)
		for round := 0; round < 3; round++ {
			k := aws.String("obj" + itoa(round))
			cr, err := c.CreateMultipartUpload(ctx, &s3.CreateMultipartUploadInput{Bucket: aws.String(b), Key: k})
			if err != nil {
				t.Fatal(err)
			}
			a, bb := patternBytes(uint64(500+2*round), 5*mib), patternBytes(uint64(501+2*round), 5*mib+9)
			errs := make(chan error, 2)
			go func() {
				_, err := c.UploadPart(ctx, &s3.UploadPartInput{Bucket: aws.String(b), Key: k, UploadId: cr.UploadId, PartNumber: aws.Int32(1),
					Body: bytes.NewReader(a)}, func(o *s3.Options) { o.RequestChecksumCalculation = aws.RequestChecksumCalculationWhenSupported })
				errs <- err
			}()
			go func() {
				_, err := c.UploadPart(ctx, &s3.UploadPartInput{Bucket: aws.String(b), Key: k, UploadId: cr.UploadId, PartNumber: aws.Int32(1),
					Body: bytes.NewReader(bb), ChecksumAlgorithm: types.ChecksumAlgorithmSha256})
				errs <- err
			}()
			for i := 0; i < 2; i++ {
				if err := <-errs; err != nil {
					t.Fatal(err)
				}
			}
			tail := patternBytes(uint64(600+round), 77)
			u2, err := c.UploadPart(ctx, &s3.UploadPartInput{Bucket: aws.String(b), Key: k, UploadId: cr.UploadId, PartNumber: aws.Int32(2),
				Body: bytes.NewReader(tail)})
			if err != nil {
				t.Fatal(err)
			}
			lp, err := c.ListParts(ctx, &s3.ListPartsInput{Bucket: aws.String(b), Key: k, UploadId: cr.UploadId})
			if err != nil || len(lp.Parts) != 2 {
				t.Fatalf("ListParts: %v %d", err, len(lp.Parts))
			}
			won := a
			if unquote(lp.Parts[0].ETag) == md5Hex(bb) {
				won = bb
			}
			res, err := c.CompleteMultipartUpload(ctx, &s3.CompleteMultipartUploadInput{Bucket: aws.String(b), Key: k, UploadId: cr.UploadId,
				MultipartUpload: &types.CompletedMultipartUpload{Parts: []types.CompletedPart{
					{PartNumber: aws.Int32(1), ETag: lp.Parts[0].ETag}, {PartNumber: aws.Int32(2), ETag: u2.ETag}}}})
			if err != nil {
				t.Fatalf("complete: %v", err)
			}
			plain := append(append([]byte{}, won...), tail...)
			want := algSum(checksum.CRC64NVME, plain)
			if got := aws.ToString(res.ChecksumCRC64NVME); got != want {
				t.Errorf("round %d: completion CRC64NVME %q, want %q", round, got, want)
			}
			g, err := c.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(b), Key: k, ChecksumMode: types.ChecksumModeEnabled},
				func(o *s3.Options) { o.ResponseChecksumValidation = aws.ResponseChecksumValidationWhenSupported })
			if err != nil {
				t.Fatal(err)
			}
			got, err := io.ReadAll(g.Body)
			g.Body.Close()
			if err != nil || !bytes.Equal(got, plain) {
				t.Errorf("round %d: GET is not the winner's bytes (%v)", round, err)
			}
			if _, err := c.CopyObject(ctx, &s3.CopyObjectInput{Bucket: aws.String(b), Key: aws.String("copy" + itoa(round)),
				CopySource: aws.String(b + "/" + aws.ToString(k))}); err != nil {
				t.Fatal(err)
			}
			h, err := c.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String(b), Key: aws.String("copy" + itoa(round)), ChecksumMode: types.ChecksumModeEnabled})
			if err != nil {
				t.Fatal(err)
			}
			if got := aws.ToString(h.ChecksumCRC64NVME); got != want {
				t.Errorf("round %d: copy's CRC64NVME %q %s, want %q", round, got, h.ChecksumType, want)
			}
		}
	})
}
