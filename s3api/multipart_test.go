package s3api

import (
	"bytes"
	"context"
	"crypto/md5"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"

	"github.com/s3seal/s3seal/backend"
	"github.com/s3seal/s3seal/checksum"
)

const mib = 1 << 20

func randData(n int, seed uint64) []byte {
	r := rand.New(rand.NewPCG(seed, 3))
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return b
}

func multipartETag(parts ...[]byte) string {
	h := md5.New()
	for _, p := range parts {
		s := md5.Sum(p)
		h.Write(s[:])
	}
	return fmt.Sprintf(`"%x-%d"`, h.Sum(nil), len(parts))
}

// TestMultipartSDK drives a whole upload with the Go SDK: checksums per
// part and for the object (COMPOSITE CRC32), ListParts, the completion,
// HEAD and GET of the object and of each part, ListMultipartUploads and
// abort.
func TestMultipartSDK(t *testing.T) {
	_, ctx, c := newBucketServer(t, SingleCredential("ak", "sk"))
	b := aws.String("bkt")
	cr, err := c.CreateMultipartUpload(ctx, &s3.CreateMultipartUploadInput{Bucket: b, Key: aws.String("big"),
		ChecksumAlgorithm: types.ChecksumAlgorithmCrc32, Metadata: map[string]string{"m": "1"}})
	if err != nil {
		t.Fatal(err)
	}
	if cr.ChecksumAlgorithm != types.ChecksumAlgorithmCrc32 || cr.ChecksumType != types.ChecksumTypeComposite {
		t.Errorf("create: algorithm %q type %q", cr.ChecksumAlgorithm, cr.ChecksumType)
	}
	parts := [][]byte{randData(5*mib+1, 1), randData(5*mib, 2), randData(777, 3)}
	var done []types.CompletedPart
	for i, p := range parts {
		n := int32(i + 1)
		out, err := c.UploadPart(ctx, &s3.UploadPartInput{Bucket: b, Key: aws.String("big"), UploadId: cr.UploadId,
			PartNumber: aws.Int32(n), Body: bytes.NewReader(p), ChecksumAlgorithm: types.ChecksumAlgorithmCrc32})
		if err != nil {
			t.Fatalf("part %d: %v", n, err)
		}
		if want := fmt.Sprintf(`"%x"`, md5.Sum(p)); aws.ToString(out.ETag) != want || out.ChecksumCRC32 == nil {
			t.Fatalf("part %d: etag %s crc %v", n, aws.ToString(out.ETag), out.ChecksumCRC32)
		}
		done = append(done, types.CompletedPart{PartNumber: aws.Int32(n), ETag: out.ETag, ChecksumCRC32: out.ChecksumCRC32})
	}
	lp, err := c.ListParts(ctx, &s3.ListPartsInput{Bucket: b, Key: aws.String("big"), UploadId: cr.UploadId})
	if err != nil || len(lp.Parts) != 3 || aws.ToInt64(lp.Parts[0].Size) != 5*mib+1 || aws.ToString(lp.Parts[2].ETag) != aws.ToString(done[2].ETag) {
		t.Fatalf("list parts: %+v, %v", lp, err)
	}
	lu, err := c.ListMultipartUploads(ctx, &s3.ListMultipartUploadsInput{Bucket: b})
	if err != nil || len(lu.Uploads) != 1 || aws.ToString(lu.Uploads[0].UploadId) != aws.ToString(cr.UploadId) {
		t.Fatalf("list uploads: %+v, %v", lu, err)
	}
	comp, err := c.CompleteMultipartUpload(ctx, &s3.CompleteMultipartUploadInput{Bucket: b, Key: aws.String("big"), UploadId: cr.UploadId,
		MultipartUpload: &types.CompletedMultipartUpload{Parts: done}})
	if err != nil {
		t.Fatal(err)
	}
	want := multipartETag(parts...)
	if aws.ToString(comp.ETag) != want || !strings.HasSuffix(aws.ToString(comp.ChecksumCRC32), "-3") {
		t.Fatalf("complete: etag %s, crc %s", aws.ToString(comp.ETag), aws.ToString(comp.ChecksumCRC32))
	}
	whole := bytes.Join(parts, nil)
	head, err := c.HeadObject(ctx, &s3.HeadObjectInput{Bucket: b, Key: aws.String("big"), ChecksumMode: types.ChecksumModeEnabled})
	if err != nil || aws.ToString(head.ETag) != want || aws.ToInt64(head.ContentLength) != int64(len(whole)) ||
		head.Metadata["m"] != "1" || aws.ToString(head.ChecksumCRC32) != aws.ToString(comp.ChecksumCRC32) {
		t.Fatalf("head: %+v, %v", head, err)
	}
	get, err := c.GetObject(ctx, &s3.GetObjectInput{Bucket: b, Key: aws.String("big")})
	if err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(get.Body)
	get.Body.Close()
	if err != nil || !bytes.Equal(got, whole) {
		t.Fatalf("get: %d bytes, %v", len(got), err)
	}
	for i, p := range parts {
		n := int32(i + 1)
		h, err := c.HeadObject(ctx, &s3.HeadObjectInput{Bucket: b, Key: aws.String("big"), PartNumber: aws.Int32(n)})
		if err != nil || aws.ToInt32(h.PartsCount) != 3 || aws.ToInt64(h.ContentLength) != int64(len(p)) {
			t.Fatalf("head part %d: %+v, %v", n, h, err)
		}
		g, err := c.GetObject(ctx, &s3.GetObjectInput{Bucket: b, Key: aws.String("big"), PartNumber: aws.Int32(n)})
		if err != nil {
			t.Fatalf("get part %d: %v", n, err)
		}
		got, _ := io.ReadAll(g.Body)
		g.Body.Close()
		if !bytes.Equal(got, p) || aws.ToInt32(g.PartsCount) != 3 {
			t.Fatalf("get part %d: %d bytes, parts count %d", n, len(got), aws.ToInt32(g.PartsCount))
		}
	}
	if _, err := c.GetObject(ctx, &s3.GetObjectInput{Bucket: b, Key: aws.String("big"), PartNumber: aws.Int32(4)}); apiCode(err) != "InvalidPartNumber" {
		t.Errorf("part 4: %v", err)
	}
	list, err := c.ListObjectsV2(ctx, &s3.ListObjectsV2Input{Bucket: b})
	if err != nil || len(list.Contents) != 1 || aws.ToString(list.Contents[0].ETag) != want || aws.ToInt64(list.Contents[0].Size) != int64(len(whole)) {
		t.Fatalf("list: %+v, %v", list.Contents, err)
	}

	// Abort.
	cr2, _ := c.CreateMultipartUpload(ctx, &s3.CreateMultipartUploadInput{Bucket: b, Key: aws.String("gone")})
	if _, err := c.AbortMultipartUpload(ctx, &s3.AbortMultipartUploadInput{Bucket: b, Key: aws.String("gone"), UploadId: cr2.UploadId}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.UploadPart(ctx, &s3.UploadPartInput{Bucket: b, Key: aws.String("gone"), UploadId: cr2.UploadId,
		PartNumber: aws.Int32(1), Body: strings.NewReader("x")}); apiCode(err) != "NoSuchUpload" {
		t.Errorf("part after abort: %v", err)
	}
}

// TestUploadPartCopy copies ranges of an object (across its part
// boundary, and a whole single-PUT object) into a new upload.
func TestUploadPartCopy(t *testing.T) {
	_, ctx, c := newBucketServer(t, SingleCredential("ak", "sk"))
	b := aws.String("bkt")
	src := randData(6*mib, 9)
	if _, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: b, Key: aws.String("src"), Body: bytes.NewReader(src)}); err != nil {
		t.Fatal(err)
	}
	cr, err := c.CreateMultipartUpload(ctx, &s3.CreateMultipartUploadInput{Bucket: b, Key: aws.String("dst")})
	if err != nil {
		t.Fatal(err)
	}
	p1, err := c.UploadPartCopy(ctx, &s3.UploadPartCopyInput{Bucket: b, Key: aws.String("dst"), UploadId: cr.UploadId,
		PartNumber: aws.Int32(1), CopySource: aws.String("bkt/src"), CopySourceRange: aws.String(fmt.Sprintf("bytes=100-%d", 100+5*mib-1))})
	if err != nil {
		t.Fatal(err)
	}
	p2, err := c.UploadPartCopy(ctx, &s3.UploadPartCopyInput{Bucket: b, Key: aws.String("dst"), UploadId: cr.UploadId,
		PartNumber: aws.Int32(2), CopySource: aws.String("bkt/src")})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.UploadPartCopy(ctx, &s3.UploadPartCopyInput{Bucket: b, Key: aws.String("dst"), UploadId: cr.UploadId,
		PartNumber: aws.Int32(3), CopySource: aws.String("bkt/src"), CopySourceRange: aws.String("bytes=0-99999999")}); apiCode(err) != "InvalidRange" {
		t.Errorf("range past the end: %v", err)
	}
	comp, err := c.CompleteMultipartUpload(ctx, &s3.CompleteMultipartUploadInput{Bucket: b, Key: aws.String("dst"), UploadId: cr.UploadId,
		MultipartUpload: &types.CompletedMultipartUpload{Parts: []types.CompletedPart{
			{PartNumber: aws.Int32(1), ETag: p1.CopyPartResult.ETag}, {PartNumber: aws.Int32(2), ETag: p2.CopyPartResult.ETag}}}})
	if err != nil {
		t.Fatal(err)
	}
	want := append(bytes.Clone(src[100:100+5*mib]), src...)
	if aws.ToString(comp.ETag) != multipartETag(src[100:100+5*mib], src) {
		t.Fatalf("etag %s", aws.ToString(comp.ETag))
	}
	// No algorithm at creation: the object gets a FULL_OBJECT CRC64NVME,
	// as on S3, equal to the CRC of the whole plaintext.
	h := checksum.NewHasher(checksum.CRC64NVME)
	h.Write(want)
	head, err := c.HeadObject(ctx, &s3.HeadObjectInput{Bucket: b, Key: aws.String("dst"), ChecksumMode: types.ChecksumModeEnabled})
	if err != nil || aws.ToString(head.ChecksumCRC64NVME) != h.Base64() {
		t.Fatalf("head: crc64nvme %q, want %q (%v)", aws.ToString(head.ChecksumCRC64NVME), h.Base64(), err)
	}
	g, err := c.GetObject(ctx, &s3.GetObjectInput{Bucket: b, Key: aws.String("dst"), Range: aws.String(fmt.Sprintf("bytes=%d-%d", 5*mib-10, 5*mib+10))})
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(g.Body)
	g.Body.Close()
	if !bytes.Equal(got, want[5*mib-10:5*mib+11]) {
		t.Fatal("range across the copied parts differs")
	}
}

