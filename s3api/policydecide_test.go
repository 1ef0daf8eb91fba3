package s3api

import (
	"context"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
)

// policyCreds are two credentials of one account with the same lists:
// "ak" (an admin, who creates the buckets and puts the policies) and
// "alt", whom the policies name; being of the bucket owner's account, alt
// is allowed whatever the policy does not deny.
var policyCreds = Credentials{
	"ak":  {AccessKey: "ak", SecretKey: "sk", Read: []string{"*"}, Write: []string{"*"}, Admin: true, Account: "111122223333"},
	"alt": {AccessKey: "alt", SecretKey: "altsk", Read: []string{"*"}, Write: []string{"*"}, Account: "111122223333"},
}

func putPolicy(t *testing.T, c *s3.Client, bucket, doc string) {
	t.Helper()
	if _, err := c.PutBucketPolicy(context.Background(), &s3.PutBucketPolicyInput{Bucket: aws.String(bucket), Policy: aws.String(doc)}); err != nil {
		t.Fatalf("PutBucketPolicy: %v", err)
	}
}

// TestBucketPolicyDenies: s3seal evaluates the bucket policy it keeps: a
// Deny refuses the actions, resources and principals it names, by the
// request's condition values, and nothing else.
func TestBucketPolicyDenies(t *testing.T) {
	url, ctx, c := newBucketServer(t, policyCreds)
	alt := sdkClient(url, "alt", "altsk")
	for _, k := range []string{"public", "private"} {
		if _, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("bkt"), Key: aws.String(k), Body: strings.NewReader(k),
			Tagging: aws.String("security=" + k)}); err != nil {
			t.Fatal(err)
		}
	}
	putPolicy(t, c, "bkt", `{"Version":"2012-10-17","Statement":[
		{"Effect":"Deny","Principal":{"AWS":"*"},"Action":"s3:ListBucket","Resource":"arn:aws:s3:::bkt"},
		{"Effect":"Deny","Principal":"*","Action":"s3:GetObject","Resource":"arn:aws:s3:::bkt/*","Condition":{"StringEquals":{"s3:ExistingObjectTag/security":"private"}}},
		{"Effect":"Deny","Principal":{"AWS":"alt"},"Action":"s3:PutObject","Resource":"arn:aws:s3:::bkt/*","Condition":{"StringNotEquals":{"s3:RequestObjectTag/security":"public"}}}]}`)
	denied := func(what string, err error) {
		t.Helper()
		if apiCode(err) != "AccessDenied" || httpStatus(err) != 403 {
			t.Errorf("%s: %v, want AccessDenied", what, err)
		}
	}
	allowed := func(what string, err error) {
		t.Helper()
		if err != nil {
			t.Errorf("%s: %v, want it allowed", what, err)
		}
	}
	_, err := alt.ListObjects(ctx, &s3.ListObjectsInput{Bucket: aws.String("bkt")})
	denied("ListObjects", err)
	_, err = alt.ListObjectsV2(ctx, &s3.ListObjectsV2Input{Bucket: aws.String("bkt")})
	denied("ListObjectsV2", err)
	_, err = alt.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String("bkt"), Key: aws.String("private")})
	denied("GetObject of an object tagged private", err)
	_, err = alt.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String("bkt"), Key: aws.String("public")})
	allowed("GetObject of an object tagged public", err)
	_, err = alt.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("bkt"), Key: aws.String("new"), Body: strings.NewReader("x")})
	denied("alt's PutObject without the tag", err)
	_, err = alt.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("bkt"), Key: aws.String("new"), Body: strings.NewReader("x"), Tagging: aws.String("security=public")})
	allowed("alt's PutObject with the tag", err)
	_, err = c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("bkt"), Key: aws.String("new"), Body: strings.NewReader("x")})
	allowed("ak's PutObject without the tag (the statement names alt)", err)

	// A copy reads its source as a GetObject, decided by the source
	// bucket's policy.
	if _, err := alt.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String("dst")}); err != nil {
		t.Fatal(err)
	}
	_, err = alt.CopyObject(ctx, &s3.CopyObjectInput{Bucket: aws.String("dst"), Key: aws.String("c"), CopySource: aws.String("bkt/private")})
	denied("CopyObject from a source the policy denies", err)
	_, err = alt.CopyObject(ctx, &s3.CopyObjectInput{Bucket: aws.String("dst"), Key: aws.String("c"), CopySource: aws.String("bkt/public")})
	allowed("CopyObject from a source the policy does not deny", err)
}

