package s3api

import (
	"context"
	"io"
	"net/http"
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

// serviceCreds are aclCreds, with alice an admin, dave an admin of the
// default account whose lists name the service's bucket itself, and the
// service's own read-only credential.
func serviceCreds() Credentials {
	c := aclCredsAliceAdmin()
	c["dave"] = Credential{AccessKey: "dave", SecretKey: "ds", Read: []string{"blobs"}, Write: []string{"blobs"}, Admin: true}
	c["svc"] = Credential{AccessKey: "svc", SecretKey: "ss", Read: []string{"blobs"}}
	return c
}

// TestServiceBucketIsItsOwn: a bucket claimed for a part of s3seal
// (ClaimServiceBucket, as serve does for LFS) is reached through the S3
// API by the service's credential, and by a credential whose lists name
// it (the operator's grant) for its objects and listings only: another
// account, an admin reaching it through "*" and an anonymous caller can
// neither list, read, copy out, write, delete, nor change its ACL or
// policy, re-create or see it; the service's credential reads.
func TestServiceBucketIsItsOwn(t *testing.T) {
	be := embeddedStore(t)
	store, err := sealstore.New(sealstore.Direct(be), testKeyring(), sealstore.Options{SpoolDir: t.TempDir(), Settings: be.(backend.Forwarder)})
	if err != nil {
		t.Fatal(err)
	}
	creds := serviceCreds()
	srv := httptest.NewServer(New(Config{Store: store, Credentials: creds, AllowAnonymous: true}))
	t.Cleanup(srv.Close)
	ctx := context.Background()
	if err := ClaimServiceBucket(ctx, store, "blobs", "LFS API", creds["svc"]); err != nil {
		t.Fatal(err)
	}
	if _, err := store.Put(ctx, sealstore.PutInput{Bucket: "blobs", Key: "ns/t/blob", Body: strings.NewReader("secret blob"), Size: 11}); err != nil {
		t.Fatal(err)
	}
	b, k := aws.String("blobs"), aws.String("ns/t/blob")
	deny := `{"Version":"2012-10-17","Statement":[{"Effect":"Deny","Principal":"*","Action":"s3:GetObject","Resource":"arn:aws:s3:::blobs/*"}]}`
	for _, name := range []string{"alice", "bob"} {
		c := sdkClient(srv.URL, name, creds[name].SecretKey)
		for what, call := range map[string]func() error{
			"ListObjects": func() error { _, err := c.ListObjects(ctx, &s3.ListObjectsInput{Bucket: b}); return err },
			"GetObject":   func() error { _, err := c.GetObject(ctx, &s3.GetObjectInput{Bucket: b, Key: k}); return err },
			"HeadBucket":  func() error { _, err := c.HeadBucket(ctx, &s3.HeadBucketInput{Bucket: b}); return err },
			"PutObject": func() error {
				_, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: b, Key: k, Body: strings.NewReader("forged")})
				return err
			},
			"DeleteObject": func() error { _, err := c.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: b, Key: k}); return err },
			"PutBucketAcl": func() error {
				_, err := c.PutBucketAcl(ctx, &s3.PutBucketAclInput{Bucket: b, ACL: types.BucketCannedACLPublicRead})
				return err
			},
			"PutBucketPolicy": func() error {
				_, err := c.PutBucketPolicy(ctx, &s3.PutBucketPolicyInput{Bucket: b, Policy: aws.String(deny)})
				return err
			},
			"PutObjectAcl": func() error {
				_, err := c.PutObjectAcl(ctx, &s3.PutObjectAclInput{Bucket: b, Key: k, ACL: types.ObjectCannedACLPublicRead})
				return err
			},
			"DeleteBucket": func() error { _, err := c.DeleteBucket(ctx, &s3.DeleteBucketInput{Bucket: b}); return err },
		} {
			if err := call(); errCode(err) != "AccessDenied" && !(what == "HeadBucket" && errCode(err) == "Forbidden") {
				t.Errorf("%s's %s on the service's bucket: %v, want AccessDenied", name, what, err)
			}
		}
		if _, err := c.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: b}); errCode(err) != "BucketAlreadyExists" {
			t.Errorf("%s's CreateBucket of the service's bucket: %v, want BucketAlreadyExists", name, err)
		}
		if _, err := c.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String(name + "-own")}); err != nil {
			t.Fatal(err)
		}
		if _, err := c.CopyObject(ctx, &s3.CopyObjectInput{Bucket: aws.String(name + "-own"), Key: aws.String("copy"),
			CopySource: aws.String("blobs/ns/t/blob")}); errCode(err) != "AccessDenied" {
			t.Errorf("%s's copy out of the service's bucket: %v, want AccessDenied", name, err)
		}
		if out, err := c.ListBuckets(ctx, &s3.ListBucketsInput{}); err == nil {
			for _, bk := range out.Buckets {
				if aws.ToString(bk.Name) == "blobs" {
					t.Errorf("%s's ListBuckets shows the service's bucket", name)
				}
			}
		}
	}
	// dave's lists name the bucket: its objects and listings, nothing of
	// the bucket's own.
	dave := sdkClient(srv.URL, "dave", "ds")
	if _, err := dave.ListObjectsV2(ctx, &s3.ListObjectsV2Input{Bucket: b}); err != nil {
		t.Errorf("the named credential's listing: %v", err)
	}
	if _, err := dave.HeadObject(ctx, &s3.HeadObjectInput{Bucket: b, Key: k}); err != nil {
		t.Errorf("the named credential's HEAD of a blob: %v", err)
	}
	if _, err := dave.PutObject(ctx, &s3.PutObjectInput{Bucket: b, Key: aws.String("ns/t/other"), Body: strings.NewReader("x")}); err != nil {
		t.Errorf("the named credential's PutObject: %v", err)
	}
	if _, err := dave.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: b, Key: aws.String("ns/t/other")}); err != nil {
		t.Errorf("the named credential's DeleteObject: %v", err)
	}
	if _, err := dave.PutBucketPolicy(ctx, &s3.PutBucketPolicyInput{Bucket: b, Policy: aws.String(deny)}); errCode(err) != "AccessDenied" {
		t.Errorf("the named credential's PutBucketPolicy: %v, want AccessDenied", err)
	}
	if _, err := dave.PutBucketAcl(ctx, &s3.PutBucketAclInput{Bucket: b, ACL: types.BucketCannedACLPublicRead}); errCode(err) != "AccessDenied" {
		t.Errorf("the named credential's PutBucketAcl: %v, want AccessDenied", err)
	}
	if _, err := dave.DeleteBucket(ctx, &s3.DeleteBucketInput{Bucket: b}); errCode(err) != "AccessDenied" {
		t.Errorf("the named credential's DeleteBucket: %v, want AccessDenied", err)
	}
	if _, err := dave.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: b}); errCode(err) != "BucketAlreadyExists" {
		t.Errorf("the named credential's CreateBucket: %v, want BucketAlreadyExists", err)
	}
	resp, err := http.Get(srv.URL + "/blobs/ns/t/blob")
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden {
		t.Errorf("anonymous GET from the service's bucket: %d, want 403", resp.StatusCode)
	}
	// The service's credential reads the blob it stored, untouched.
	svc := sdkClient(srv.URL, "svc", "ss")
	out, err := svc.GetObject(ctx, &s3.GetObjectInput{Bucket: b, Key: k})
	if err != nil {
		t.Fatalf("the service's read of its blob: %v", err)
	}
	body, _ := io.ReadAll(out.Body)
	out.Body.Close()
	if string(body) != "secret blob" {
		t.Errorf("the service's blob reads %q after the refused writes", body)
	}
	// Claimed again (a restart, another replica): the same owner, fine.
	if err := ClaimServiceBucket(ctx, store, "blobs", "LFS API", creds["svc"]); err != nil {
		t.Errorf("claiming the service's bucket again: %v", err)
	}
	// Never an account's bucket, nor the bucket for another credential.
	if err := ClaimServiceBucket(ctx, store, "alice-own", "LFS API", creds["svc"]); err == nil || !strings.Contains(err.Error(), "Alice") {
		t.Errorf("claiming alice's bucket: %v, want an error naming her", err)
	}
	if err := ClaimServiceBucket(ctx, store, "blobs", "LFS API", creds["bob"]); err == nil {
		t.Errorf("claiming the service's bucket for another credential: no error")
	}
}

