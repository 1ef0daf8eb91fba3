package s3api

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
)

// heldBody sends a request's headers and holds its (empty) body until
// release is closed.
type heldBody struct {
	release chan struct{}
	sent    chan struct{}
}

func (h *heldBody) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Method == http.MethodPut && r.URL.Query().Has("acl") {
		r = r.Clone(r.Context())
		r.ContentLength = -1 // chunked: the headers go first
		r.Body = io.NopCloser(readerFunc(func(p []byte) (int, error) {
			select {
			case h.sent <- struct{}{}:
			default:
			}
			<-h.release
			return 0, io.EOF
		}))
		r.GetBody = nil
	}
	return http.DefaultTransport.RoundTrip(r)
}

type readerFunc func([]byte) (int, error)

func (f readerFunc) Read(p []byte) (int, error) { return f(p) }

// TestPutObjectAclDecidedOnTheObjectItChanges: a PutObjectAcl is decided
// on the object whose ACL it writes. One authorised while its caller
// owned the current object (its ACL record), whose body comes only after
// the bucket owner has overwritten the object, does not put its grants
// on the owner's new content.
func TestPutObjectAclDecidedOnTheObjectItChanges(t *testing.T) {
	url := newTestServer(t, aclCreds())
	ctx := context.Background()
	alice, bob := sdkClient(url, "alice", "as"), sdkClient(url, "bob", "bs")
	held := &heldBody{release: make(chan struct{}), sent: make(chan struct{}, 1)}
	slowBob := s3.New(s3.Options{
		BaseEndpoint: aws.String(url), Region: "us-east-1",
		Credentials:  credentials.NewStaticCredentialsProvider("bob", "bs", ""),
		UsePathStyle: true, HTTPClient: &http.Client{Transport: held},
	})
	b, k := aws.String("bkt"), aws.String("k")
	createBucketBobWrites(t, alice, *b)
	if _, err := bob.PutObject(ctx, &s3.PutObjectInput{Bucket: b, Key: k, Body: strings.NewReader("bob's")}); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := slowBob.PutObjectAcl(ctx, &s3.PutObjectAclInput{Bucket: b, Key: k, ACL: types.ObjectCannedACLPublicRead})
		done <- err
	}()
	select {
	case <-held.sent:
	case err := <-done:
		t.Fatalf("PutObjectAcl ended before its body: %v", err)
	case <-time.After(10 * time.Second):
		t.Fatal("PutObjectAcl's body never asked for")
	}
	time.Sleep(200 * time.Millisecond) // the server has decided on the headers
	if _, err := alice.PutObject(ctx, &s3.PutObjectInput{Bucket: b, Key: k, Body: strings.NewReader("alice's secret")}); err != nil {
		t.Fatal(err)
	}
	close(held.release)
	t.Logf("bob's held PutObjectAcl: %v", <-done)
	anon := s3.New(s3.Options{BaseEndpoint: aws.String(url), Region: "us-east-1", UsePathStyle: true, HTTPClient: http.DefaultClient,
		Credentials: aws.AnonymousCredentials{}})
	for name, c := range map[string]*s3.Client{"bob": bob, "anonymous": anon} {
		if out, err := c.GetObject(ctx, &s3.GetObjectInput{Bucket: b, Key: k}); err == nil {
			body, _ := io.ReadAll(out.Body)
			t.Errorf("%s read the bucket owner's overwrite: %q", name, body)
		}
	}
	if acl, err := alice.GetObjectAcl(ctx, &s3.GetObjectAclInput{Bucket: b, Key: k}); err != nil || len(acl.Grants) != 1 {
		t.Errorf("ACL of the owner's overwrite: %+v, %v; want the owner's grant alone", acl, err)
	}
}
