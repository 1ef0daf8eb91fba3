package e2e

import (
	"io"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
)

// TestOverwriteThroughProcessWithOldDocuments: two s3seal processes on
// one store (moto), as replicas behind a load balancer. bob may write
// alice's bucket; the second process has read the bucket's documents
// before any object had an ACL. bob writes a public-read object through
// the first; alice overwrites it through the second, which by its cache
// has no record of bob's to drop. bob's record, bound to his content,
// opens none of alice's: bob reads her object through neither process.
func TestOverwriteThroughProcessWithOldDocuments(t *testing.T) {
	dir := t.TempDir()
	creds := writeJSON(t, dir, "creds.json", map[string]any{"credentials": []map[string]any{
		{"access_key": "alice", "secret_key": "alice-secret", "read": []string{"*"}, "write": []string{"*"},
			"canonical_id": "a11ce", "account": "111111111111"},
		{"access_key": "bob", "secret_key": "bob-secret", "read": []string{"*"}, "write": []string{"*"},
			"canonical_id": "b0b", "account": "222222222222"},
	}})
	m, key := startMoto(t), randomKey(t)
	one := startS3seal(t, sealOpts{Backend: m, Key: key, CredentialsFile: creds})
	two := startS3seal(t, sealOpts{Backend: m, Key: key, CredentialsFile: creds})
	ctx := ctxT(t)
	aliceTwo := newSDKClient(t, two.Endpoint, "alice", "alice-secret", true)
	bobOne := newSDKClient(t, one.Endpoint, "bob", "bob-secret", true)
	b, k := aws.String("shared"), aws.String("k")
	if _, err := aliceTwo.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: b}); err != nil {
		t.Fatal(err)
	}
	if _, err := aliceTwo.PutBucketAcl(ctx, &s3.PutBucketAclInput{Bucket: b, GrantWrite: aws.String(`id="b0b"`),
		GrantFullControl: aws.String(`id="a11ce"`)}); err != nil {
		t.Fatal(err)
	}
	// The second process reads the documents: no object has an ACL yet.
	if _, err := aliceTwo.PutObject(ctx, &s3.PutObjectInput{Bucket: b, Key: aws.String("warm"), Body: strings.NewReader("x")}); err != nil {
		t.Fatal(err)
	}
	if _, err := bobOne.PutObject(ctx, &s3.PutObjectInput{Bucket: b, Key: k, Body: strings.NewReader("bob's"), ACL: types.ObjectCannedACLPublicRead}); err != nil {
		t.Fatal(err)
	}
	if _, err := aliceTwo.PutObject(ctx, &s3.PutObjectInput{Bucket: b, Key: k, Body: strings.NewReader("alice's secret")}); err != nil {
		t.Fatal(err)
	}
	for name, p := range map[string]*sealProc{"first": one, "second": two} {
		bob := newSDKClient(t, p.Endpoint, "bob", "bob-secret", true)
		out, err := bob.GetObject(ctx, &s3.GetObjectInput{Bucket: b, Key: k})
		if err == nil {
			got, _ := io.ReadAll(out.Body)
			out.Body.Close()
			t.Errorf("bob read alice's overwrite through the %s process: %q", name, got)
			continue
		}
		if code, _ := apiCode(err); code != "AccessDenied" {
			t.Errorf("bob's GET through the %s process: %v, want AccessDenied", name, err)
		}
		alice := newSDKClient(t, p.Endpoint, "alice", "alice-secret", true)
		if out, err := alice.GetObject(ctx, &s3.GetObjectInput{Bucket: b, Key: k}); err != nil {
			t.Errorf("alice's GET through the %s process: %v", name, err)
		} else {
			got, _ := io.ReadAll(out.Body)
			out.Body.Close()
			if string(got) != "alice's secret" {
				t.Errorf("alice reads %q through the %s process", got, name)
			}
		}
	}
}