// TestServiceBucketClaimsOwnerless: a service bucket made before s3seal
// gave it an owner (no owner document) is claimed, its objects kept; one
// made on the store by the claim itself is created.
func TestServiceBucketClaimsOwnerless(t *testing.T) {
	be := embeddedStore(t)
	store, err := sealstore.New(sealstore.Direct(be), testKeyring(), sealstore.Options{SpoolDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := be.CreateBucket(ctx, "old"); err != nil {
		t.Fatal(err)
	}
	if _, err := store.Put(ctx, sealstore.PutInput{Bucket: "old", Key: "k", Body: strings.NewReader("v"), Size: 1}); err != nil {
		t.Fatal(err)
	}
	creds := serviceCreds()
	for _, bucket := range []string{"old", "new"} {
		if err := ClaimServiceBucket(ctx, store, bucket, "LFS API", creds["svc"]); err != nil {
			t.Fatalf("claiming %s: %v", bucket, err)
		}
		docs, err := store.BucketDocs(ctx, bucket)
		if err != nil {
			t.Fatal(err)
		}
		if o, ok := bucketOwnerOf(docs); !ok || o.Service != "LFS API" || o.ID != creds["svc"].principal().CanonicalID || o.Account != "" {
			t.Errorf("owner of %s after the claim: %+v (%v)", bucket, o, ok)
		}
	}
	if _, err := store.Head(ctx, "old", "k"); err != nil {
		t.Errorf("the claimed bucket's object: %v", err)
	}
}

// ownerPutHook runs hook once, before the first write of a bucket's owner
// document that it passes on to the store.
type ownerPutHook struct {
	backend.Store
	once sync.Once
	hook func()
}

func (o *ownerPutHook) PutObject(ctx context.Context, in backend.PutInput) (backend.PutOutput, error) {
	if in.Key == sealstore.BucketDocPrefix+docOwner {
		o.once.Do(o.hook)
	}
	return o.Store.PutObject(ctx, in)
}

// TestServiceBucketClaimedByTwoAtOnce: two processes starting together
// claim the service's bucket; the one whose conditional write of the
// owner document finds the other's goes on, the bucket the service's.
func TestServiceBucketClaimedByTwoAtOnce(t *testing.T) {
	be := embeddedStore(t)
	kr := testKeyring()
	creds := serviceCreds()
	ctx := context.Background()
	first, err := sealstore.New(sealstore.Direct(be), kr, sealstore.Options{SpoolDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	var firstErr error
	hooked := &ownerPutHook{Store: be, hook: func() { firstErr = ClaimServiceBucket(ctx, first, "blobs", "LFS API", creds["svc"]) }}
	second, err := sealstore.New(sealstore.Direct(hooked), kr, sealstore.Options{SpoolDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if err := ClaimServiceBucket(ctx, second, "blobs", "LFS API", creds["svc"]); err != nil {
		t.Errorf("the second claim, the first landing meanwhile: %v", err)
	}
	if firstErr != nil {
		t.Errorf("the first claim: %v", firstErr)
	}
	docs, err := first.BucketDocs(ctx, "blobs")
	if o, ok := bucketOwnerOf(docs); err != nil || !ok || o.Service != "LFS API" {
		t.Errorf("owner after both claims: %+v %v %v", o, ok, err)
	}
}
