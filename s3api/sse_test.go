package s3api

import (
	"net/http"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
)

// Server-side encryption headers that S3 itself refuses as bad input
// (s3-tests test_put_obj_enc_conflict_*, test_sse_kms_not_declared,
// test_encryption_key_no_sse_c, test_encryption_sse_c_invalid_md5) are
// 400 InvalidArgument, not 501: only well-formed SSE-KMS or SSE-C is an
// operation s3seal does not implement.
func TestSSEHeadersBadInput(t *testing.T) {
	const key = "pO3upElrwuEXSoFwCfnZPdSsmt/xWeFa0N9KgDijwVs=" // s3-tests' key
	const keyMD5 = "DWygnHRtgiJ77HCm+1rvHw=="
	ssec := func(alg, k, md5 string) http.Header {
		h := http.Header{}
		for name, v := range map[string]string{"Algorithm": alg, "Key": k, "Key-Md5": md5} {
			if v != "" {
				h.Set("X-Amz-Server-Side-Encryption-Customer-"+name, v)
			}
		}
		return h
	}
	with := func(h http.Header, kv ...string) http.Header {
		for i := 0; i < len(kv); i += 2 {
			h.Set(kv[i], kv[i+1])
		}
		return h
	}
	for name, c := range map[string]struct {
		h    http.Header
		want string // "" when the headers are well formed
	}{
		"sse-c and AES256":       {with(ssec("AES256", key, keyMD5), "X-Amz-Server-Side-Encryption", "AES256"), "InvalidArgument"},
		"sse-c and kms":          {with(ssec("AES256", key, keyMD5), "X-Amz-Server-Side-Encryption", "aws:kms", "X-Amz-Server-Side-Encryption-Aws-Kms-Key-Id", "k"), "InvalidArgument"},
		"AES256 and kms key":     {with(http.Header{}, "X-Amz-Server-Side-Encryption", "AES256", "X-Amz-Server-Side-Encryption-Aws-Kms-Key-Id", "k"), "InvalidArgument"},
		"kms key undeclared":     {with(http.Header{}, "X-Amz-Server-Side-Encryption-Aws-Kms-Key-Id", "k"), "InvalidArgument"},
		"unknown method":         {with(http.Header{}, "X-Amz-Server-Side-Encryption", "aes:kms"), "InvalidArgument"},
		"sse-c no algorithm":     {ssec("", key, keyMD5), "InvalidArgument"},
		"sse-c no key":           {ssec("AES256", "", keyMD5), "InvalidArgument"},
		"sse-c short key":        {ssec("AES256", "MDEyMzQ1Njc4OWFi", ""), "InvalidArgument"},
		"sse-c wrong md5":        {ssec("AES256", key, "AAAAAAAAAAAAAAAAAAAAAA=="), "InvalidArgument"},
		"sse-c well formed":      {ssec("AES256", key, keyMD5), ""},
		"sse-c without md5":      {ssec("AES256", key, ""), "InvalidArgument"},
		"sse-c other algorithm":  {ssec("AES128", key, keyMD5), "InvalidArgument"},
		"copy source bad md5":    {with(http.Header{}, "X-Amz-Copy-Source-Server-Side-Encryption-Customer-Algorithm", "AES256", "X-Amz-Copy-Source-Server-Side-Encryption-Customer-Key", key, "X-Amz-Copy-Source-Server-Side-Encryption-Customer-Key-Md5", "AAAAAAAAAAAAAAAAAAAAAA=="), "InvalidArgument"},
		"kms well formed":        {with(http.Header{}, "X-Amz-Server-Side-Encryption", "aws:kms", "X-Amz-Server-Side-Encryption-Aws-Kms-Key-Id", "k"), ""},
		"AES256":                 {with(http.Header{}, "X-Amz-Server-Side-Encryption", "AES256"), ""},
		"bucket key without kms": {with(http.Header{}, "X-Amz-Server-Side-Encryption-Bucket-Key-Enabled", "true"), "InvalidArgument"},
		"no encryption headers":  {http.Header{}, ""},
	} {
		got := ""
		if err := checkSSEHeaders(c.h); err != nil {
			got = string(err.Code)
		}
		if got != c.want {
			t.Errorf("%s: %q, want %q", name, got, c.want)
		}
	}

	// Over the wire: 400, and nothing is written.
	_, ctx, cl := newBucketServer(t, SingleCredential("ak", "sk"))
	for name, f := range map[string]func(*s3.PutObjectInput){
		"kms key undeclared": func(in *s3.PutObjectInput) { in.SSEKMSKeyId = aws.String("k") },
		"sse-c and AES256": func(in *s3.PutObjectInput) {
			in.ServerSideEncryption = types.ServerSideEncryptionAes256
			in.SSECustomerAlgorithm, in.SSECustomerKey = aws.String("AES256"), aws.String(key)
		},
	} {
		in := &s3.PutObjectInput{Bucket: aws.String("bkt"), Key: aws.String("k"), Body: strings.NewReader("x")}
		f(in)
		_, err := cl.PutObject(ctx, in)
		if apiCode(err) != "InvalidArgument" || httpStatus(err) != http.StatusBadRequest {
			t.Errorf("%s: %v, want 400 InvalidArgument", name, err)
		}
		_, err = cl.CreateMultipartUpload(ctx, &s3.CreateMultipartUploadInput{Bucket: aws.String("bkt"), Key: aws.String("k"),
			SSEKMSKeyId: in.SSEKMSKeyId, ServerSideEncryption: in.ServerSideEncryption, SSECustomerAlgorithm: in.SSECustomerAlgorithm, SSECustomerKey: in.SSECustomerKey})
		if apiCode(err) != "InvalidArgument" || httpStatus(err) != http.StatusBadRequest {
			t.Errorf("%s, multipart: %v, want 400 InvalidArgument", name, err)
		}
	}
	if err := get(ctx, cl, "bkt", "k"); apiCode(err) != "NoSuchKey" {
		t.Fatalf("a refused PUT wrote: %v", err)
	}
}
