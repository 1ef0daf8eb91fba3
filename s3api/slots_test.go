package s3api

import (
	"context"
	"errors"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	"github.com/aws/aws-sdk-go-v2/service/s3"
)

// With every slot taken by a request still sending its body, the next
// request waits, then gets 503 SlowDown; once the slot frees, requests go
// through again.
func TestMaxInFlight(t *testing.T) {
	srv := newTestServerWith(t, Config{Credentials: SingleCredential("ak", "sk"), MaxInFlight: 1, QueueTimeout: 200 * time.Millisecond})
	ctx := context.Background()
	c := sdkClient(srv.URL, "ak", "sk")
	if _, err := c.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String("bkt")}); err != nil {
		t.Fatal(err)
	}
	// A PUT whose body trickles holds the only slot. It is signed by hand:
	// the SDK sends an unseekable body chunked, without Content-Length.
	pr, pw := io.Pipe()
	req, _ := http.NewRequest(http.MethodPut, srv.URL+"/bkt/slow", pr)
	req.ContentLength = 1 << 20
	req.Header.Set("X-Amz-Content-Sha256", "UNSIGNED-PAYLOAD")
	if err := v4.NewSigner().SignHTTP(ctx, aws.Credentials{AccessKeyID: "ak", SecretAccessKey: "sk"}, req,
		"UNSIGNED-PAYLOAD", "s3", "us-east-1", time.Now()); err != nil {
		t.Fatal(err)
	}
	held := make(chan error, 1)
	go func() {
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				err = errors.New(resp.Status)
			}
		}
		pr.CloseWithError(err) // unblock the writes below if the PUT failed early
		held <- err
	}()
	// More than the client's write buffer, so the request reaches the server.
	half := make([]byte, 512<<10)
	if _, err := pw.Write(half); err != nil {
		t.Fatalf("the slow PUT never read its body: %v (%v)", err, <-held)
	}
	// Wait until the server has the PUT in flight.
	api := srv.Config.Handler.(*Server)
	for deadline := time.Now().Add(5 * time.Second); len(api.slots) == 0; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			pw.Close()
			t.Fatalf("the slow PUT never reached the handler: %v", <-held)
		}
	}
	start := time.Now()
	_, err := c.HeadBucket(ctx, &s3.HeadBucketInput{Bucket: aws.String("bkt")}, func(o *s3.Options) { o.RetryMaxAttempts = 1 })
	if code := httpStatus(err); code != http.StatusServiceUnavailable || time.Since(start) < 150*time.Millisecond {
		t.Fatalf("request beyond the limit: status %d after %v (%v), want 503 after the queue timeout", code, time.Since(start), err)
	}
	pw.Write(half)
	pw.Close()
	if err := <-held; err != nil {
		t.Fatalf("the slow PUT: %v", err)
	}
	if _, err := c.HeadBucket(ctx, &s3.HeadBucketInput{Bucket: aws.String("bkt")}); err != nil {
		t.Fatalf("after the slot freed: %v", err)
	}
}

func httpStatus(err error) int {
	var re interface{ HTTPStatusCode() int }
	if errors.As(err, &re) {
		return re.HTTPStatusCode()
	}
	return 0
}
