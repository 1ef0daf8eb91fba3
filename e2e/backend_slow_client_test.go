package e2e

import (
	"bytes"
	"io"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
)

// pausingReader is a seekable body that stops for pause each time a read
// crosses at: a client whose upload goes quiet for a while.
// It has no WriteTo, so every copy of it goes through Read; it counts the
// pauses it made.
type pausingReader struct {
	r      *bytes.Reader
	at     int64
	pause  time.Duration
	paused int
}

func (r *pausingReader) Seek(off int64, whence int) (int64, error) { return r.r.Seek(off, whence) }

func (r *pausingReader) Read(p []byte) (int, error) {
	off := r.r.Size() - int64(r.r.Len())
	if off < r.at && off+int64(len(p)) >= r.at {
		p = p[:r.at-off]
		n, err := r.r.Read(p)
		time.Sleep(r.pause)
		r.paused++
		return n, err
	}
	return r.r.Read(p)
}

// A client whose upload pauses for several backend idle bounds is slow
// itself; the store is waiting on s3seal, not the other way round: the
// upload must go through.
func TestBackendSlowClientUpload(t *testing.T) {
	t.Parallel()
	p, _ := startStalling(t)
	c := sdkFor(t, p)
	mustCreateBucket(t, c, "slowput")
	data := patternBytes(7, 12*mib)
	pause := 3 * stallBound
	t.Run("put", func(t *testing.T) {
		body := &pausingReader{r: bytes.NewReader(data), at: 6 * mib, pause: pause}
		start := time.Now()
		_, err := c.PutObject(ctxT(t), &s3.PutObjectInput{Bucket: aws.String("slowput"), Key: aws.String("obj"),
			Body: body, ContentLength: aws.Int64(int64(len(data)))})
		t.Logf("PutObject: %d pauses, %v", body.paused, time.Since(start))
		if err != nil {
			t.Fatalf("PutObject whose client paused %v: %v", pause, err)
		}
		if got := getObj(t, c, "slowput", "obj"); !bytes.Equal(got, data) {
			t.Fatal("other bytes stored")
		}
	})
	t.Run("part", func(t *testing.T) {
		cr, err := c.CreateMultipartUpload(ctxT(t), &s3.CreateMultipartUploadInput{Bucket: aws.String("slowput"), Key: aws.String("mp")})
		if err != nil {
			t.Fatal(err)
		}
		body := &pausingReader{r: bytes.NewReader(data), at: 6 * mib, pause: pause}
		start := time.Now()
		_, err = c.UploadPart(ctxT(t), &s3.UploadPartInput{Bucket: aws.String("slowput"), Key: aws.String("mp"), UploadId: cr.UploadId,
			PartNumber: aws.Int32(1), Body: body, ContentLength: aws.Int64(int64(len(data)))})
		t.Logf("UploadPart: %d pauses, %v", body.paused, time.Since(start))
		if err != nil {
			t.Fatalf("UploadPart whose client paused %v: %v", pause, err)
		}
	})
	_ = io.EOF
}
