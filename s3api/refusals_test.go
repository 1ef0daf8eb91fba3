package s3api

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
)

// Each access refusal is logged at INFO with the access key, the bucket,
// the operation and the rule that refused it, never a secret.
func TestAccessRefusalsLogged(t *testing.T) {
	creds := Credentials{
		"admin":  {AccessKey: "admin", SecretKey: "admin-secret-1", Read: []string{"*"}, Write: []string{"*"}},
		"reader": {AccessKey: "reader", SecretKey: "reader-secret-2", Read: []string{"data"}},
		"copier": {AccessKey: "copier", SecretKey: "copier-secret-3", Write: []string{"dst"}},
	}
	creds = oneAccount(creds) // one account, as every credential was before owners (issue 22)
	srv := newTestServerWith(t, Config{Credentials: creds})
	var logs syncBuffer
	prev := slog.Default()
	slog.SetDefault(slog.New(slog.NewTextHandler(&logs, nil))) // INFO and above
	t.Cleanup(func() { slog.SetDefault(prev) })
	ctx := context.Background()
	admin := sdkClient(srv.URL, "admin", "admin-secret-1")
	for _, b := range []string{"data", "dst"} {
		if _, err := admin.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String(b)}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := admin.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("data"), Key: aws.String("k"), Body: strings.NewReader("x")}); err != nil {
		t.Fatal(err)
	}

	_, err := sdkClient(srv.URL, "reader", "reader-secret-2").PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("data"), Key: aws.String("k"), Body: strings.NewReader("y")})
	wantLogged(t, &logs, err, `level=INFO msg="access refused" access_key=reader bucket=data op=PutObject code=AccessDenied why="the credential may not write bucket \"data\" (not in its write list)"`)

	_, err = sdkClient(srv.URL, "copier", "copier-secret-3").CopyObject(ctx, &s3.CopyObjectInput{Bucket: aws.String("dst"), Key: aws.String("k"), CopySource: aws.String("data/k")})
	wantLogged(t, &logs, err, `level=INFO msg="access refused" access_key=copier bucket=dst op=CopyObject code=AccessDenied why="the credential may not read bucket \"data\" (not in its read or write list)"`)

	_, err = sdkClient(srv.URL, "reader", "not-the-secret-4").GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String("data"), Key: aws.String("k")})
	wantLogged(t, &logs, err, `level=INFO msg="access refused" access_key=reader bucket=data op=GetObject code=SignatureDoesNotMatch why="The request signature we calculated does not match`)

	_, err = admin.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String("data"), Key: aws.String("k"), ExpectedBucketOwner: aws.String("123456789012")})
	wantLogged(t, &logs, err, `access_key=admin bucket=data op=GetObject code=AccessDenied why="X-Amz-Expected-Bucket-Owner names another owner than the access key"`)

	resp, err := http.Get(srv.URL + "/data/k")
	if err == nil {
		resp.Body.Close()
		if resp.StatusCode != http.StatusForbidden {
			err = nil
		} else {
			err = errors.New(resp.Status)
		}
	}
	wantLogged(t, &logs, err, `access_key="" bucket=data op=GetObject code=AccessDenied why="unsigned (anonymous) request: s3seal serves signed requests only"`)

	for _, secret := range []string{"admin-secret-1", "reader-secret-2", "copier-secret-3", "not-the-secret-4"} {
		if strings.Contains(logs.String(), secret) {
			t.Errorf("the log holds the secret %q:\n%s", secret, logs.String())
		}
	}
}

// wantLogged checks that err is a refusal and that the log has a line
// containing line.
func wantLogged(t *testing.T, logs *syncBuffer, err error, line string) {
	t.Helper()
	if err == nil {
		t.Fatalf("not refused; want the log line %s", line)
	}
	if !strings.Contains(logs.String(), line) {
		t.Errorf("no log line with\n%s\nlog:\n%s", line, logs.String())
	}
}

// A browser POST's refusal names the access key its form gives and the
// bucket it posts to.
func TestPostRefusalLogged(t *testing.T) {
	url, _ := newPostServer(t)
	var logs syncBuffer
	prev := slog.Default()
	slog.SetDefault(slog.New(slog.NewTextHandler(&logs, nil)))
	t.Cleanup(func() { slog.SetDefault(prev) })
	p := postSigner{ak: "reader", sk: "reader-secret", now: time.Now()}
	b64, sig := p.policy(t, time.Now().Add(time.Hour), map[string]string{"bucket": postBucket}, []any{"starts-with", "$key", ""})
	ctype, body := formBody(t, append(p.fields(b64, sig), [2]string{"key", "k"}), "f", []byte("x"))
	var err error
	if res := sendPost(t, url, ctype, body); res.status == http.StatusForbidden {
		err = errors.New(res.body)
	}
	wantLogged(t, &logs, err, `access_key=reader bucket=forms op=PostObject code=AccessDenied why="the credential may not write bucket \"forms\" (not in its write list)"`)
	if strings.Contains(logs.String(), "reader-secret") {
		t.Errorf("the log holds the secret:\n%s", logs.String())
	}
}

// A browser POST whose policy names the customer key (SSE-C) in an eq
// condition, refused because the form's key differs, must not log the
// policy's key: the refusal names the field whose condition failed, not
// its value.
func TestPostPolicyRefusalLogsNoCustomerKey(t *testing.T) {
	url, _ := newPostServer(t)
	var logs syncBuffer
	prev := slog.Default()
	slog.SetDefault(slog.New(slog.NewTextHandler(&logs, nil)))
	t.Cleanup(func() { slog.SetDefault(prev) })
	const policyKey = "MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY=" // 32 bytes, base64
	const formKey = "ZmVkY2JhOTg3NjU0MzIxMGZlZGNiYTk4NzY1NDMyMTA="
	p := postSigner{ak: postAK, sk: postSK, now: time.Now()}
	b64, sig := p.policy(t, time.Now().Add(time.Hour), map[string]string{"bucket": postBucket}, []any{"starts-with", "$key", ""},
		[]any{"eq", "$x-amz-server-side-encryption-customer-algorithm", "AES256"},
		[]any{"eq", "$x-amz-server-side-encryption-customer-key", policyKey})
	fields := append(p.fields(b64, sig), [2]string{"key", "k"},
		[2]string{"x-amz-server-side-encryption-customer-algorithm", "AES256"},
		[2]string{"x-amz-server-side-encryption-customer-key", formKey})
	ctype, body := formBody(t, fields, "f", []byte("x"))
	var err error
	if res := sendPost(t, url, ctype, body); res.status == http.StatusForbidden {
		err = errors.New(res.body)
	}
	wantLogged(t, &logs, err, `op=PostObject code=AccessDenied`)
	if strings.Contains(logs.String(), policyKey) || strings.Contains(logs.String(), formKey) {
		t.Errorf("the log holds a customer key:\n%s", logs.String())
	}
}