// TestBucketPolicyOpsStayTheOwners: a policy that denies everything to
// everyone still lets the bucket's owner read, replace and delete it, as
// S3 lets the owner's account, so that it can be taken back.
func TestBucketPolicyOpsStayTheOwners(t *testing.T) {
	_, ctx, c := newBucketServer(t, policyCreds)
	deny := `{"Version":"2012-10-17","Statement":[{"Effect":"Deny","Principal":"*","Action":"s3:*","Resource":["arn:aws:s3:::bkt","arn:aws:s3:::bkt/*"]}]}`
	putPolicy(t, c, "bkt", deny)
	if _, err := c.ListObjectsV2(ctx, &s3.ListObjectsV2Input{Bucket: aws.String("bkt")}); apiCode(err) != "AccessDenied" {
		t.Fatalf("ListObjectsV2 under a policy denying s3:*: %v", err)
	}
	got, err := c.GetBucketPolicy(ctx, &s3.GetBucketPolicyInput{Bucket: aws.String("bkt")})
	if err != nil || aws.ToString(got.Policy) != deny {
		t.Fatalf("GetBucketPolicy: %v", err)
	}
	putPolicy(t, c, "bkt", deny)
	if _, err := c.DeleteBucketPolicy(ctx, &s3.DeleteBucketPolicyInput{Bucket: aws.String("bkt")}); err != nil {
		t.Fatalf("DeleteBucketPolicy: %v", err)
	}
	if _, err := c.ListObjectsV2(ctx, &s3.ListObjectsV2Input{Bucket: aws.String("bkt")}); err != nil {
		t.Fatalf("ListObjectsV2 once the policy is gone: %v", err)
	}
	_, err = c.GetBucketPolicy(ctx, &s3.GetBucketPolicyInput{Bucket: aws.String("bkt")})
	if apiCode(err) != "NoSuchBucketPolicy" || httpStatus(err) != 404 {
		t.Fatalf("GetBucketPolicy without one: %v", err)
	}
}

// TestBucketPolicyStatus: GetBucketPolicyStatus says whether the policy
// grants to everyone, as S3 judges it; no policy, no status.
func TestBucketPolicyStatus(t *testing.T) {
	_, ctx, c := newBucketServer(t, policyCreds)
	_, err := c.GetBucketPolicyStatus(ctx, &s3.GetBucketPolicyStatusInput{Bucket: aws.String("bkt")})
	if apiCode(err) != "NoSuchBucketPolicy" {
		t.Fatalf("without a policy: %v", err)
	}
	for _, tc := range []struct {
		cond string
		want bool
	}{
		{``, true},
		{`,"Condition":{"IpAddress":{"aws:SourceIp":"10.0.0.0/32"}}`, false},
		{`,"Condition":{"StringLike":{"s3:prefix":"public/*"}}`, true},
	} {
		putPolicy(t, c, "bkt", `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Principal":{"AWS":"*"},"Action":"s3:ListBucket","Resource":"arn:aws:s3:::bkt"`+tc.cond+`}]}`)
		out, err := c.GetBucketPolicyStatus(ctx, &s3.GetBucketPolicyStatusInput{Bucket: aws.String("bkt")})
		if err != nil || aws.ToBool(out.PolicyStatus.IsPublic) != tc.want {
			t.Errorf("%q: %v %v, want IsPublic %v", tc.cond, err, out, tc.want)
		}
	}
	putPolicy(t, c, "bkt", `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Principal":{"AWS":"arn:aws:iam::s3tenant1:root"},"Action":"s3:ListBucket","Resource":"arn:aws:s3:::bkt"}]}`)
	out, err := c.GetBucketPolicyStatus(ctx, &s3.GetBucketPolicyStatusInput{Bucket: aws.String("bkt")})
	if err != nil || aws.ToBool(out.PolicyStatus.IsPublic) {
		t.Errorf("a policy naming one account: %v %v, want not public", err, out)
	}
}

