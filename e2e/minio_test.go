package e2e

import (
	"bytes"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/tls"
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
)

// minioChecksums are the checksums minio-go offers for a PUT, each with
// the value S3 reports for body, computed here independently of minio-go.
var minioChecksums = []struct {
	typ  minio.ChecksumType
	want func(body []byte) string
	got  func(minio.ObjectInfo) string
}{
	{minio.ChecksumCRC32, crc32B64, func(o minio.ObjectInfo) string { return o.ChecksumCRC32 }},
	{minio.ChecksumCRC32C, func(b []byte) string {
		var s [4]byte
		binary.BigEndian.PutUint32(s[:], crc32.Checksum(b, crc32.MakeTable(crc32.Castagnoli)))
		return base64.StdEncoding.EncodeToString(s[:])
	}, func(o minio.ObjectInfo) string { return o.ChecksumCRC32C }},
	{minio.ChecksumSHA1, func(b []byte) string { s := sha1.Sum(b); return base64.StdEncoding.EncodeToString(s[:]) },
		func(o minio.ObjectInfo) string { return o.ChecksumSHA1 }},
	{minio.ChecksumSHA256, func(b []byte) string { s := sha256.Sum256(b); return base64.StdEncoding.EncodeToString(s[:]) },
		func(o minio.ObjectInfo) string { return o.ChecksumSHA256 }},
	{minio.ChecksumCRC64NVME, crc64NVMEB64, func(o minio.ObjectInfo) string { return o.ChecksumCRC64NVME }},
}

// TestMinioGoChecksums uploads with minio-go (what mc is built on) and
// every checksum it offers, as `mc cp --checksum` does: over HTTP it sends
// STREAMING-AWS4-HMAC-SHA256-PAYLOAD-TRAILER (signed chunks and a signed
// trailer), over HTTPS STREAMING-UNSIGNED-PAYLOAD-TRAILER, both with its
// own trailer framing ("name:value\n", CRLF, then the signature line).
// Each object must be stored, read back identical and report the checksum.
func TestMinioGoChecksums(t *testing.T) {
	t.Parallel()
	tt := newTestTLS(t)
	for _, secure := range []bool{false, true} {
		name := "http"
		if secure {
			name = "https"
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			var p *sealProc
			if secure {
				p = startTLSS3seal(t, tt, sealOpts{})
			} else {
				p = startS3seal(t, sealOpts{})
			}
			tr := loopbackTransport()
			tr.TLSClientConfig = &tls.Config{RootCAs: tt.Pool}
			t.Cleanup(tr.CloseIdleConnections)
			rec := &reqRecorder{next: tr}
			host := strings.TrimPrefix(strings.TrimPrefix(p.Endpoint, "http://"), "https://")
			c, err := minio.New(host, &minio.Options{
				Creds: credentials.NewStaticV4(p.AccessKey, p.SecretKey, ""), Secure: secure,
				Transport: rec, Region: "us-east-1", BucketLookup: minio.BucketLookupPath,
				TrailingHeaders: true, MaxRetries: 1,
			})
			if err != nil {
				t.Fatal(err)
			}
			ctx := ctxT(t)
			bucket := "minio-" + name
			if err := c.MakeBucket(ctx, bucket, minio.MakeBucketOptions{}); err != nil {
				t.Fatal(err)
			}
			wantMode := "STREAMING-AWS4-HMAC-SHA256-PAYLOAD-TRAILER"
			if secure {
				wantMode = "STREAMING-UNSIGNED-PAYLOAD-TRAILER"
			}
			for i, ck := range minioChecksums {
				for _, size := range []int{1, 65536, 200001} {
					body := patternBytes(uint64(700+i), size)
					key := fmt.Sprintf("%s/%d", strings.ToLower(ck.typ.String()), size)
					what := fmt.Sprintf("PutObject %s %d bytes", ck.typ, size)
					info, err := c.PutObject(ctx, bucket, key, bytes.NewReader(body), int64(size),
						minio.PutObjectOptions{Checksum: ck.typ, DisableMultipart: true})
					if err != nil {
						t.Fatalf("%s: %v", what, err)
					}
					if info.ETag != md5Hex(body) {
						t.Errorf("%s: ETag %s, want %s", what, info.ETag, md5Hex(body))
					}
					sent, ok := rec.last(http.MethodPut, "/"+bucket+"/"+key)
					if !ok {
						t.Fatalf("%s: request not recorded", what)
					}
					if m, tr := sent.Header.Get("X-Amz-Content-Sha256"), sent.Header.Get("X-Amz-Trailer"); m != wantMode || !strings.EqualFold(tr, ck.typ.Key()) {
						t.Errorf("%s: sent x-amz-content-sha256 %q x-amz-trailer %q, want %s with %s (not the path this test is for)", what, m, tr, wantMode, ck.typ.Key())
					}
					st, err := c.StatObject(ctx, bucket, key, minio.StatObjectOptions{Checksum: true})
					if err != nil {
						t.Fatalf("StatObject %s: %v", key, err)
					}
					if got, want := ck.got(st), ck.want(body); got != want || st.Size != int64(size) {
						t.Errorf("StatObject %s: size %d checksum %q, want %d %q", key, st.Size, got, size, want)
					}
					o, err := c.GetObject(ctx, bucket, key, minio.GetObjectOptions{})
					if err != nil {
						t.Fatal(err)
					}
					got, err := io.ReadAll(o)
					o.Close()
					if err != nil || !bytes.Equal(got, body) {
						t.Errorf("GetObject %s: %d bytes (err %v), want %d identical", key, len(got), err, size)
					}
				}
			}
		})
	}
}
