package e2e

import (
	"bytes"
	"crypto/md5"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"hash/crc32"
	"io"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
)

const mib = 1 << 20

// mpPart is one part of a multipart upload: its number and its bytes.
type mpPart struct {
	N    int32
	Data []byte
}

// mpETag is S3's multipart ETag of parts: the hex MD5 of the concatenated
// binary part MD5s, then "-" and the number of parts.
func mpETag(parts ...[]byte) string {
	h := md5.New()
	for _, p := range parts {
		s := md5.Sum(p)
		h.Write(s[:])
	}
	return fmt.Sprintf("%s-%d", hex.EncodeToString(h.Sum(nil)), len(parts))
}

// splitETag is mpETag of data cut into parts of size bytes (the last
// shorter).
func splitETag(data []byte, size int) string {
	var parts [][]byte
	for off := 0; off < len(data); off += size {
		parts = append(parts, data[off:min(off+size, len(data))])
	}
	return mpETag(parts...)
}

// mpUpload creates an upload, sends parts (each checked to answer its
// MD5), completes it and returns the ETag the completion answered.
func mpUpload(t *testing.T, c *s3.Client, bucket, key string, parts []mpPart) string {
	t.Helper()
	ctx := ctxT(t)
	cr, err := c.CreateMultipartUpload(ctx, &s3.CreateMultipartUploadInput{Bucket: aws.String(bucket), Key: aws.String(key)})
	if err != nil {
		t.Fatalf("CreateMultipartUpload %s: %v", key, err)
	}
	return mpFinish(t, c, bucket, key, aws.ToString(cr.UploadId), parts, parts)
}

// mpSendParts uploads parts to an upload and checks each part's ETag.
func mpSendParts(t *testing.T, c *s3.Client, bucket, key, id string, parts []mpPart) {
	t.Helper()
	for _, p := range parts {
		out, err := c.UploadPart(ctxT(t), &s3.UploadPartInput{Bucket: aws.String(bucket), Key: aws.String(key),
			UploadId: aws.String(id), PartNumber: aws.Int32(p.N), Body: bytes.NewReader(p.Data),
			ContentLength: aws.Int64(int64(len(p.Data)))})
		if err != nil {
			t.Fatalf("UploadPart %s #%d (%d bytes): %v", key, p.N, len(p.Data), err)
		}
		if got := unquote(out.ETag); got != md5Hex(p.Data) {
			t.Fatalf("UploadPart %s #%d ETag %s, want %s", key, p.N, got, md5Hex(p.Data))
		}
	}
}

// mpComplete completes an upload with parts and checks the answered ETag.
func mpComplete(t *testing.T, c *s3.Client, bucket, key, id string, parts []mpPart) string {
	t.Helper()
	var cps []types.CompletedPart
	var datas [][]byte
	for _, p := range parts {
		cps = append(cps, types.CompletedPart{PartNumber: aws.Int32(p.N), ETag: aws.String(`"` + md5Hex(p.Data) + `"`)})
		datas = append(datas, p.Data)
	}
	out, err := c.CompleteMultipartUpload(ctxT(t), &s3.CompleteMultipartUploadInput{Bucket: aws.String(bucket),
		Key: aws.String(key), UploadId: aws.String(id), MultipartUpload: &types.CompletedMultipartUpload{Parts: cps}})
	if err != nil {
		t.Fatalf("CompleteMultipartUpload %s: %v", key, err)
	}
	if got, want := unquote(out.ETag), mpETag(datas...); got != want {
		t.Fatalf("CompleteMultipartUpload %s ETag %s, want %s", key, got, want)
	}
	return unquote(out.ETag)
}

// mpFinish sends send, then completes with parts.
func mpFinish(t *testing.T, c *s3.Client, bucket, key, id string, send, parts []mpPart) string {
	t.Helper()
	mpSendParts(t, c, bucket, key, id, send)
	return mpComplete(t, c, bucket, key, id, parts)
}

