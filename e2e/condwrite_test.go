package e2e

import (
	"bytes"
	"net/http"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
)

// TestSDKConditionalWrites: conditional PUTs and copies through two s3seal
// processes sharing one backend (moto) with one master key, as two
// replicas would: each sees the other's writes, and neither overwrites an
// object its condition does not allow.
func TestSDKConditionalWrites(t *testing.T) {
	t.Parallel()
	m := startMoto(t)
	pa := startS3seal(t, sealOpts{Backend: m})
	pb := startS3seal(t, sealOpts{Backend: m, Key: pa.Key})
	a, b := sdkFor(t, pa), sdkFor(t, pb)
	ctx := ctxT(t)
	mustCreateBucket(t, a, "cwrite")
	bkt := aws.String("cwrite")
	put := func(c *s3.Client, key string, body []byte, f func(*s3.PutObjectInput)) (*s3.PutObjectOutput, error) {
		in := &s3.PutObjectInput{Bucket: bkt, Key: aws.String(key), Body: bytes.NewReader(body)}
		f(in)
		return c.PutObject(ctx, in)
	}
	one, two := patternBytes(1, 3000), patternBytes(2, 4000)
	first, err := put(a, "lock", one, func(in *s3.PutObjectInput) { in.IfNoneMatch = aws.String("*") })
	if err != nil {
		t.Fatalf("A: If-None-Match on a free key: %v", err)
	}
	_, err = put(b, "lock", two, func(in *s3.PutObjectInput) { in.IfNoneMatch = aws.String("*") })
	wantStatus(t, "B: If-None-Match on A's object", err, http.StatusPreconditionFailed, "PreconditionFailed")
	second, err := put(b, "lock", two, func(in *s3.PutObjectInput) { in.IfMatch = first.ETag })
	if err != nil {
		t.Fatalf("B: If-Match on A's ETag: %v", err)
	}
	_, err = put(a, "lock", one, func(in *s3.PutObjectInput) { in.IfMatch = first.ETag })
	wantStatus(t, "A: If-Match on its stale ETag", err, http.StatusPreconditionFailed, "PreconditionFailed")
	_, err = put(a, "nothing", one, func(in *s3.PutObjectInput) { in.IfMatch = first.ETag })
	wantStatus(t, "A: If-Match on a missing key", err, http.StatusNotFound, "NoSuchKey")
	_, err = put(a, "lock", one, func(in *s3.PutObjectInput) { in.IfNoneMatch = first.ETag })
	wantStatus(t, "A: If-None-Match with an ETag", err, http.StatusNotImplemented, "NotImplemented")
	_, err = put(a, "lock", one, func(in *s3.PutObjectInput) {
		in.SSECustomerAlgorithm, in.SSECustomerKey = aws.String("AES256"), aws.String("MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY=")
	})
	wantStatus(t, "A: SSE-C without the key MD5", err, http.StatusBadRequest, "InvalidArgument")
	_, err = a.CopyObject(ctx, &s3.CopyObjectInput{Bucket: bkt, Key: aws.String("lock"), CopySource: aws.String("cwrite/lock"),
		MetadataDirective: types.MetadataDirectiveReplace, IfMatch: first.ETag})
	wantStatus(t, "A: copy onto a stale ETag", err, http.StatusPreconditionFailed, "PreconditionFailed")
	if got := getObj(t, a, "cwrite", "lock"); !bytes.Equal(got, two) {
		t.Fatalf("lock holds %d bytes, want B's write", len(got))
	}
	if unquote(second.ETag) != md5Hex(two) {
		t.Errorf("B's ETag %s, want the plaintext MD5", aws.ToString(second.ETag))
	}
}

// Racing If-None-Match: * PUTs through one s3seal on its embedded store:
// exactly one creates the object.
func TestSDKConditionalCreateRace(t *testing.T) {
	t.Parallel()
	c := sdkFor(t, startS3seal(t, sealOpts{}))
	mustCreateBucket(t, c, "race")
	ctx := ctxT(t)
	var wg sync.WaitGroup
	var mu sync.Mutex
	won, lost := 0, 0
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("race"), Key: aws.String("lock"),
				Body: bytes.NewReader(patternBytes(uint64(i), 1000)), IfNoneMatch: aws.String("*")})
			mu.Lock()
			defer mu.Unlock()
			if err == nil {
				won++
			} else if code, status := apiCode(err); status == http.StatusPreconditionFailed || code == "ConditionalRequestConflict" {
				lost++
			} else {
				t.Errorf("racing PUT: %v", err)
			}
		}()
	}
	wg.Wait()
	if won != 1 || lost != 7 {
		t.Fatalf("%d won, %d refused; want exactly one winner", won, lost)
	}
}