// TestBlockPublicPolicy: with BlockPublicPolicy, a public policy is
// refused with S3's AccessDenied; one naming a principal is kept.
func TestBlockPublicPolicy(t *testing.T) {
	srv := newTestServerWith(t, Config{Credentials: policyCreds})
	ctx := context.Background()
	c := sdkClient(srv.URL, "ak", "sk")
	if _, err := c.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String("bkt")}); err != nil {
		t.Fatal(err)
	}
	s := srv.Config.Handler.(*Server)
	pab := `<PublicAccessBlockConfiguration><BlockPublicPolicy>true</BlockPublicPolicy></PublicAccessBlockConfiguration>`
	if err := s.store.PutBucketDoc(ctx, "bkt", docPublicAccessBlock, []byte(pab)); err != nil {
		t.Fatal(err)
	}
	public := `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Principal":{"AWS":"*"},"Action":"s3:GetObject","Resource":"arn:aws:s3:::bkt/*"}]}`
	_, err := c.PutBucketPolicy(ctx, &s3.PutBucketPolicyInput{Bucket: aws.String("bkt"), Policy: aws.String(public)})
	if apiCode(err) != "AccessDenied" || !strings.Contains(apiMessage(err), "BlockPublicPolicy") {
		t.Fatalf("a public policy under BlockPublicPolicy: %v", err)
	}
	putPolicy(t, c, "bkt", strings.Replace(public, `"*"`, `"arn:aws:iam::s3tenant1:root"`, 1))
}

// TestMissingKeyNeedsListBucket: a read of a missing key is 404 only to a
// caller that may list the bucket for that key (s3:prefix); to others it
// is 403, as S3 answers.
func TestMissingKeyNeedsListBucket(t *testing.T) {
	url, ctx, c := newBucketServer(t, policyCreds)
	alt := sdkClient(url, "alt", "altsk")
	putPolicy(t, c, "bkt", `{"Version":"2012-10-17","Statement":[{"Effect":"Deny","Principal":{"AWS":"alt"},"Action":"s3:ListBucket",`+
		`"Resource":"arn:aws:s3:::bkt","Condition":{"StringNotLike":{"s3:prefix":"public/*"}}}]}`)
	_, err := alt.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String("bkt"), Key: aws.String("public/missing")})
	if httpStatus(err) != 404 {
		t.Errorf("HEAD of a missing key the caller may list: %v, want 404", err)
	}
	_, err = alt.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String("bkt"), Key: aws.String("private/missing")})
	if httpStatus(err) != 403 {
		t.Errorf("HEAD of a missing key the caller may not list: %v, want 403", err)
	}
	_, err = alt.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String("bkt"), Key: aws.String("private/missing")})
	if apiCode(err) != "AccessDenied" {
		t.Errorf("GET of a missing key the caller may not list: %v, want AccessDenied", err)
	}
	_, err = c.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String("bkt"), Key: aws.String("private/missing")})
	if apiCode(err) != "NoSuchKey" {
		t.Errorf("GET of a missing key by a caller the policy does not name: %v, want NoSuchKey", err)
	}

	// A caller refused the read is still told a key it may list is
	// missing; of a key that exists, it learns nothing.
	putPolicy(t, c, "bkt", `{"Version":"2012-10-17","Statement":[{"Effect":"Deny","Principal":{"AWS":"alt"},"Action":"s3:GetObject",`+
		`"Resource":"arn:aws:s3:::bkt/*"},{"Effect":"Deny","Principal":{"AWS":"alt"},"Action":"s3:ListBucket",`+
		`"Resource":"arn:aws:s3:::bkt","Condition":{"StringNotLike":{"s3:prefix":"public/*"}}}]}`)
	if _, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("bkt"), Key: aws.String("public/here"), Body: strings.NewReader("x")}); err != nil {
		t.Fatal(err)
	}
	for key, want := range map[string]int{"public/missing": 404, "public/here": 403, "private/missing": 403} {
		_, err = alt.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String("bkt"), Key: aws.String(key)})
		if httpStatus(err) != want {
			t.Errorf("HEAD %s by a caller refused GetObject: %v, want %d", key, err, want)
		}
	}
}