// joinParts is the object the parts make.
func joinParts(parts []mpPart) []byte {
	var b []byte
	for _, p := range parts {
		b = append(b, p.Data...)
	}
	return b
}

// checkObject checks that HEAD, GET, ListObjectsV2 and ListObjects (V1)
// all report data's size and etag for key.
func checkObject(t *testing.T, c *s3.Client, bucket, key string, data []byte, etag string) {
	t.Helper()
	ctx := ctxT(t)
	h, err := c.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String(bucket), Key: aws.String(key)})
	if err != nil {
		t.Fatalf("HeadObject %s: %v", key, err)
	}
	if unquote(h.ETag) != etag || aws.ToInt64(h.ContentLength) != int64(len(data)) {
		t.Errorf("HeadObject %s: ETag %s size %d, want %s %d", key, unquote(h.ETag), aws.ToInt64(h.ContentLength), etag, len(data))
	}
	g, err := c.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(bucket), Key: aws.String(key)})
	if err != nil {
		t.Fatalf("GetObject %s: %v", key, err)
	}
	got, err := io.ReadAll(g.Body)
	g.Body.Close()
	if err != nil || !bytes.Equal(got, data) {
		t.Errorf("GetObject %s: err %v, %d bytes, want %d identical", key, err, len(got), len(data))
	}
	if unquote(g.ETag) != etag || aws.ToInt64(g.ContentLength) != int64(len(data)) {
		t.Errorf("GetObject %s: ETag %s Content-Length %d, want %s %d", key, unquote(g.ETag), aws.ToInt64(g.ContentLength), etag, len(data))
	}
	v2, err := c.ListObjectsV2(ctx, &s3.ListObjectsV2Input{Bucket: aws.String(bucket), Prefix: aws.String(key)})
	if err != nil {
		t.Fatalf("ListObjectsV2: %v", err)
	}
	v1, err := c.ListObjects(ctx, &s3.ListObjectsInput{Bucket: aws.String(bucket), Prefix: aws.String(key)})
	if err != nil {
		t.Fatalf("ListObjects: %v", err)
	}
	for name, objs := range map[string][]types.Object{"V2": v2.Contents, "V1": v1.Contents} {
		found := false
		for _, o := range objs {
			if aws.ToString(o.Key) != key {
				continue
			}
			found = true
			if unquote(o.ETag) != etag || aws.ToInt64(o.Size) != int64(len(data)) {
				t.Errorf("ListObjects%s %s: ETag %s size %d, want %s %d", name, key, unquote(o.ETag), aws.ToInt64(o.Size), etag, len(data))
			}
		}
		if !found {
			t.Errorf("ListObjects%s: %s not listed", name, key)
		}
	}
}

// checkRange GETs bytes=first-last (last < 0: to the end) and compares.
func checkRange(t *testing.T, c *s3.Client, bucket, key string, data []byte, first, last int) {
	t.Helper()
	spec := fmt.Sprintf("bytes=%d-", first)
	end := len(data) - 1
	if last >= 0 {
		spec += fmt.Sprint(last)
		end = min(last, len(data)-1)
	}
	out, err := c.GetObject(ctxT(t), &s3.GetObjectInput{Bucket: aws.String(bucket), Key: aws.String(key), Range: aws.String(spec)})
	if err != nil {
		t.Errorf("GET %s Range %s: %v", key, spec, err)
		return
	}
	got, err := io.ReadAll(out.Body)
	out.Body.Close()
	if err != nil || !bytes.Equal(got, data[first:end+1]) {
		t.Errorf("GET %s Range %s: err %v, %d bytes, want %d identical", key, spec, err, len(got), end+1-first)
	}
	if want := fmt.Sprintf("bytes %d-%d/%d", first, end, len(data)); aws.ToString(out.ContentRange) != want {
		t.Errorf("GET %s Range %s: Content-Range %q, want %q", key, spec, aws.ToString(out.ContentRange), want)
	}
}

