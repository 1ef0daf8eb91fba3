package s3api

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
)

func putEncryption(ctx context.Context, c *s3.Client, bucket string, rules ...types.ServerSideEncryptionRule) error {
	return putEncryptionRules(ctx, c, bucket, rules)
}

func putEncryptionRules(ctx context.Context, c *s3.Client, bucket string, rules []types.ServerSideEncryptionRule) error {
	_, err := c.PutBucketEncryption(ctx, &s3.PutBucketEncryptionInput{Bucket: aws.String(bucket),
		ServerSideEncryptionConfiguration: &types.ServerSideEncryptionConfiguration{Rules: rules}})
	return err
}

func sseRule(alg types.ServerSideEncryption, keyID string, bucketKey bool) types.ServerSideEncryptionRule {
	r := types.ServerSideEncryptionRule{ApplyServerSideEncryptionByDefault: &types.ServerSideEncryptionByDefault{SSEAlgorithm: alg}}
	if keyID != "" {
		r.ApplyServerSideEncryptionByDefault.KMSMasterKeyID = aws.String(keyID)
	}
	if bucketKey {
		r.BucketKeyEnabled = aws.Bool(true)
	}
	return r
}

// TestBucketEncryptionKeptAndAnswered: a bucket without a default
// encryption answers ServerSideEncryptionConfigurationNotFoundError; one
// put is answered back (BucketKeyEnabled false when not given), applied to
// the writes that name no encryption (reported on PUT, GET and HEAD), and
// gone after DeleteBucketEncryption (204), after which a write reports
// none.
func TestBucketEncryptionKeptAndAnswered(t *testing.T) {
	_, ctx, c := newBucketServer(t, SingleCredential("ak", "sk"))
	b := aws.String("bkt")
	if _, err := c.GetBucketEncryption(ctx, &s3.GetBucketEncryptionInput{Bucket: b}); apiCode(err) != "ServerSideEncryptionConfigurationNotFoundError" {
		t.Fatalf("GetBucketEncryption of a bucket without one: %v", err)
	}
	if err := putEncryption(ctx, c, "bkt", sseRule(types.ServerSideEncryptionAes256, "", false)); err != nil {
		t.Fatal(err)
	}
	got, err := c.GetBucketEncryption(ctx, &s3.GetBucketEncryptionInput{Bucket: b})
	if err != nil {
		t.Fatal(err)
	}
	rules := got.ServerSideEncryptionConfiguration.Rules
	if len(rules) != 1 || rules[0].ApplyServerSideEncryptionByDefault.SSEAlgorithm != types.ServerSideEncryptionAes256 ||
		rules[0].BucketKeyEnabled == nil || *rules[0].BucketKeyEnabled {
		t.Fatalf("GetBucketEncryption: %+v", rules)
	}
	put, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: b, Key: aws.String("k"), Body: strings.NewReader("data")})
	if err != nil || put.ServerSideEncryption != types.ServerSideEncryptionAes256 {
		t.Fatalf("PutObject: %v %q", err, put.ServerSideEncryption)
	}
	get, err := c.GetObject(ctx, &s3.GetObjectInput{Bucket: b, Key: aws.String("k")})
	if err != nil || get.ServerSideEncryption != types.ServerSideEncryptionAes256 {
		t.Fatalf("GetObject: %v %q", err, get.ServerSideEncryption)
	}
	get.Body.Close()
	head, err := c.HeadObject(ctx, &s3.HeadObjectInput{Bucket: b, Key: aws.String("k")})
	if err != nil || head.ServerSideEncryption != types.ServerSideEncryptionAes256 {
		t.Fatalf("HeadObject: %v %q", err, head.ServerSideEncryption)
	}
	if _, err := c.DeleteBucketEncryption(ctx, &s3.DeleteBucketEncryptionInput{Bucket: b}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.GetBucketEncryption(ctx, &s3.GetBucketEncryptionInput{Bucket: b}); apiCode(err) != "ServerSideEncryptionConfigurationNotFoundError" {
		t.Fatalf("GetBucketEncryption after delete: %v", err)
	}
	put, err = c.PutObject(ctx, &s3.PutObjectInput{Bucket: b, Key: aws.String("k2"), Body: strings.NewReader("data")})
	if err != nil || put.ServerSideEncryption != "" {
		t.Fatalf("PutObject after delete: %v %q", err, put.ServerSideEncryption)
	}
	if _, err := c.DeleteBucketEncryption(ctx, &s3.DeleteBucketEncryptionInput{Bucket: aws.String("nosuch")}); apiCode(err) != "NoSuchBucket" {
		t.Fatalf("DeleteBucketEncryption of a missing bucket: %v", err)
	}
	if err := putEncryption(ctx, c, "nosuch", sseRule(types.ServerSideEncryptionAes256, "", false)); apiCode(err) != "NoSuchBucket" {
		t.Fatalf("PutBucketEncryption of a missing bucket: %v", err)
	}
}

