package e2e

import (
	"bytes"
	"context"
	"crypto/md5"
	"fmt"
	"io"
	"os"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"

	"github.com/s3seal/s3seal/backend/embedded"
)

// BenchmarkMultipartUploads sends N concurrent multipart uploads of SIZE
// bytes each (16 MiB parts) through the s3seal binary and, in the same run,
// straight to the store underneath it (an embedded store started in the
// benchmark process), and reports s3seal's peak RSS growth and the time
// ratio sealed/direct. Defaults: 8 uploads of 1 GiB; set
// S3SEAL_BENCH_UPLOADS and S3SEAL_BENCH_UPLOAD_MIB to change them.
//
//	go test ./e2e -run '^$' -bench MultipartUploads -benchtime 1x -timeout 60m
func BenchmarkMultipartUploads(b *testing.B) {
	uploads := envInt("S3SEAL_BENCH_UPLOADS", 8)
	size := int64(envInt("S3SEAL_BENCH_UPLOAD_MIB", 1024)) << 20
	const partSize = 16 << 20

	emb, err := embedded.Start(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { emb.Close() })
	ecfg := emb.Config()
	p := startS3seal(b, sealOpts{AccessKey: "bench", SecretKey: "bench-secret-key", Args: []string{
		"--backend-endpoint", ecfg.Endpoint, "--backend-path-style", "--backend-access-key", ecfg.AccessKey,
		"--backend-secret-key", ecfg.SecretKey, "--key", randomKey(b)}})
	sealed := newSDKClient(b, p.Endpoint, p.AccessKey, p.SecretKey, true)
	direct := newSDKClient(b, ecfg.Endpoint, ecfg.AccessKey, ecfg.SecretKey, true)
	ctx := context.Background()
	for _, c := range []struct {
		cl     *s3.Client
		bucket string
	}{{sealed, "sealed"}, {direct, "direct"}} {
		if _, err := c.cl.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String(c.bucket)}); err != nil {
			b.Fatal(err)
		}
	}
	// Warm up s3seal's pools with one small upload.
	if _, err := uploadAll(ctx, sealed, "sealed", 1, 2*partSize, partSize); err != nil {
		b.Fatal(err)
	}
	rssBefore, _ := procMemory(b, p.PID())

	b.ResetTimer()
	for range b.N {
		t0 := time.Now()
		etags, err := uploadAll(ctx, sealed, "sealed", uploads, size, partSize)
		if err != nil {
			b.Fatal(err)
		}
		tSealed := time.Since(t0)
		_, hwm := procMemory(b, p.PID())
		t0 = time.Now()
		if _, err := uploadAll(ctx, direct, "direct", uploads, size, partSize); err != nil {
			b.Fatal(err)
		}
		tDirect := time.Since(t0)
		// The ETags s3seal answered are S3's md5 of the plaintext parts'
		// MD5s: recompute one to be sure the bytes went through whole.
		if want := multipartETagOf(size, partSize, 0); etags[0] != want {
			b.Fatalf("upload 0: ETag %s, want %s", etags[0], want)
		}
		total := float64(int64(uploads)*size) / (1 << 20)
		b.ReportMetric(float64(hwm-rssBefore)/(1<<20), "rss-growth-MiB")
		b.ReportMetric(total/tSealed.Seconds(), "sealed-MiB/s")
		b.ReportMetric(total/tDirect.Seconds(), "direct-MiB/s")
		b.ReportMetric(tSealed.Seconds()/tDirect.Seconds(), "time-ratio")
		b.Logf("%d x %d MiB: sealed %v, direct %v (ratio %.2f); s3seal RSS %d MiB before, peak %d MiB",
			uploads, size>>20, tSealed.Round(time.Millisecond), tDirect.Round(time.Millisecond),
			tSealed.Seconds()/tDirect.Seconds(), rssBefore>>20, hwm>>20)
		for _, bucket := range []string{"sealed", "direct"} {
			cl := map[string]*s3.Client{"sealed": sealed, "direct": direct}[bucket]
			for i := range uploads {
				_, _ = cl.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: aws.String(bucket), Key: aws.String(fmt.Sprintf("obj-%d", i))})
			}
		}
	}
}

func envInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v > 0 {
		return v
	}
	return def
}

// partData fills buf with part i of upload u: a pattern that needs no
// memory beyond one part per upload.
func partData(buf []byte, u, i int) []byte {
	r := newPatternReader(uint64(1000+u), int64(i+1)*int64(len(buf)))
	_, _ = r.Seek(int64(i)*int64(len(buf)), io.SeekStart)
	n, _ := io.ReadFull(r, buf)
	return buf[:n]
}

// multipartETagOf is the ETag of upload u of size bytes in parts of
// partSize.
func multipartETagOf(size, partSize int64, u int) string {
	h := md5.New()
	buf := make([]byte, partSize)
	n := int((size + partSize - 1) / partSize)
	for i := range n {
		part := partData(buf[:min(partSize, size-int64(i)*partSize)], u, i)
		s := md5.Sum(part)
		h.Write(s[:])
	}
	return fmt.Sprintf("%x-%d", h.Sum(nil), n)
}

// uploadAll runs uploads concurrent multipart uploads of size bytes each
// into bucket and returns their ETags.
func uploadAll(ctx context.Context, c *s3.Client, bucket string, uploads int, size, partSize int64) ([]string, error) {
	etags := make([]string, uploads)
	errs := make([]error, uploads)
	var wg sync.WaitGroup
	for u := range uploads {
		wg.Add(1)
		go func() {
			defer wg.Done()
			etags[u], errs[u] = uploadOne(ctx, c, bucket, fmt.Sprintf("obj-%d", u), u, size, partSize)
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	return etags, nil
}

func uploadOne(ctx context.Context, c *s3.Client, bucket, key string, u int, size, partSize int64) (string, error) {
	cr, err := c.CreateMultipartUpload(ctx, &s3.CreateMultipartUploadInput{Bucket: aws.String(bucket), Key: aws.String(key)})
	if err != nil {
		return "", err
	}
	buf := make([]byte, partSize)
	var parts []types.CompletedPart
	for i := 0; int64(i)*partSize < size; i++ {
		data := partData(buf[:min(partSize, size-int64(i)*partSize)], u, i)
		out, err := c.UploadPart(ctx, &s3.UploadPartInput{Bucket: aws.String(bucket), Key: aws.String(key), UploadId: cr.UploadId,
			PartNumber: aws.Int32(int32(i + 1)), Body: bytes.NewReader(data), ContentLength: aws.Int64(int64(len(data)))})
		if err != nil {
			return "", fmt.Errorf("%s part %d: %w", key, i+1, err)
		}
		parts = append(parts, types.CompletedPart{PartNumber: aws.Int32(int32(i + 1)), ETag: out.ETag})
	}
	out, err := c.CompleteMultipartUpload(ctx, &s3.CompleteMultipartUploadInput{Bucket: aws.String(bucket), Key: aws.String(key),
		UploadId: cr.UploadId, MultipartUpload: &types.CompletedMultipartUpload{Parts: parts}})
	if err != nil {
		return "", err
	}
	return unquote(out.ETag), nil
}
