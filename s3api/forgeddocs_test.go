package s3api

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/s3seal/s3seal/backend"
	"github.com/s3seal/s3seal/sealstore"
)

// TestPlaintextBucketDocumentRefused: with plaintext reads allowed (a
// bucket being migrated), a bucket document the store holds in the clear
// is the provider's, not s3seal's: a policy planted under
// .s3seal/bucket/policy opens nothing, to another account or to anyone.
func TestPlaintextBucketDocumentRefused(t *testing.T) {
	be := embeddedStore(t)
	st, err := sealstore.New(sealstore.Direct(be), testKeyring(), sealstore.Options{SpoolDir: t.TempDir(), AllowPlaintextReads: true, BucketDocTTL: time.Nanosecond})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(New(Config{Credentials: aclCreds(), Store: st, AllowAnonymous: true}))
	t.Cleanup(srv.Close)
	ctx := context.Background()
	alice, bob := sdkClient(srv.URL, "alice", "as"), sdkClient(srv.URL, "bob", "bs")
	b, k := aws.String("bkt"), aws.String("k")
	if _, err := alice.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: b}); err != nil {
		t.Fatal(err)
	}
	if _, err := alice.PutObject(ctx, &s3.PutObjectInput{Bucket: b, Key: k, Body: strings.NewReader("secret")}); err != nil {
		t.Fatal(err)
	}
	if _, err := bob.GetObject(ctx, &s3.GetObjectInput{Bucket: b, Key: k}); errCode(err) != "AccessDenied" {
		t.Fatalf("before the forgery, another account's GetObject: %v, want AccessDenied", err)
	}
	// The provider writes a policy of its own, in the clear, where
	// s3seal keeps the bucket's.
	pol := `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Principal":"*","Action":"s3:GetObject","Resource":"arn:aws:s3:::bkt/*"}]}`
	if _, err := be.PutObject(ctx, backend.PutInput{Bucket: "bkt", Key: sealstore.BucketDocPrefix + "policy",
		Body: strings.NewReader(pol), Size: int64(len(pol))}); err != nil {
		t.Fatal(err)
	}
	if out, err := bob.GetObject(ctx, &s3.GetObjectInput{Bucket: b, Key: k}); err == nil {
		d, _ := io.ReadAll(out.Body)
		t.Errorf("after the provider planted a plaintext policy, another account's GetObject: 200 %q, want refused", d)
	}
	resp, err := http.Get(srv.URL + "/bkt/k")
	if err != nil {
		t.Fatal(err)
	}
	d, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode == http.StatusOK {
		t.Errorf("after the provider planted a plaintext policy, an anonymous GetObject: 200 %q, want refused", d)
	}
}

// docsListLies is a store that, once lie is set, answers the listing of
// s3seal's bucket documents with NoSuchBucket, and everything else as it
// is.
type docsListLies struct {
	backend.Store
	lie *atomic.Bool
}

func (d docsListLies) ListObjects(ctx context.Context, in backend.ListInput) (backend.ListOutput, error) {
	if d.lie.Load() && strings.HasPrefix(in.Prefix, sealstore.BucketDocPrefix) {
		return backend.ListOutput{}, &backend.Error{Code: "NoSuchBucket", StatusCode: 404, Message: "The specified bucket does not exist"}
	}
	return d.Store.ListObjects(ctx, in)
}

// TestDocsNoSuchBucketOpensNothing: a store that says a bucket is not
// there when s3seal reads its documents, and serves its objects, lets
// no anonymous request in: what the documents would have decided is
// unknown, and an anonymous request has no lists to fall back on.
func TestDocsNoSuchBucketOpensNothing(t *testing.T) {
	var lying atomic.Bool
	srv := newTestServerOver(t, Config{Credentials: aclCreds(), AllowAnonymous: true}, func(be backend.Store) backend.Store {
		return docsListLies{be, &lying}
	})
	ctx := context.Background()
	alice := sdkClient(srv.URL, "alice", "as")
	b, k := aws.String("bkt"), aws.String("k")
	if _, err := alice.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: b}); err != nil {
		t.Fatal(err)
	}
	if _, err := alice.PutObject(ctx, &s3.PutObjectInput{Bucket: b, Key: k, Body: strings.NewReader("secret")}); err != nil {
		t.Fatal(err)
	}
	time.Sleep(sealstore.DefaultBucketDocTTL + 100*time.Millisecond) // past the documents' cache
	lying.Store(true)
	resp, err := http.Get(srv.URL + "/bkt/k")
	if err != nil {
		t.Fatal(err)
	}
	d, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode == http.StatusOK {
		t.Errorf("an anonymous GetObject while the store denies the bucket's documents exist: 200 %q, want refused", d)
	}
	lying.Store(false)
	resp, err = http.Get(srv.URL + "/nobkt/k")
	if err != nil {
		t.Fatal(err)
	}
	d, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound || !strings.Contains(string(d), "<Code>NoSuchBucket</Code>") {
		t.Errorf("an anonymous GetObject in a bucket that is not there: %d %s, want 404 NoSuchBucket", resp.StatusCode, d)
	}
	lying.Store(true)
	req, _ := http.NewRequest(http.MethodPut, srv.URL+"/bkt/planted", strings.NewReader("x"))
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode == http.StatusOK {
		t.Errorf("an anonymous PutObject while the store denies the bucket's documents exist: 200, want refused")
	}
}

// docsListEndless answers the listing of s3seal's bucket documents with
// an empty page that is always truncated, with a new token each time.
type docsListEndless struct {
	backend.Store
	n *atomic.Int64
}

func (d docsListEndless) ListObjects(ctx context.Context, in backend.ListInput) (backend.ListOutput, error) {
	if strings.HasPrefix(in.Prefix, sealstore.BucketDocPrefix) {
		if err := ctx.Err(); err != nil {
			return backend.ListOutput{}, err
		}
		return backend.ListOutput{IsTruncated: true, NextContinuationToken: "t" + strconv.FormatInt(d.n.Add(1), 10)}, nil
	}
	return d.Store.ListObjects(ctx, in)
}

// TestEndlessDocsListingIsBounded: a store whose listing of a bucket's
// documents never ends gets an answer to the request, not a request that
// lists for as long as its client waits.
func TestEndlessDocsListingIsBounded(t *testing.T) {
	var pages atomic.Int64
	srv := newTestServerOver(t, Config{Credentials: aclCreds()}, func(be backend.Store) backend.Store {
		return docsListEndless{be, &pages}
	})
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	alice := sdkClient(srv.URL, "alice", "as")
	_, err := alice.ListObjectsV2(ctx, &s3.ListObjectsV2Input{Bucket: aws.String("bkt")})
	if ctx.Err() != nil {
		t.Errorf("a request to a bucket whose documents' listing never ends was still waiting after 3 s (%d pages listed): %v", pages.Load(), err)
	}
}