// slowComplete delays the backend completion, so that s3seal's keep-alive
// starts.
type slowComplete struct {
	backend.Store
	delay time.Duration
	err   error
}

func (s slowComplete) CompleteMultipartUpload(ctx context.Context, in backend.CompleteMultipartInput) (backend.CompleteMultipartOutput, error) {
	time.Sleep(s.delay)
	if s.err != nil {
		return backend.CompleteMultipartOutput{}, s.err
	}
	return s.Store.CompleteMultipartUpload(ctx, in)
}

// TestCompleteKeepAlive: a slow completion is answered 200 at once, kept
// alive with spaces, then the result; a failure after the 200 comes as an
// <Error> element, which the SDK reports as the error it is.
func TestCompleteKeepAlive(t *testing.T) {
	for _, fail := range []bool{false, true} {
		t.Run(fmt.Sprintf("fail=%v", fail), func(t *testing.T) {
			var err error
			if fail {
				err = &backend.Error{Op: "CompleteMultipartUpload", Code: "AccessDenied", StatusCode: 403, Message: "no"}
			}
			srv := newTestServerOver(t, Config{Credentials: SingleCredential("ak", "sk"),
				KeepAliveDelay: 20 * time.Millisecond, KeepAliveInterval: 20 * time.Millisecond},
				func(be backend.Store) backend.Store {
					return slowComplete{Store: be, delay: 300 * time.Millisecond, err: err}
				})
			ctx := context.Background()
			c := sdkClient(srv.URL, "ak", "sk")
			b, k := aws.String("bkt"), aws.String("k")
			c.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: b})
			cr, _ := c.CreateMultipartUpload(ctx, &s3.CreateMultipartUploadInput{Bucket: b, Key: k})
			up, _ := c.UploadPart(ctx, &s3.UploadPartInput{Bucket: b, Key: k, UploadId: cr.UploadId, PartNumber: aws.Int32(1), Body: strings.NewReader("hello")})
			body := fmt.Sprintf(`<CompleteMultipartUpload><Part><PartNumber>1</PartNumber><ETag>%s</ETag></Part></CompleteMultipartUpload>`, aws.ToString(up.ETag))
			req, _ := http.NewRequest(http.MethodPost, srv.URL+"/bkt/k?uploadId="+aws.ToString(cr.UploadId), strings.NewReader(body))
			req.Header.Set("X-Amz-Content-Sha256", "UNSIGNED-PAYLOAD")
			if err := v4.NewSigner().SignHTTP(ctx, aws.Credentials{AccessKeyID: "ak", SecretAccessKey: "sk"}, req,
				"UNSIGNED-PAYLOAD", "s3", "us-east-1", time.Now()); err != nil {
				t.Fatal(err)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			raw, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != 200 || !strings.Contains(string(raw), "?>\n  ") {
				t.Fatalf("status %d, body %q: want 200 and spaces after the declaration", resp.StatusCode, raw)
			}
			if fail != strings.Contains(string(raw), "<Error><Code>AccessDenied</Code>") || fail == strings.Contains(string(raw), "<CompleteMultipartUploadResult") {
				t.Fatalf("body %q", raw)
			}
			// The SDK sees the same.
			cr, _ = c.CreateMultipartUpload(ctx, &s3.CreateMultipartUploadInput{Bucket: b, Key: k})
			up, _ = c.UploadPart(ctx, &s3.UploadPartInput{Bucket: b, Key: k, UploadId: cr.UploadId, PartNumber: aws.Int32(1), Body: strings.NewReader("hello")})
			_, err = c.CompleteMultipartUpload(ctx, &s3.CompleteMultipartUploadInput{Bucket: b, Key: k, UploadId: cr.UploadId,
				MultipartUpload: &types.CompletedMultipartUpload{Parts: []types.CompletedPart{{PartNumber: aws.Int32(1), ETag: up.ETag}}}},
				func(o *s3.Options) { o.RetryMaxAttempts = 1 })
			if fail != (apiCode(err) == "AccessDenied") || (!fail && err != nil) {
				t.Fatalf("SDK: %v", err)
			}
		})
	}
}

