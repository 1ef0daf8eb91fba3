package s3api

import (
	"bytes"
	"context"
	"io"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"

	"github.com/s3seal/s3seal/backend"
	"github.com/s3seal/s3seal/sealstore"
)

// Two s3seal processes on one store, as replicas behind a load balancer:
// each has its own sealstore (its own caches of bucket documents and
// manifests) and its own S3 front, over the same backend. An object
// record is bound to the content it was written for, so no process
// applies one to other content, whatever it has cached or when an
// overwrite lands.

// newServerPair is two fronts over one embedded store, for creds; wrapA,
// when set, wraps the store under the first only.
func newServerPair(t *testing.T, creds Credentials, wrapA func(backend.Store) backend.Store) (a, b string) {
	t.Helper()
	be := embeddedStore(t)
	kr := testKeyring()
	urls := make([]string, 2)
	for i := range urls {
		store := be
		if i == 0 && wrapA != nil {
			store = wrapA(be)
		}
		st, err := sealstore.New(sealstore.Direct(store), kr, sealstore.Options{SpoolDir: t.TempDir()})
		if err != nil {
			t.Fatal(err)
		}
		srv := httptest.NewServer(New(Config{Store: st, Credentials: creds}))
		t.Cleanup(srv.Close)
		urls[i] = srv.URL
	}
	return urls[0], urls[1]
}

// onRecordRead runs hook once, after the store has answered the first
// read of an object record (its whole body in hand) and before the
// reader gets it: what the hook changes lands between a decision by the
// record and what the request does next.
type onRecordRead struct {
	backend.Store
	once sync.Once
	hook func()
}

func (o *onRecordRead) GetObject(ctx context.Context, in backend.GetInput) (*backend.Object, error) {
	obj, err := o.Store.GetObject(ctx, in)
	if err != nil || o.hook == nil || !strings.HasPrefix(in.Key, sealstore.ObjectRecordPrefix) {
		return obj, err
	}
	b, err := io.ReadAll(obj.Body)
	obj.Body.Close()
	if err != nil {
		return nil, err
	}
	obj.Body = io.NopCloser(bytes.NewReader(b))
	o.once.Do(o.hook)
	return obj, nil
}

// readAs is what c reads of bucket/key, or the error's code.
func readAs(t *testing.T, c *s3.Client, bucket, key string) (string, string) {
	t.Helper()
	out, err := c.GetObject(context.Background(), &s3.GetObjectInput{Bucket: &bucket, Key: &key})
	if err != nil {
		return "", errCode(err)
	}
	defer out.Body.Close()
	b, _ := io.ReadAll(out.Body)
	return string(b), ""
}

// TestReadDecidedByRecordServesOnlyItsContent: bob may write alice's
// bucket; the object he wrote, public to him by its record, is read
// through process A. Between A's decision (reading bob's record) and its
// read of the object, alice overwrites the key through process B. A
// serves nothing of alice's content: the record that allowed bob was
// written for his.
func TestReadDecidedByRecordServesOnlyItsContent(t *testing.T) {
	var hooked *onRecordRead
	urlA, urlB := newServerPair(t, aclCreds(), func(s backend.Store) backend.Store {
		hooked = &onRecordRead{Store: s}
		return hooked
	})
	ctx := context.Background()
	aliceB, bobA := sdkClient(urlB, "alice", "as"), sdkClient(urlA, "bob", "bs")
	createBucketBobWrites(t, aliceB, "bkt")
	b, k := aws.String("bkt"), aws.String("k")
	if _, err := bobA.PutObject(ctx, &s3.PutObjectInput{Bucket: b, Key: k, Body: strings.NewReader("bob's")}); err != nil {
		t.Fatal(err)
	}
	if got, code := readAs(t, bobA, "bkt", "k"); got != "bob's" {
		t.Fatalf("bob reading the object he wrote: %q %s", got, code)
	}
	overwritten := false
	hooked.once = sync.Once{}
	hooked.hook = func() {
		_, err := aliceB.PutObject(ctx, &s3.PutObjectInput{Bucket: b, Key: k, Body: strings.NewReader("alice's secret")})
		overwritten = err == nil
	}
	got, code := readAs(t, bobA, "bkt", "k")
	if !overwritten {
		t.Fatal("alice's overwrite did not land between the decision and the read")
	}
	if got != "" || code != "AccessDenied" {
		t.Errorf("bob's read decided by his record, the owner's overwrite landing before the read: %q %s, want AccessDenied", got, code)
	}
	for _, u := range []string{urlA, urlB} {
		if got, code := readAs(t, sdkClient(u, "bob", "bs"), "bkt", "k"); code != "AccessDenied" {
			t.Errorf("bob reading alice's overwrite afterwards: %q %s, want AccessDenied", got, code)
		}
		if got, _ := readAs(t, sdkClient(u, "alice", "as"), "bkt", "k"); got != "alice's secret" {
			t.Errorf("alice reading her overwrite: %q", got)
		}
	}
}