// TestBucketEncryptionKMSDefault: an aws:kms default with a key and the
// bucket key applies to PutObject, CopyObject and multipart uploads, each
// answering the algorithm, the key id and the bucket key; a write that
// names its own encryption, or SSE-C, keeps it.
func TestBucketEncryptionKMSDefault(t *testing.T) {
	_, ctx, c := newBucketServer(t, SingleCredential("ak", "sk"))
	b := aws.String("bkt")
	if err := putEncryption(ctx, c, "bkt", sseRule(types.ServerSideEncryptionAwsKms, "key-1", true)); err != nil {
		t.Fatal(err)
	}
	got, err := c.GetBucketEncryption(ctx, &s3.GetBucketEncryptionInput{Bucket: b})
	if err != nil {
		t.Fatal(err)
	}
	if d := got.ServerSideEncryptionConfiguration.Rules[0]; aws.ToString(d.ApplyServerSideEncryptionByDefault.KMSMasterKeyID) != "key-1" || !aws.ToBool(d.BucketKeyEnabled) {
		t.Fatalf("GetBucketEncryption: %+v", d)
	}
	kms := func(what string, sse types.ServerSideEncryption, key *string, bk *bool) {
		t.Helper()
		if sse != types.ServerSideEncryptionAwsKms || aws.ToString(key) != "key-1" || !aws.ToBool(bk) {
			t.Errorf("%s: %q %q %v, want aws:kms key-1 bucket key", what, sse, aws.ToString(key), aws.ToBool(bk))
		}
	}
	put, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: b, Key: aws.String("k"), Body: strings.NewReader("data")})
	if err != nil {
		t.Fatal(err)
	}
	kms("PutObject", put.ServerSideEncryption, put.SSEKMSKeyId, put.BucketKeyEnabled)
	head, err := c.HeadObject(ctx, &s3.HeadObjectInput{Bucket: b, Key: aws.String("k")})
	if err != nil {
		t.Fatal(err)
	}
	kms("HeadObject", head.ServerSideEncryption, head.SSEKMSKeyId, head.BucketKeyEnabled)
	cp, err := c.CopyObject(ctx, &s3.CopyObjectInput{Bucket: b, Key: aws.String("copy"), CopySource: aws.String("bkt/k")})
	if err != nil {
		t.Fatal(err)
	}
	kms("CopyObject", cp.ServerSideEncryption, cp.SSEKMSKeyId, cp.BucketKeyEnabled)
	mp, err := c.CreateMultipartUpload(ctx, &s3.CreateMultipartUploadInput{Bucket: b, Key: aws.String("mp")})
	if err != nil {
		t.Fatal(err)
	}
	kms("CreateMultipartUpload", mp.ServerSideEncryption, mp.SSEKMSKeyId, mp.BucketKeyEnabled)
	part, err := c.UploadPart(ctx, &s3.UploadPartInput{Bucket: b, Key: aws.String("mp"), UploadId: mp.UploadId,
		PartNumber: aws.Int32(1), Body: bytes.NewReader([]byte("part"))})
	if err != nil {
		t.Fatal(err)
	}
	done, err := c.CompleteMultipartUpload(ctx, &s3.CompleteMultipartUploadInput{Bucket: b, Key: aws.String("mp"), UploadId: mp.UploadId,
		MultipartUpload: &types.CompletedMultipartUpload{Parts: []types.CompletedPart{{PartNumber: aws.Int32(1), ETag: part.ETag}}}})
	if err != nil {
		t.Fatal(err)
	}
	kms("CompleteMultipartUpload", done.ServerSideEncryption, done.SSEKMSKeyId, done.BucketKeyEnabled)

	own, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: b, Key: aws.String("own"), Body: strings.NewReader("data"),
		ServerSideEncryption: types.ServerSideEncryptionAes256})
	if err != nil || own.ServerSideEncryption != types.ServerSideEncryptionAes256 || own.SSEKMSKeyId != nil {
		t.Fatalf("PutObject naming AES256: %v %q %v", err, own.ServerSideEncryption, own.SSEKMSKeyId)
	}
	key, keyMD5 := ssecKey(7)
	cpk, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: b, Key: aws.String("ssec"), Body: strings.NewReader("data"),
		SSECustomerAlgorithm: aws.String("AES256"), SSECustomerKey: aws.String(key), SSECustomerKeyMD5: aws.String(keyMD5)})
	if err != nil || cpk.ServerSideEncryption != "" || cpk.SSECustomerAlgorithm == nil {
		t.Fatalf("PutObject with SSE-C: %v %q", err, cpk.ServerSideEncryption)
	}
}