// checkPartGet GETs ?partNumber=n and compares with the part's bytes.
func checkPartGet(t *testing.T, c *s3.Client, bucket, key string, n int32, want []byte, count int) {
	t.Helper()
	out, err := c.GetObject(ctxT(t), &s3.GetObjectInput{Bucket: aws.String(bucket), Key: aws.String(key), PartNumber: aws.Int32(n)})
	if err != nil {
		t.Errorf("GET %s partNumber=%d: %v", key, n, err)
		return
	}
	got, err := io.ReadAll(out.Body)
	out.Body.Close()
	if err != nil || !bytes.Equal(got, want) {
		t.Errorf("GET %s partNumber=%d: err %v, %d bytes, want %d identical", key, n, err, len(got), len(want))
	}
	if aws.ToInt32(out.PartsCount) != int32(count) {
		t.Errorf("GET %s partNumber=%d: parts count %d, want %d", key, n, aws.ToInt32(out.PartsCount), count)
	}
}

// TestMultipartSDKEdges: last parts of awkward sizes after a first part of
// exactly 5 MiB, and an upload with part numbers 1 and 10000, on both
// backends: bytes, sizes and ETags agree in every view, Range GETs across
// part boundaries and GETs by part number return the right bytes.
func TestMultipartSDKEdges(t *testing.T) {
	t.Parallel()
	for _, be := range []string{"embedded", "moto"} {
		t.Run(be, func(t *testing.T) {
			t.Parallel()
			c := sdkFor(t, startBackend(t, be))
			mustCreateBucket(t, c, "mpedge")
			first := patternBytes(100, 5*mib)
			for i, last := range []int{0, 1, 64<<10 - 1, 64<<10 + 1, 5*mib + 7} {
				key := fmt.Sprintf("last-%d", last)
				t.Run(key, func(t *testing.T) {
					parts := []mpPart{{1, first}, {2, patternBytes(uint64(200+i), last)}}
					etag := mpUpload(t, c, "mpedge", key, parts)
					data := joinParts(parts)
					checkObject(t, c, "mpedge", key, data, etag)
					b := 5 * mib
					if last > 0 {
						checkRange(t, c, "mpedge", key, data, b-10, b+min(last, 100)-1)
						checkRange(t, c, "mpedge", key, data, b, -1)
						checkPartGet(t, c, "mpedge", key, 2, parts[1].Data, 2)
					}
					checkRange(t, c, "mpedge", key, data, b-65536-3, b-1)
					checkPartGet(t, c, "mpedge", key, 1, first, 2)
				})
			}
			t.Run("parts-1-and-10000", func(t *testing.T) {
				parts := []mpPart{{1, first}, {10000, patternBytes(300, 70000)}}
				etag := mpUpload(t, c, "mpedge", "sparse", parts)
				data := joinParts(parts)
				checkObject(t, c, "mpedge", "sparse", data, etag)
				checkRange(t, c, "mpedge", "sparse", data, 5*mib-1, 5*mib+65536)
				checkRange(t, c, "mpedge", "sparse", data, 100, -1)
				// s3seal serves ?partNumber= by the part's index in the completed
				// object (1..N), not by the number it was uploaded under.
				checkPartGet(t, c, "mpedge", "sparse", 2, parts[1].Data, 2)
			})
		})
	}
}

// crc32Base64 is the CRC32 (IEEE) of b as S3 states it: base64 of its
// four bytes, big-endian.
func crc32Base64(b []byte) string {
	var s [4]byte
	binary.BigEndian.PutUint32(s[:], crc32.ChecksumIEEE(b))
	return base64.StdEncoding.EncodeToString(s[:])
}

