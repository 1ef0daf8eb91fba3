package s3api

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
)

func readObject(t *testing.T, c *s3.Client, b, k string) string {
	t.Helper()
	out, err := c.GetObject(context.Background(), &s3.GetObjectInput{Bucket: aws.String(b), Key: aws.String(k)})
	if err != nil {
		t.Fatalf("get %s: %v", k, err)
	}
	defer out.Body.Close()
	data, _ := io.ReadAll(out.Body)
	return string(data)
}

// Conditional PUTs and copies: S3's codes, and a refused write changes
// nothing.
func TestConditionalWrites(t *testing.T) {
	_, ctx, c := newBucketServer(t, SingleCredential("ak", "sk"))
	cput := func(key, data string, f func(*s3.PutObjectInput)) (*s3.PutObjectOutput, error) {
		in := &s3.PutObjectInput{Bucket: aws.String("bkt"), Key: aws.String(key), Body: strings.NewReader(data)}
		f(in)
		return c.PutObject(ctx, in)
	}
	first, err := cput("lock", "one", func(in *s3.PutObjectInput) { in.IfNoneMatch = aws.String("*") })
	if err != nil {
		t.Fatalf("If-None-Match on a free key: %v", err)
	}
	cases := []struct {
		name   string
		key    string
		set    func(*s3.PutObjectInput)
		code   string
		status int
	}{
		{"If-None-Match * on an existing key", "lock", func(in *s3.PutObjectInput) { in.IfNoneMatch = aws.String("*") }, "PreconditionFailed", 412},
		{"If-Match another ETag", "lock", func(in *s3.PutObjectInput) { in.IfMatch = aws.String(`"0123456789abcdef0123456789abcdef"`) }, "PreconditionFailed", 412},
		{"If-Match on a missing key", "missing", func(in *s3.PutObjectInput) { in.IfMatch = first.ETag }, "NoSuchKey", 404},
		{"If-None-Match with an ETag", "lock", func(in *s3.PutObjectInput) { in.IfNoneMatch = first.ETag }, "NotImplemented", 501},
	}
	for _, tc := range cases {
		_, err := cput(tc.key, "two", tc.set)
		if apiCode(err) != tc.code || httpStatus(err) != tc.status {
			t.Errorf("%s: %v, want %s %d", tc.name, err, tc.code, tc.status)
		}
	}
	if got := readObject(t, c, "bkt", "lock"); got != "one" {
		t.Fatalf("after refused PUTs: %q", got)
	}
	second, err := cput("lock", "two", func(in *s3.PutObjectInput) { in.IfMatch = first.ETag })
	if err != nil {
		t.Fatalf("If-Match on the current ETag: %v", err)
	}
	// CopyObject's destination takes the same conditions.
	c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("bkt"), Key: aws.String("src"), Body: strings.NewReader("src")})
	_, err = c.CopyObject(ctx, &s3.CopyObjectInput{Bucket: aws.String("bkt"), Key: aws.String("lock"), CopySource: aws.String("bkt/src"), IfNoneMatch: aws.String("*")})
	if apiCode(err) != "PreconditionFailed" {
		t.Errorf("copy If-None-Match onto an existing key: %v", err)
	}
	_, err = c.CopyObject(ctx, &s3.CopyObjectInput{Bucket: aws.String("bkt"), Key: aws.String("lock"), CopySource: aws.String("bkt/src"), IfMatch: first.ETag})
	if apiCode(err) != "PreconditionFailed" {
		t.Errorf("copy If-Match on a stale ETag: %v", err)
	}
	if got := readObject(t, c, "bkt", "lock"); got != "two" {
		t.Fatalf("after refused copies: %q", got)
	}
	if _, err := c.CopyObject(ctx, &s3.CopyObjectInput{Bucket: aws.String("bkt"), Key: aws.String("lock"), CopySource: aws.String("bkt/src"), IfMatch: second.ETag}); err != nil {
		t.Fatalf("copy If-Match on the current ETag: %v", err)
	}
	if got := readObject(t, c, "bkt", "lock"); got != "src" {
		t.Fatalf("after copy: %q", got)
	}
}

// Headers that change S3's behaviour and that s3seal does not implement
// are refused with 501 and nothing is written, read or deleted; harmless
// values pass.
func TestUnimplementedHeadersRefused(t *testing.T) {
	_, ctx, c := newBucketServer(t, SingleCredential("ak", "sk"))
	if err := put(ctx, c, "bkt", "k"); err != nil {
		t.Fatal(err)
	}
	putWith := func(f func(*s3.PutObjectInput)) error {
		in := &s3.PutObjectInput{Bucket: aws.String("bkt"), Key: aws.String("k"), Body: strings.NewReader("changed")}
		f(in)
		_, err := c.PutObject(ctx, in)
		return err
	}
	// SSE-C and SSE-KMS are implemented (sse_test.go, e2e/sse_test.go);
	// the owner checks are answered (objectops_test.go).
	refused := map[string]error{
		"write offset": putWith(func(in *s3.PutObjectInput) { in.WriteOffsetBytes = aws.Int64(0) }),
	} // the owner checks: expectedowner_test.go
	for name, err := range refused {
		if apiCode(err) != "NotImplemented" || httpStatus(err) != http.StatusNotImplemented {
			t.Errorf("%s: %v, want 501 NotImplemented", name, err)
		}
	}
	// A lock in a bucket without Object Lock is S3's InvalidRequest (the
	// embedded store keeps locks; protect_test.go has tags and locks).
	if err := putWith(func(in *s3.PutObjectInput) { in.ObjectLockLegalHoldStatus = types.ObjectLockLegalHoldStatusOn }); apiCode(err) != "InvalidRequest" || httpStatus(err) != http.StatusBadRequest {
		t.Errorf("object lock in a bucket without it: %v, want 400 InvalidRequest", err)
	}
	// A grant to nobody s3seal knows is refused before the write (ACLs
	// are the bucket owner's to set, any credential: acls_test.go).
	if err := putWith(func(in *s3.PutObjectInput) { in.GrantRead = aws.String(`id="x"`) }); apiCode(err) != "InvalidArgument" {
		t.Errorf("grant to an unknown id: %v, want InvalidArgument", err)
	}
	if got := readObject(t, c, "bkt", "k"); got != "data" {
		t.Fatalf("object after refused requests: %q", got)
	}
	if err := get(ctx, c, "bkt", "k2"); apiCode(err) != "NoSuchKey" {
		t.Fatalf("refused copy wrote: %v", err)
	}
	// Values that ask for what s3seal does anyway pass.
	for name, f := range map[string]func(*s3.PutObjectInput){
		"private":        func(in *s3.PutObjectInput) { in.ACL = types.ObjectCannedACLPrivate },
		"AES256":         func(in *s3.PutObjectInput) { in.ServerSideEncryption = types.ServerSideEncryptionAes256 },
		"STANDARD":       func(in *s3.PutObjectInput) { in.StorageClass = types.StorageClassStandard },
		"request payer":  func(in *s3.PutObjectInput) { in.RequestPayer = types.RequestPayerRequester },
		"owner-full-acl": func(in *s3.PutObjectInput) { in.ACL = types.ObjectCannedACLBucketOwnerFullControl },
	} {
		if err := putWith(f); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}