// TestBucketEncryptionRefusals: configurations S3 refuses are refused
// with its codes and leave the bucket without one.
func TestBucketEncryptionRefusals(t *testing.T) {
	_, ctx, c := newBucketServer(t, SingleCredential("ak", "sk"))
	for name, tc := range map[string]struct {
		rules []types.ServerSideEncryptionRule
		code  string
	}{
		"no rule":           {[]types.ServerSideEncryptionRule{}, "MalformedXML"},
		"two rules":         {[]types.ServerSideEncryptionRule{sseRule("AES256", "", false), sseRule("AES256", "", false)}, "MalformedXML"},
		"unknown algorithm": {[]types.ServerSideEncryptionRule{sseRule("AES128", "", false)}, "MalformedXML"},
		"no default":        {[]types.ServerSideEncryptionRule{{BucketKeyEnabled: aws.Bool(true)}}, "MalformedXML"},
		"KMS key on AES256": {[]types.ServerSideEncryptionRule{sseRule("AES256", "key-1", false)}, "InvalidArgument"},
		"KMS key too long":  {[]types.ServerSideEncryptionRule{sseRule("aws:kms", strings.Repeat("k", 2049), false)}, "InvalidArgument"},
	} {
		if err := putEncryptionRules(ctx, c, "bkt", tc.rules); apiCode(err) != tc.code {
			t.Errorf("%s: %v, want %s", name, err, tc.code)
		}
	}
	if _, err := c.GetBucketEncryption(ctx, &s3.GetBucketEncryptionInput{Bucket: aws.String("bkt")}); apiCode(err) != "ServerSideEncryptionConfigurationNotFoundError" {
		t.Fatalf("after refusals: %v", err)
	}
}

// TestBucketEncryptionCopyOntoItself: on a bucket with a default
// encryption, copying an object onto itself without a change is refused
// as on any bucket when the object already has the default's encryption,
// and allowed when it was stored with another (the copy then takes the
// default).
func TestBucketEncryptionCopyOntoItself(t *testing.T) {
	_, ctx, c := newBucketServer(t, SingleCredential("ak", "sk"))
	b := aws.String("bkt")
	if _, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: b, Key: aws.String("before"), Body: strings.NewReader("data")}); err != nil {
		t.Fatal(err)
	}
	if err := putEncryption(ctx, c, "bkt", sseRule(types.ServerSideEncryptionAes256, "", false)); err != nil {
		t.Fatal(err)
	}
	if _, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: b, Key: aws.String("after"), Body: strings.NewReader("data")}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.CopyObject(ctx, &s3.CopyObjectInput{Bucket: b, Key: aws.String("after"), CopySource: aws.String("bkt/after")}); apiCode(err) != "InvalidRequest" {
		t.Fatalf("copy onto itself, same encryption: %v", err)
	}
	cp, err := c.CopyObject(ctx, &s3.CopyObjectInput{Bucket: b, Key: aws.String("before"), CopySource: aws.String("bkt/before")})
	if err != nil || cp.ServerSideEncryption != types.ServerSideEncryptionAes256 {
		t.Fatalf("copy onto itself taking the default: %v %+v", err, cp)
	}
}