// backendAssemblesSlowly models a backend whose completion takes a while
// (S3 assembling a large object): the first CompleteMultipartUpload it
// receives is executed by the backend even if s3seal's side gives up (the
// request is already at the store), and finishes only after the next
// ListParts (the client's retry) has been served.
type backendAssemblesSlowly struct {
	backend.Store
	completes, listParts atomic.Int32
	retryListed          chan struct{}
	firstDone            chan struct{}
}

func (b *backendAssemblesSlowly) ListParts(ctx context.Context, in backend.ListPartsInput) (backend.ListPartsOutput, error) {
	out, err := b.Store.ListParts(ctx, in)
	if b.listParts.Add(1) == 2 {
		close(b.retryListed)
	}
	return out, err
}
func (b *backendAssemblesSlowly) CompleteMultipartUpload(ctx context.Context, in backend.CompleteMultipartInput) (backend.CompleteMultipartOutput, error) {
	if b.completes.Add(1) == 1 {
		select {
		case <-b.retryListed:
		case <-time.After(10 * time.Second):
		}
		time.Sleep(100 * time.Millisecond)
		defer close(b.firstDone)
		return b.Store.CompleteMultipartUpload(context.Background(), in)
	}
	<-b.firstDone // the retry reaches the store after the first finished
	return b.Store.CompleteMultipartUpload(ctx, in)
}

