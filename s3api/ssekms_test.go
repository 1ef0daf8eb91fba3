package s3api

import (
	"context"
	"encoding/base64"
	"errors"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"

	"github.com/s3seal/s3seal/backend"
)

// TestKMSValuesChecked: an SSE-KMS key id over 2048 characters, or an
// encryption context that is not base64 of a JSON object of strings, is
// refused with 400 InvalidArgument; values in bounds reach the store, and
// whatever it makes of them, the answer is never a 5xx.
func TestKMSValuesChecked(t *testing.T) {
	srv := newTestServerOver(t, Config{Credentials: SingleCredential("ak", "sk")}, nil)
	ctx := context.Background()
	c := sdkClient(srv.URL, "ak", "sk")
	b := aws.String("bkt")
	if _, err := c.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: b}); err != nil {
		t.Fatal(err)
	}
	b64 := func(s string) *string { return aws.String(base64.StdEncoding.EncodeToString([]byte(s))) }
	for name, tc := range map[string]struct {
		in   s3.PutObjectInput
		code string // "" when any answer below 500 will do
	}{
		"key id 2049":        {s3.PutObjectInput{SSEKMSKeyId: aws.String(strings.Repeat("k", 2049))}, "InvalidArgument"},
		"context not base64": {s3.PutObjectInput{SSEKMSEncryptionContext: aws.String("{not base64}")}, "InvalidArgument"},
		"context not JSON":   {s3.PutObjectInput{SSEKMSEncryptionContext: b64("a=b")}, "InvalidArgument"},
		"context JSON array": {s3.PutObjectInput{SSEKMSEncryptionContext: b64(`["a"]`)}, "InvalidArgument"},
		"context number":     {s3.PutObjectInput{SSEKMSEncryptionContext: b64(`{"a":1}`)}, "InvalidArgument"},
		"context over 8 KiB": {s3.PutObjectInput{SSEKMSEncryptionContext: b64(`{"a":"` + strings.Repeat("a", 6200) + `"}`)}, "RequestHeaderSectionTooLarge"},
		"key id 2048":        {s3.PutObjectInput{SSEKMSKeyId: aws.String(strings.Repeat("k", 2048))}, ""},
		"context near 8 KiB": {s3.PutObjectInput{SSEKMSEncryptionContext: b64(`{"a":"` + strings.Repeat("a", 6000) + `"}`)}, ""},
		"context in bounds":  {s3.PutObjectInput{SSEKMSEncryptionContext: b64(`{"project":"backup"}`)}, ""},
	} {
		in := tc.in
		in.Bucket, in.Key, in.Body, in.ServerSideEncryption = b, aws.String("k"), strings.NewReader("x"), types.ServerSideEncryptionAwsKms
		_, err := c.PutObject(ctx, &in)
		var re interface{ HTTPStatusCode() int }
		status := 200
		if errors.As(err, &re) {
			status = re.HTTPStatusCode()
		}
		if tc.code != "" && (apiCode(err) != tc.code || status != 400) {
			t.Errorf("%s: %d %v, want 400 %s", name, status, err, tc.code)
		}
		if status >= 500 {
			t.Errorf("%s: %d %v, want no server error", name, status, err)
		}
	}
}

// TestStoreSizeRefusalsAre4xx: a store's refusal of a request too large
// for it is the client's 4xx, never a 500.
func TestStoreSizeRefusalsAre4xx(t *testing.T) {
	for _, tc := range []struct {
		be   backend.Error
		code string
	}{
		{backend.Error{Code: "MetadataTooLarge", StatusCode: 400}, "MetadataTooLarge"},
		{backend.Error{Code: "RequestHeaderFieldsTooLarge", StatusCode: 431}, "RequestHeaderSectionTooLarge"},
		{backend.Error{Code: "SomethingElse", StatusCode: 431}, "RequestHeaderSectionTooLarge"},
		{backend.Error{Code: "RequestHeaderSectionTooLarge", StatusCode: 400}, "RequestHeaderSectionTooLarge"},
		{backend.Error{Code: "RequestEntityTooLarge", StatusCode: 413}, "EntityTooLarge"},
		{backend.Error{Code: "EntityTooLarge", StatusCode: 400}, "EntityTooLarge"},
		{backend.Error{Code: "MaxMessageLengthExceeded", StatusCode: 400}, "MaxMessageLengthExceeded"},
	} {
		ae := fromBackend(&tc.be)
		if string(ae.Code) != tc.code || ae.StatusCode != 400 {
			t.Errorf("%s %d: %s %d, want 400 %s", tc.be.Code, tc.be.StatusCode, ae.Code, ae.StatusCode, tc.code)
		}
	}
}

// An SSE-KMS key id or encryption context the store cannot take (too
// large for its metadata or headers) is the client's bad input, answered
// with a 4xx as S3 does (checkKMSValues, and sizeRefusal for a store's
// size refusal), never a 500 InternalError that SDKs would retry for a
// request that can never succeed.
func TestOversizedKMSValuesRefused(t *testing.T) {
	srv := newTestServerOver(t, Config{Credentials: SingleCredential("ak", "sk")}, nil)
	ctx := context.Background()
	c := sdkClient(srv.URL, "ak", "sk")
	b := aws.String("bkt")
	if _, err := c.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: b}); err != nil {
		t.Fatal(err)
	}
	for name, in := range map[string]*s3.PutObjectInput{
		"key id 6000 bytes": {SSEKMSKeyId: aws.String(strings.Repeat("k", 6000))},
		"context 80 KiB":    {SSEKMSEncryptionContext: aws.String(base64.StdEncoding.EncodeToString([]byte(`{"a":"` + strings.Repeat("a", 60000) + `"}`)))},
	} {
		in.Bucket, in.Key, in.Body, in.ServerSideEncryption = b, aws.String("k"), strings.NewReader("x"), types.ServerSideEncryptionAwsKms
		_, err := c.PutObject(ctx, in)
		var status int
		var re interface{ HTTPStatusCode() int }
		if errors.As(err, &re) {
			status = re.HTTPStatusCode()
		}
		t.Logf("%s: %d %v", name, status, err)
		if status >= 500 {
			t.Errorf("%s: %d %s, want a 4xx client error", name, status, apiCode(err))
		}
	}
}