// TestDeleteObjectsDecidedPerKey: DeleteObjects is decided key by key as
// DeleteObject: a policy denying some keys refuses those (AccessDenied in
// the answer) and deletes the others.
func TestDeleteObjectsDecidedPerKey(t *testing.T) {
	_, ctx, c := newBucketServer(t, policyCreds)
	for _, k := range []string{"keep/a", "other"} {
		if _, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("bkt"), Key: aws.String(k), Body: strings.NewReader(k)}); err != nil {
			t.Fatal(err)
		}
	}
	putPolicy(t, c, "bkt", `{"Version":"2012-10-17","Statement":[{"Effect":"Deny","Principal":"*","Action":"s3:DeleteObject","Resource":"arn:aws:s3:::bkt/keep/*"}]}`)
	out, err := c.DeleteObjects(ctx, &s3.DeleteObjectsInput{Bucket: aws.String("bkt"), Delete: &types.Delete{
		Objects: []types.ObjectIdentifier{{Key: aws.String("keep/a")}, {Key: aws.String("other")}}}})
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Errors) != 1 || aws.ToString(out.Errors[0].Key) != "keep/a" || aws.ToString(out.Errors[0].Code) != "AccessDenied" ||
		len(out.Deleted) != 1 || aws.ToString(out.Deleted[0].Key) != "other" {
		t.Fatalf("DeleteObjects: errors %+v, deleted %+v", out.Errors, out.Deleted)
	}
	if _, err := c.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String("bkt"), Key: aws.String("keep/a")}); err != nil {
		t.Fatalf("the denied key is gone: %v", err)
	}
}

// TestPolicyValuesFromHeaders: the s3:x-amz-... and s3:object-lock-...
// keys read the request's header of that name; tags come from
// x-amz-tagging; list keys from the query.
func TestPolicyValuesFromHeaders(t *testing.T) {
	r := httptest.NewRequest("PUT", "/bkt/k?prefix=p%2F&max-keys=5", nil)
	r.Header.Set("X-Amz-Server-Side-Encryption", "AES256")
	r.Header.Set("X-Amz-Object-Lock-Mode", "GOVERNANCE")
	r.Header.Set("X-Amz-Tagging", "security=public&b=2")
	r.Header.Set("X-Amz-Copy-Source", "/src/a%20b")
	values := (&Server{}).policyValues(&request{r: r, bucket: "bkt", key: "k", who: Credential{AccessKey: "ak"}.principal()})
	for key, want := range map[string]string{
		"s3:x-amz-server-side-encryption": "AES256", "s3:object-lock-mode": "GOVERNANCE",
		"s3:requestobjecttag/security": "public", "s3:prefix": "p/", "s3:max-keys": "5",
		"s3:x-amz-copy-source": "src/a b", "aws:username": "ak", "aws:securetransport": "false",
	} {
		if got, ok := values(key); !ok || len(got) != 1 || got[0] != want {
			t.Errorf("%s: %v %v, want %q", key, got, ok, want)
		}
	}
	for _, key := range []string{"s3:x-amz-acl", "s3:delimiter", "s3:versionid", "aws:unknown"} {
		if got, ok := values(key); ok {
			t.Errorf("%s: %v, want absent", key, got)
		}
	}
}

// TestPostObjectDecidedByPolicy: a browser POST upload is the PutObject of
// the key its form names, and the bucket policy decides it as one.
func TestPostObjectDecidedByPolicy(t *testing.T) {
	creds := Credentials{postAK: {AccessKey: postAK, SecretKey: postSK, Read: []string{"*"}, Write: []string{"*"}, Admin: true}}
	url := newTestServer(t, creds)
	c := sdkClient(url, postAK, postSK)
	if _, err := c.CreateBucket(context.Background(), &s3.CreateBucketInput{Bucket: aws.String(postBucket)}); err != nil {
		t.Fatal(err)
	}
	putPolicy(t, c, postBucket, `{"Version":"2012-10-17","Statement":[{"Effect":"Deny","Principal":"*","Action":"s3:PutObject","Resource":"arn:aws:s3:::forms/secret/*"}]}`)
	p := postSigner{ak: postAK, sk: postSK, now: time.Now()}
	b64, sig := p.policy(t, time.Now().Add(time.Hour), map[string]string{"bucket": postBucket}, []any{"starts-with", "$key", ""})
	for key, want := range map[string]int{"secret/x": 403, "open/x": 204} {
		ct, body := formBody(t, append(p.fields(b64, sig), [2]string{"key", key}), "f.txt", []byte("data"))
		if res := sendPost(t, url, ct, body); res.status != want {
			t.Errorf("POST %s: %d %s, want %d", key, res.status, res.body, want)
		}
	}
}