// TestSDKRetryOfSlowCompletionKeepsManifest: the Go SDK, with an HTTP
// client timeout shorter than the backend's assembly, retries
// CompleteMultipartUpload. The backend completes the first request; the
// retry's backend completion answers NoSuchUpload on its first attempt.
// s3seal used to delete .s3seal/manifests/<oid> then, the manifest of the
// object now at the key, which no other process could read any more.
func TestSDKRetryOfSlowCompletionKeepsManifest(t *testing.T) {
	var be *backendAssemblesSlowly
	srv := newTestServerOver(t, Config{Credentials: SingleCredential("ak", "sk"),
		KeepAliveDelay: time.Minute, KeepAliveInterval: time.Minute},
		func(s backend.Store) backend.Store {
			be = &backendAssemblesSlowly{Store: s, retryListed: make(chan struct{}), firstDone: make(chan struct{})}
			return be
		})
	ctx := context.Background()
	c := s3.New(s3.Options{
		BaseEndpoint: aws.String(srv.URL), Region: "us-east-1", UsePathStyle: true,
		Credentials: sdkClient(srv.URL, "ak", "sk").Options().Credentials,
		HTTPClient:  &http.Client{Timeout: 400 * time.Millisecond},
	})
	b, k := aws.String("bkt"), aws.String("obj")
	if _, err := c.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: b}); err != nil {
		t.Fatal(err)
	}
	cr, err := c.CreateMultipartUpload(ctx, &s3.CreateMultipartUploadInput{Bucket: b, Key: k})
	if err != nil {
		t.Fatal(err)
	}
	up, err := c.UploadPart(ctx, &s3.UploadPartInput{Bucket: b, Key: k, UploadId: cr.UploadId, PartNumber: aws.Int32(1),
		Body: bytes.NewReader(randData(1000, 1))})
	if err != nil {
		t.Fatal(err)
	}
	_, cerr := c.CompleteMultipartUpload(ctx, &s3.CompleteMultipartUploadInput{Bucket: b, Key: k, UploadId: cr.UploadId,
		MultipartUpload: &types.CompletedMultipartUpload{Parts: []types.CompletedPart{{PartNumber: aws.Int32(1), ETag: up.ETag}}}})
	time.Sleep(time.Second) // let the first completion's handler finish
	t.Logf("SDK completion: %v (backend completions: %d, ListParts: %d)", cerr, be.completes.Load(), be.listParts.Load())
	obj, err := be.Store.HeadObject(ctx, "bkt", "obj")
	if err != nil {
		t.Fatalf("no object at the key: %v", err)
	}
	out, err := be.Store.ListObjects(ctx, backend.ListInput{Bucket: "bkt", V2: true, Prefix: ".s3seal/manifests/"})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("object at the key: %d bytes, oid %s; manifests: %d", obj.Size, obj.Meta["s3seal-oid"], len(out.Entries))
	if len(out.Entries) == 0 {
		t.Errorf("the object at the key has no manifest left: a SDK retry of a slow completion deleted it")
	}
}

