package s3api

import (
	"context"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
)

// TestCopyTagsNeedTagRead: a copy that carries its source's tags (the
// default tagging directive, COPY) reads them, which S3 decides as
// s3:GetObjectTagging on the source. bob, who may read alice's object
// but not its tags, is refused such a copy instead of reading the tags
// off his copy; with REPLACE, or from a source without tags, he copies;
// a policy granting him s3:GetObjectTagging lets the tags go with it.
func TestCopyTagsNeedTagRead(t *testing.T) {
	url := newEmbeddedFullServerFor(t, aclCredsAliceAdmin())
	ctx := context.Background()
	alice, bob := sdkClient(url, "alice", "as"), sdkClient(url, "bob", "bs")
	for _, c := range []struct {
		cl *s3.Client
		b  string
	}{{alice, "src"}, {bob, "dst"}} {
		if _, err := c.cl.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String(c.b)}); err != nil {
			t.Fatal(err)
		}
	}
	src := aws.String("src")
	for key, tags := range map[string]string{"tagged": "secret=launch-codes", "plain": ""} {
		in := &s3.PutObjectInput{Bucket: src, Key: aws.String(key), Body: strings.NewReader("body")}
		if tags != "" {
			in.Tagging = aws.String(tags)
		}
		if _, err := alice.PutObject(ctx, in); err != nil {
			t.Fatal(err)
		}
		if _, err := alice.PutObjectAcl(ctx, &s3.PutObjectAclInput{Bucket: src, Key: aws.String(key), GrantRead: aws.String(`id="b0b"`),
			GrantFullControl: aws.String(`id="a11ce"`)}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := bob.GetObject(ctx, &s3.GetObjectInput{Bucket: src, Key: aws.String("tagged")}); err != nil {
		t.Fatalf("bob's read of the object alice granted him: %v", err)
	}
	if _, err := bob.GetObjectTagging(ctx, &s3.GetObjectTaggingInput{Bucket: src, Key: aws.String("tagged")}); errCode(err) != "AccessDenied" {
		t.Fatalf("bob's GetObjectTagging of alice's object: %v, want AccessDenied (the premise of this test)", err)
	}
	copyTo := func(key, source string, directive types.TaggingDirective) error {
		_, err := bob.CopyObject(ctx, &s3.CopyObjectInput{Bucket: aws.String("dst"), Key: aws.String(key), CopySource: aws.String(source),
			TaggingDirective: directive})
		return err
	}
	if err := copyTo("stolen", "src/tagged", ""); errCode(err) != "AccessDenied" {
		t.Errorf("copy carrying tags bob may not read: %v, want AccessDenied", err)
	}
	if err := copyTo("stolen-v", "src/tagged", types.TaggingDirectiveCopy); errCode(err) != "AccessDenied" {
		t.Errorf("copy with TaggingDirective COPY of tags bob may not read: %v, want AccessDenied", err)
	}
	if out, err := bob.GetObjectTagging(ctx, &s3.GetObjectTaggingInput{Bucket: aws.String("dst"), Key: aws.String("stolen")}); err == nil {
		t.Errorf("the refused copy exists, with tags %+v", out.TagSet)
	}
	if err := copyTo("replaced", "src/tagged", types.TaggingDirectiveReplace); err != nil {
		t.Errorf("copy with TaggingDirective REPLACE: %v", err)
	}
	if err := copyTo("untagged", "src/plain", ""); err != nil {
		t.Errorf("copy of a source without tags: %v", err)
	}
	policy := `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Principal":{"AWS":"arn:aws:iam::222222222222:root"},` +
		`"Action":"s3:GetObjectTagging","Resource":"arn:aws:s3:::src/tagged"}]}`
	if _, err := alice.PutBucketPolicy(ctx, &s3.PutBucketPolicyInput{Bucket: src, Policy: aws.String(policy)}); err != nil {
		t.Fatal(err)
	}
	if err := copyTo("granted", "src/tagged", ""); err != nil {
		t.Fatalf("copy with s3:GetObjectTagging granted by the policy: %v", err)
	}
	out, err := bob.GetObjectTagging(ctx, &s3.GetObjectTaggingInput{Bucket: aws.String("dst"), Key: aws.String("granted")})
	if err != nil || len(out.TagSet) != 1 || aws.ToString(out.TagSet[0].Value) != "launch-codes" {
		t.Errorf("tags of the granted copy: %+v, %v; want the source's", out, err)
	}
}
