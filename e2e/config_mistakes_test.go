package e2e

import (
	"bytes"
	"errors"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
)

// The mistakes of a first day with s3seal, each answered with what is
// wrong and the setting that fixes it, not with what it would otherwise
// look like (corruption, a bucket taken, a store that does not answer).

// storeFor is an s3seal on its embedded default, used as another
// s3seal's object store: an S3 API that checks signatures (moto takes any
// credentials). It refuses s3seal's own metadata keys, so nothing is
// written through it.
func storeFor(t *testing.T) *sealProc {
	t.Helper()
	return startS3seal(t, sealOpts{})
}

// waitReadyz polls /readyz until it answers want, and returns its body.
func waitReadyz(t *testing.T, p *sealProc, want int) string {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		code, body := httpGet(t, p.Endpoint+"/readyz")
		if code == want {
			return body
		}
		if time.Now().After(deadline) {
			t.Fatalf("/readyz answers %d %q, want %d", code, body, want)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// An embedded data directory whose key was given before: started without
// it, s3seal refuses and names the flags, and makes no development key.
func TestForgottenKeyOnEmbeddedData(t *testing.T) {
	t.Parallel()
	key := randomKey(t)
	dir := filepath.Join(t.TempDir(), "data")
	p := startS3seal(t, sealOpts{DataDir: dir, Args: []string{"--key", key}})
	c := sdkFor(t, p)
	if _, err := c.CreateBucket(ctxT(t), &s3.CreateBucketInput{Bucket: aws.String("kept")}); err != nil {
		t.Fatal(err)
	}
	p.Stop()

	code, out := runS3sealExit(t, nil, "serve", "--listen", "127.0.0.1:0", "--data-dir", dir)
	if code != 2 || !strings.Contains(out, "--key-file") || !strings.Contains(out, "kept") || !strings.Contains(out, "empty data directory") {
		t.Fatalf("started without its key: exit %d, want 2 naming --key-file and the bucket:\n%s", code, out)
	}
	if _, err := os.Stat(filepath.Join(dir, "dev-master.key")); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("a development key was made beside sealed data: %v", err)
	}
	// With its key it serves again.
	p = startS3seal(t, sealOpts{DataDir: dir, Args: []string{"--key", key}})
	if _, err := sdkFor(t, p).HeadBucket(ctxT(t), &s3.HeadBucketInput{Bucket: aws.String("kept")}); err != nil {
		t.Fatal(err)
	}
}

// Another valid key under the id the data was sealed with: the start
// logs it; a GET names the master key, and from then on /readyz says the
// keyring is not the one, naming the ids;
// verify says "sealed under a key this keyring lacks", not corrupt. The
// right key makes it ready again.
func TestWrongMasterKeyIsNamed(t *testing.T) {
	t.Parallel()
	key, wrong := randomKey(t), randomKey(t)
	dir := filepath.Join(t.TempDir(), "data")
	p := startS3seal(t, sealOpts{DataDir: dir, Args: []string{"--key", key}})
	c := sdkFor(t, p)
	if _, err := c.CreateBucket(ctxT(t), &s3.CreateBucketInput{Bucket: aws.String("sealed")}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.PutObject(ctxT(t), &s3.PutObjectInput{Bucket: aws.String("sealed"), Key: aws.String("obj"), Body: bytes.NewReader([]byte("hello"))}); err != nil {
		t.Fatal(err)
	}
	waitReadyz(t, p, http.StatusOK)
	p.Stop()

	p = startS3seal(t, sealOpts{DataDir: dir, Args: []string{"--key", wrong}})
	if !strings.Contains(p.Log(), "the master key looks wrong") {
		t.Fatalf("nothing logged at start:\n%s", p.Log())
	}
	_, err := sdkFor(t, p).GetObject(ctxT(t), &s3.GetObjectInput{Bucket: aws.String("sealed"), Key: aws.String("obj")})
	if err == nil || !strings.Contains(err.Error(), `master key "default"`) || !strings.Contains(err.Error(), "another key under that id") {
		t.Fatalf("GET with a wrong key: %v", err)
	}
	// Once a request failed on the key, /readyz names the keyring.
	body := waitReadyz(t, p, http.StatusServiceUnavailable)
	if !strings.Contains(body, "sealed under master key(s) default; the keyring has default") || !strings.Contains(body, "another key under the same id") {
		t.Fatalf("/readyz with a wrong key: %q", body)
	}
	if strings.Contains(body, "sealed\n") || strings.Contains(body, "bucket(s): sealed") {
		t.Fatalf("/readyz names a bucket: %q", body)
	}
	p.Stop()

	code, out := runS3sealExit(t, nil, "verify", "--data-dir", dir, "--key", wrong, "--bucket", "sealed")
	if code != 1 || !strings.Contains(out, "wrong-key sealed/obj: sealed under a key this keyring lacks") || strings.Contains(out, "corrupt") ||
		!strings.Contains(out, `no object under master key "default" opens with this keyring`) {
		t.Fatalf("verify with a wrong key: exit %d\n%s", code, out)
	}

	p = startS3seal(t, sealOpts{DataDir: dir, Args: []string{"--key", key}})
	waitReadyz(t, p, http.StatusOK)
}

// A wrong backend secret: creating a bucket answers a 403 naming s3seal's
// backend credentials (never BucketAlreadyExists), through the aws CLI as
// through the SDK; it is logged at WARN and /readyz names it.
func TestWrongBackendSecretIsNamed(t *testing.T) {
	t.Parallel()
	store := storeFor(t)
	p := startS3seal(t, sealOpts{AccessKey: "client", SecretKey: "client-secret-key", Args: []string{"--key", randomKey(t),
		"--backend-endpoint", store.Endpoint, "--backend-path-style", "--backend-region", "us-east-1",
		"--backend-access-key", store.AccessKey, "--backend-secret-key", "not-" + store.SecretKey}})

	out := newAWSCLI(t, p).fails("AccessDenied", "s3", "mb", "s3://wrongsecret")
	if !strings.Contains(out, "backend credentials") || !strings.Contains(out, "SignatureDoesNotMatch") || strings.Contains(out, "BucketAlreadyExists") {
		t.Fatalf("aws s3 mb with a wrong backend secret:\n%s", out)
	}
	_, err := sdkFor(t, p).PutObject(ctxT(t), &s3.PutObjectInput{Bucket: aws.String("wrongsecret"), Key: aws.String("k"), Body: bytes.NewReader([]byte("x"))})
	if err == nil || !strings.Contains(err.Error(), "backend credentials") {
		t.Fatalf("PUT with a wrong backend secret: %v", err)
	}
	if !strings.Contains(p.Log(), "level=WARN") || !strings.Contains(p.Log(), "refuses s3seal's backend credentials") {
		t.Fatalf("no WARN line names the backend credentials:\n%s", p.Log())
	}
	if body := waitReadyz(t, p, http.StatusServiceUnavailable); !strings.Contains(body, "backend credentials") {
		t.Fatalf("/readyz: %q", body)
	}

	// An unknown access key is named the same way.
	p = startS3seal(t, sealOpts{AccessKey: "client", SecretKey: "client-secret-key", Args: []string{"--key", randomKey(t),
		"--backend-endpoint", store.Endpoint, "--backend-path-style",
		"--backend-access-key", "nobody", "--backend-secret-key", store.SecretKey}})
	out = newAWSCLI(t, p).fails("AccessDenied", "s3", "mb", "s3://wrongkey")
	if !strings.Contains(out, "InvalidAccessKeyId") || !strings.Contains(out, "backend credentials") {
		t.Fatalf("aws s3 mb with an unknown backend access key:\n%s", out)
	}
}

// An endpoint on localhost is addressed by path unless told otherwise;
// told to address it virtual-hosted, the bucket names that do not resolve
// are answered with a hint at --backend-path-style, in the error and in
// /readyz.
func TestLocalhostEndpointAddressing(t *testing.T) {
	t.Parallel()
	store := startMoto(t)
	endpoint := strings.Replace(store.Endpoint, "127.0.0.1", "localhost", 1)
	args := []string{"--key", randomKey(t), "--backend-endpoint", endpoint,
		"--backend-access-key", "x", "--backend-secret-key", "y"}
	p := startS3seal(t, sealOpts{AccessKey: "client", SecretKey: "client-secret-key", Args: args})
	c := sdkFor(t, p)
	if _, err := c.CreateBucket(ctxT(t), &s3.CreateBucketInput{Bucket: aws.String("local")}); err != nil {
		t.Fatalf("CreateBucket through an endpoint on localhost: %v", err)
	}
	if _, err := c.PutObject(ctxT(t), &s3.PutObjectInput{Bucket: aws.String("local"), Key: aws.String("k"), Body: bytes.NewReader([]byte("x"))}); err != nil {
		t.Fatal(err)
	}
	waitReadyz(t, p, http.StatusOK)
	p.Stop()

	p = startS3seal(t, sealOpts{AccessKey: "client", SecretKey: "client-secret-key", Args: append(args, "--backend-path-style=false")})
	_, err := sdkFor(t, p).GetObject(ctxT(t), &s3.GetObjectInput{Bucket: aws.String("local"), Key: aws.String("k")})
	if err == nil || !strings.Contains(err.Error(), "--backend-path-style") {
		t.Fatalf("GET through a virtual-hosted localhost: %v", err)
	}
	if body := waitReadyz(t, p, http.StatusServiceUnavailable); !strings.Contains(body, "--backend-path-style") {
		t.Fatalf("/readyz: %q", body)
	}
	if !strings.Contains(p.Log(), "local.localhost") || !strings.Contains(p.Log(), "--backend-path-style") {
		t.Fatalf("the log does not name the name and the flag:\n%s", p.Log())
	}
}