// TestFullObjectChecksumWithCopiedPart: a FULL_OBJECT CRC32 upload whose first
// part is an UploadPartCopy (range) and second an UploadPart completes
// with the CRC32 of the plaintext; a wrong stated final CRC32 is refused
// and leaves no object.
func TestFullObjectChecksumWithCopiedPart(t *testing.T) {
	_, c := startWithBucket(t, sealOpts{Backend: startMoto(t)}, mustCreateBucket, "fullcrc")
	ctx := ctxT(t)
	src := patternBytes(91, 6*mib)
	putObj(t, c, "fullcrc", "src", src)
	part2 := patternBytes(92, 1000)
	want := append(append([]byte{}, src[mib:6*mib]...), part2...)
	for _, wrong := range []bool{true, false} {
		cr, err := c.CreateMultipartUpload(ctx, &s3.CreateMultipartUploadInput{Bucket: aws.String("fullcrc"), Key: aws.String("dst"),
			ChecksumAlgorithm: types.ChecksumAlgorithmCrc32, ChecksumType: types.ChecksumTypeFullObject})
		if err != nil {
			t.Fatal(err)
		}
		cp, err := c.UploadPartCopy(ctx, &s3.UploadPartCopyInput{Bucket: aws.String("fullcrc"), Key: aws.String("dst"), UploadId: cr.UploadId,
			PartNumber: aws.Int32(1), CopySource: aws.String("fullcrc/src"), CopySourceRange: aws.String("bytes=1048576-6291455")})
		if err != nil {
			t.Fatal(err)
		}
		if got := aws.ToString(cp.CopyPartResult.ChecksumCRC32); got != crc32Base64(src[mib:6*mib]) {
			t.Errorf("copied part's CRC32 %q, want %q", got, crc32Base64(src[mib:6*mib]))
		}
		up, err := c.UploadPart(ctx, &s3.UploadPartInput{Bucket: aws.String("fullcrc"), Key: aws.String("dst"), UploadId: cr.UploadId,
			PartNumber: aws.Int32(2), Body: bytes.NewReader(part2), ChecksumAlgorithm: types.ChecksumAlgorithmCrc32})
		if err != nil {
			t.Fatal(err)
		}
		final := crc32Base64(want)
		if wrong {
			final = crc32Base64([]byte("not it"))
		}
		out, err := c.CompleteMultipartUpload(ctx, &s3.CompleteMultipartUploadInput{Bucket: aws.String("fullcrc"), Key: aws.String("dst"), UploadId: cr.UploadId,
			ChecksumCRC32: aws.String(final), ChecksumType: types.ChecksumTypeFullObject,
			MultipartUpload: &types.CompletedMultipartUpload{Parts: []types.CompletedPart{
				{PartNumber: aws.Int32(1), ETag: cp.CopyPartResult.ETag, ChecksumCRC32: cp.CopyPartResult.ChecksumCRC32},
				{PartNumber: aws.Int32(2), ETag: up.ETag, ChecksumCRC32: up.ChecksumCRC32}}}})
		if wrong {
			if err == nil {
				t.Errorf("completion with a wrong final CRC32 succeeded")
			}
			if _, herr := c.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String("fullcrc"), Key: aws.String("dst")}); herr == nil {
				t.Errorf("an object exists after the refused completion")
			}
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		if got := aws.ToString(out.ChecksumCRC32); got != final {
			t.Errorf("completion reports CRC32 %q, want %q", got, final)
		}
		g, err := c.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String("fullcrc"), Key: aws.String("dst"), ChecksumMode: types.ChecksumModeEnabled})
		if err != nil {
			t.Fatal(err)
		}
		body, err := io.ReadAll(g.Body)
		g.Body.Close()
		if err != nil || !bytes.Equal(body, want) || aws.ToString(g.ChecksumCRC32) != final {
			t.Errorf("GET: err %v, same bytes %v, CRC32 %q want %q", err, bytes.Equal(body, want), aws.ToString(g.ChecksumCRC32), final)
		}
	}
}