// TestListPartsMaxPartsZero: ListParts with max-parts=0 returns no part and
// IsTruncated true, as S3 (it used to return every part).
func TestListPartsMaxPartsZero(t *testing.T) {
	_, ctx, c := newBucketServer(t, SingleCredential("ak", "sk"))
	b, k := aws.String("bkt"), aws.String("k")
	cr, err := c.CreateMultipartUpload(ctx, &s3.CreateMultipartUploadInput{Bucket: b, Key: k})
	if err != nil {
		t.Fatal(err)
	}
	for n := int32(1); n <= 3; n++ {
		if _, err := c.UploadPart(ctx, &s3.UploadPartInput{Bucket: b, Key: k, UploadId: cr.UploadId, PartNumber: aws.Int32(n),
			Body: bytes.NewReader([]byte("x"))}); err != nil {
			t.Fatal(err)
		}
	}
	lp, err := c.ListParts(ctx, &s3.ListPartsInput{Bucket: b, Key: k, UploadId: cr.UploadId, MaxParts: aws.Int32(0)})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("max-parts=0: %d parts, MaxParts %d, IsTruncated %v", len(lp.Parts), aws.ToInt32(lp.MaxParts), aws.ToBool(lp.IsTruncated))
	if len(lp.Parts) != 0 || !aws.ToBool(lp.IsTruncated) {
		t.Errorf("max-parts=0 returned %d parts, IsTruncated %v", len(lp.Parts), aws.ToBool(lp.IsTruncated))
	}
}