// TestStaleDocumentsKeepNoRecordOnNewContent: process B has cached the
// bucket's documents before any object had a record. bob writes through
// A with an ACL (his record, the bucket now saying it has records); alice
// overwrites through B, which, by its cache, has no record to drop. bob's
// record stays, bound to his content: he reads alice's content through
// neither process, nor by HEAD, attributes, copy or ACL request.
func TestStaleDocumentsKeepNoRecordOnNewContent(t *testing.T) {
	urlA, urlB := newServerPair(t, aclCreds(), nil)
	ctx := context.Background()
	aliceB, bobA := sdkClient(urlB, "alice", "as"), sdkClient(urlA, "bob", "bs")
	createBucketBobWrites(t, aliceB, "bkt")
	b, k := aws.String("bkt"), aws.String("k")
	// B caches the documents: no object has a record yet.
	if _, err := aliceB.PutObject(ctx, &s3.PutObjectInput{Bucket: b, Key: aws.String("warm"), Body: strings.NewReader("x")}); err != nil {
		t.Fatal(err)
	}
	if _, err := bobA.PutObject(ctx, &s3.PutObjectInput{Bucket: b, Key: k, Body: strings.NewReader("bob's"), ACL: types.ObjectCannedACLPublicRead}); err != nil {
		t.Fatal(err)
	}
	if _, err := aliceB.PutObject(ctx, &s3.PutObjectInput{Bucket: b, Key: k, Body: strings.NewReader("alice's secret")}); err != nil {
		t.Fatal(err)
	}
	if _, err := bobA.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String("bobs")}); err != nil {
		t.Fatal(err)
	}
	for name, u := range map[string]string{"A": urlA, "B": urlB} {
		bob := sdkClient(u, "bob", "bs")
		if got, code := readAs(t, bob, "bkt", "k"); code != "AccessDenied" {
			t.Errorf("bob's GET through %s of alice's overwrite: %q %s, want AccessDenied", name, got, code)
		}
		if _, err := bob.HeadObject(ctx, &s3.HeadObjectInput{Bucket: b, Key: k}); errCode(err) != "Forbidden" {
			t.Errorf("bob's HEAD through %s: %v, want 403", name, err)
		}
		if _, err := bob.GetObjectAttributes(ctx, &s3.GetObjectAttributesInput{Bucket: b, Key: k,
			ObjectAttributes: []types.ObjectAttributes{types.ObjectAttributesEtag}}); errCode(err) != "AccessDenied" {
			t.Errorf("bob's GetObjectAttributes through %s: %v, want AccessDenied", name, err)
		}
		if _, err := bob.CopyObject(ctx, &s3.CopyObjectInput{Bucket: aws.String("bobs"), Key: aws.String("loot"), CopySource: aws.String("bkt/k")}); errCode(err) != "AccessDenied" {
			t.Errorf("bob's copy out through %s: %v, want AccessDenied", name, err)
		}
		if _, err := bob.GetObjectAcl(ctx, &s3.GetObjectAclInput{Bucket: b, Key: k}); errCode(err) != "AccessDenied" {
			t.Errorf("bob's GetObjectAcl through %s: %v, want AccessDenied", name, err)
		}
		if _, err := bob.PutObjectAcl(ctx, &s3.PutObjectAclInput{Bucket: b, Key: k, ACL: types.ObjectCannedACLPublicRead}); errCode(err) != "AccessDenied" {
			t.Errorf("bob's PutObjectAcl through %s: %v, want AccessDenied", name, err)
		}
		acl, err := sdkClient(u, "alice", "as").GetObjectAcl(ctx, &s3.GetObjectAclInput{Bucket: b, Key: k})
		if err != nil || aws.ToString(acl.Owner.ID) != "a11ce" || len(acl.Grants) != 1 {
			t.Errorf("the overwrite's ACL through %s: %+v, %v; want alice's alone", name, acl, err)
		}
	}
}
