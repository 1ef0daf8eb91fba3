package s3api

import (
	"bytes"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
)

// Checksum rules of multipart uploads with S3's codes and words
// (versitygw's suite): CreateMultipartUpload's algorithm and type headers,
// a part without or with another checksum, and a completion's part
// checksums, object checksum, checksum type, part fields and size.
func TestMultipartChecksumAnswers(t *testing.T) {
	url, ctx, c := newBucketServer(t, adminCreds())
	b := aws.String("bkt")
	create := func(key string, alg types.ChecksumAlgorithm, typ types.ChecksumType) *string {
		t.Helper()
		cr, err := c.CreateMultipartUpload(ctx, &s3.CreateMultipartUploadInput{Bucket: b, Key: aws.String(key),
			ChecksumAlgorithm: alg, ChecksumType: typ})
		if err != nil {
			t.Fatal(err)
		}
		return cr.UploadId
	}
	_, err := c.CreateMultipartUpload(ctx, &s3.CreateMultipartUploadInput{Bucket: b, Key: aws.String("k"), ChecksumAlgorithm: "CRC99"})
	checkErr(t, "unknown algorithm", err, "InvalidRequest", "Checksum algorithm provided is unsupported. Please try again with any of the valid types: [CRC32, CRC32C, CRC64NVME, MD5, SHA1, SHA256, SHA512, XXHASH128, XXHASH3, XXHASH64]")
	_, err = c.CreateMultipartUpload(ctx, &s3.CreateMultipartUploadInput{Bucket: b, Key: aws.String("k"), ChecksumType: "invalid_type"})
	checkErr(t, "unknown type", err, "InvalidRequest", "Value for x-amz-checksum-type header is invalid.")
	cr, err := c.CreateMultipartUpload(ctx, &s3.CreateMultipartUploadInput{Bucket: b, Key: aws.String("k"), ChecksumAlgorithm: "cRc32", ChecksumType: "CoMpOsItE"})
	if err != nil {
		t.Errorf("mixed-case algorithm and type: %v", err)
	} else if cr.ChecksumType != types.ChecksumTypeComposite || cr.ChecksumAlgorithm != types.ChecksumAlgorithmCrc32 {
		t.Errorf("mixed-case algorithm and type: %q %q", cr.ChecksumAlgorithm, cr.ChecksumType)
	}

	// Parts: another algorithm, none on a COMPOSITE upload, none on a
	// FULL_OBJECT one (s3seal computes and reports the upload's).
	id := create("comp", types.ChecksumAlgorithmCrc32, types.ChecksumTypeComposite)
	_, err = c.UploadPart(ctx, &s3.UploadPartInput{Bucket: b, Key: aws.String("comp"), UploadId: id, PartNumber: aws.Int32(1),
		Body: strings.NewReader("x"), ChecksumAlgorithm: types.ChecksumAlgorithmSha1})
	checkErr(t, "other algorithm", err, "InvalidRequest", "Checksum Type mismatch occurred, expected checksum Type: CRC32, actual checksum Type: SHA1")
	_, err = c.UploadPart(ctx, &s3.UploadPartInput{Bucket: b, Key: aws.String("comp"), UploadId: id, PartNumber: aws.Int32(1),
		Body: strings.NewReader("x"), ChecksumCRC32: aws.String(""), ChecksumSHA1: aws.String("")})
	checkErr(t, "two checksum headers", err, "InvalidRequest", "Expecting a single x-amz-checksum- header. Multiple checksum Types are not allowed.")
	status, body := rawUploadPart(t, url, "comp", *id)
	if status != 400 || !strings.Contains(body, "expected checksum Type: CRC32, actual checksum Type: null") {
		t.Errorf("COMPOSITE part without checksum: %d %s", status, body)
	}
	fid := create("full", types.ChecksumAlgorithmCrc32, types.ChecksumTypeFullObject)
	if status, body := rawUploadPart(t, url, "full", *fid); status != 200 || !strings.Contains(body, "X-Amz-Checksum-Crc32: jNwWgw==") {
		t.Errorf("FULL_OBJECT part without checksum: %d %s", status, body)
	}

	complete := func(key string, id *string, parts []types.CompletedPart, mod func(*s3.CompleteMultipartUploadInput)) error {
		in := &s3.CompleteMultipartUploadInput{Bucket: b, Key: aws.String(key), UploadId: id,
			MultipartUpload: &types.CompletedMultipartUpload{Parts: parts}}
		if mod != nil {
			mod(in)
		}
		_, err := c.CompleteMultipartUpload(ctx, in)
		return err
	}
	id = create("c", types.ChecksumAlgorithmCrc32, types.ChecksumTypeFullObject)
	up, err := c.UploadPart(ctx, &s3.UploadPartInput{Bucket: b, Key: aws.String("c"), UploadId: id, PartNumber: aws.Int32(1),
		Body: bytes.NewReader([]byte("data")), ChecksumAlgorithm: types.ChecksumAlgorithmCrc32})
	if err != nil {
		t.Fatal(err)
	}
	good := types.CompletedPart{PartNumber: aws.Int32(1), ETag: up.ETag, ChecksumCRC32: up.ChecksumCRC32}
	with := func(f func(*types.CompletedPart)) []types.CompletedPart {
		p := good
		f(&p)
		return []types.CompletedPart{p}
	}
	const badPart = "Invalid Base64 or multiple checksums present in request"
	checkErr(t, "part number -4", complete("c", id, with(func(p *types.CompletedPart) { p.PartNumber = aws.Int32(-4) }), nil),
		"InvalidArgument", "PartNumber must be >= 1")
	checkErr(t, "bad part checksum", complete("c", id, with(func(p *types.CompletedPart) { p.ChecksumCRC32 = aws.String("invalid_checksum") }), nil),
		"InvalidArgument", badPart)
	checkErr(t, "two part checksums", complete("c", id, with(func(p *types.CompletedPart) { p.ChecksumSHA1 = aws.String("Kq5sNclPz7QV2+lfQIuc6R7oRu0=") }), nil),
		"InvalidArgument", badPart)
	checkErr(t, "other part checksum", complete("c", id, with(func(p *types.CompletedPart) {
		p.ChecksumCRC32, p.ChecksumSHA256 = nil, aws.String("n2alat9FhKiZXkZO18V2LLcZFM3IT8R7DjSMvK//7WU=")
	}), nil), "BadDigest", "The sha256 you specified for part 1 did not match what we received.")
	checkErr(t, "two object checksums", complete("c", id, []types.CompletedPart{good}, func(in *s3.CompleteMultipartUploadInput) {
		in.ChecksumCRC32, in.ChecksumCRC32C = aws.String("sGc9Hg=="), aws.String("/2NsFg==")
	}), "InvalidRequest", "Expecting a single x-amz-checksum- header. Multiple checksum Types are not allowed.")
	for _, v := range []string{"invalid_crc32", "ImIEBA==-smth", "ImIEBA==--3"} {
		checkErr(t, "object checksum "+v, complete("c", id, []types.CompletedPart{good}, func(in *s3.CompleteMultipartUploadInput) {
			in.ChecksumCRC32 = aws.String(v)
		}), "BadDigest", "The CRC32 you specified did not match the calculated checksum.")
	}
	checkErr(t, "bad type", complete("c", id, []types.CompletedPart{good}, func(in *s3.CompleteMultipartUploadInput) { in.ChecksumType = "invalid_type" }),
		"InvalidRequest", "Value for x-amz-checksum-type header is invalid.")
	checkErr(t, "other type", complete("c", id, []types.CompletedPart{good}, func(in *s3.CompleteMultipartUploadInput) { in.ChecksumType = types.ChecksumTypeComposite }),
		"InvalidRequest", "The upload was created using the FULL_OBJECT checksum mode. The complete request must use the same checksum mode.")
	checkErr(t, "negative size", complete("c", id, []types.CompletedPart{good}, func(in *s3.CompleteMultipartUploadInput) { in.MpuObjectSize = aws.Int64(-1) }),
		"InvalidRequest", "Value for x-amz-mp-object-size header is less than zero: '-1'")
	checkErr(t, "wrong size", complete("c", id, []types.CompletedPart{good}, func(in *s3.CompleteMultipartUploadInput) { in.MpuObjectSize = aws.Int64(9) }),
		"InvalidRequest", "The provided 'x-amz-mp-object-size' header value 4 does not match what was computed: 9")
	for _, xml := range []string{`<Part><PartNumber>1</PartNumber></Part>`, `<Part><ETag>` + *good.ETag + `</ETag></Part>`} {
		if status, body := rawComplete(t, url, "c", *id, xml); status != 400 || !strings.Contains(body, "<Code>MalformedXML</Code>") {
			t.Errorf("part without a field %s: %d %s", xml, status, body)
		}
	}

	// COMPOSITE: each part's checksum is required.
	id = create("sha", types.ChecksumAlgorithmSha1, types.ChecksumTypeComposite)
	up, err = c.UploadPart(ctx, &s3.UploadPartInput{Bucket: b, Key: aws.String("sha"), UploadId: id, PartNumber: aws.Int32(1),
		Body: bytes.NewReader([]byte("data")), ChecksumAlgorithm: types.ChecksumAlgorithmSha1})
	if err != nil {
		t.Fatal(err)
	}
	checkErr(t, "missing part checksum", complete("sha", id, []types.CompletedPart{{PartNumber: aws.Int32(1), ETag: up.ETag}}, nil),
		"InvalidRequest", "The upload was created using a sha1 checksum. The complete request must include the checksum for each part. It was missing for part 1 in the request.")
	// s3-tests: a malformed object checksum is BadDigest, named first.
	checkErr(t, "missing part checksum, bad object checksum", complete("sha", id, []types.CompletedPart{{PartNumber: aws.Int32(1), ETag: up.ETag}},
		func(in *s3.CompleteMultipartUploadInput) { in.ChecksumSHA1 = aws.String("bad") }),
		"BadDigest", "The SHA1 you specified did not match the calculated checksum.")
	if err := complete("sha", id, []types.CompletedPart{{PartNumber: aws.Int32(1), ETag: up.ETag, ChecksumSHA1: up.ChecksumSHA1}}, nil); err != nil {
		t.Errorf("COMPOSITE completion with the part's checksum: %v", err)
	}

	// An upload created without an algorithm ignores a stated checksum.
	id = create("plain", "", "")
	up, err = c.UploadPart(ctx, &s3.UploadPartInput{Bucket: b, Key: aws.String("plain"), UploadId: id, PartNumber: aws.Int32(1),
		Body: bytes.NewReader([]byte("data"))})
	if err != nil {
		t.Fatal(err)
	}
	if err := complete("plain", id, []types.CompletedPart{{PartNumber: aws.Int32(1), ETag: up.ETag}}, func(in *s3.CompleteMultipartUploadInput) {
		in.ChecksumCRC64NVME = aws.String("vqf3hRLTlJw=")
	}); err != nil {
		t.Errorf("stated checksum on an upload without algorithm: %v", err)
	}
}

// rawUploadPart uploads part 1 with body "x" and no checksum header (the
// SDK always adds one) and returns the status and the answer's head+body.
func rawUploadPart(t *testing.T, url, key, id string) (int, string) {
	t.Helper()
	return rawDo(t, http.MethodPut, url+"/bkt/"+key+"?partNumber=1&uploadId="+id, "x")
}

func rawComplete(t *testing.T, url, key, id, parts string) (int, string) {
	t.Helper()
	return rawDo(t, http.MethodPost, url+"/bkt/"+key+"?uploadId="+id, `<CompleteMultipartUpload>`+parts+`</CompleteMultipartUpload>`)
}

func rawDo(t *testing.T, method, u, body string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(method, u, strings.NewReader(body))
	signAt(t, req, "UNSIGNED-PAYLOAD", time.Now())
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var h strings.Builder
	_ = resp.Header.Write(&h)
	return resp.StatusCode, h.String() + string(b)
}
