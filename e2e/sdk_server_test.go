package e2e

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
)

func TestVirtualHostedStyle(t *testing.T) {
	t.Parallel()
	p := startS3seal(t, sealOpts{})
	_, port, _ := strings.Cut(p.Addr, ":")
	c, rec := newRecordingSDKClient(t, "http://localhost:"+port, p.AccessKey, p.SecretKey, false)
	mustCreateBucket(t, c, "vhost")
	body := patternBytes(21, 100000)
	putObj(t, c, "vhost", "dir/obj", body)
	if got := getObj(t, c, "vhost", "dir/obj"); !bytes.Equal(got, body) {
		t.Errorf("virtual-hosted GET: body differs")
	}
	if keys := listAllV2(t, c, "vhost", &s3.ListObjectsV2Input{}); !slices.Equal(keys, []string{"dir/obj"}) {
		t.Errorf("virtual-hosted list = %q", keys)
	}
	if !slices.Contains(rec.Hosts(), "vhost.localhost:"+port) {
		t.Fatalf("client never used virtual-hosted style; hosts %q", rec.Hosts())
	}
	// The same object through path style.
	if got := getObj(t, sdkFor(t, p), "vhost", "dir/obj"); !bytes.Equal(got, body) {
		t.Errorf("path-style GET of virtual-hosted PUT: body differs")
	}
}

func TestAuthRejected(t *testing.T) {
	t.Parallel()
	p := startS3seal(t, sealOpts{})
	good := sdkFor(t, p)
	mustCreateBucket(t, good, "auth")
	putObj(t, good, "auth", "secret", []byte("top secret"))

	wrong := newSDKClient(t, p.Endpoint, p.AccessKey, "not-the-secret", true)
	_, err := wrong.GetObject(ctxT(t), &s3.GetObjectInput{Bucket: aws.String("auth"), Key: aws.String("secret")})
	wantStatus(t, "GET with wrong secret", err, http.StatusForbidden, "SignatureDoesNotMatch")
	_, err = wrong.PutObject(ctxT(t), &s3.PutObjectInput{Bucket: aws.String("auth"), Key: aws.String("w"), Body: strings.NewReader("x")})
	wantStatus(t, "PUT with wrong secret", err, http.StatusForbidden, "SignatureDoesNotMatch")

	unknown := newSDKClient(t, p.Endpoint, "no-such-key-id", p.SecretKey, true)
	_, err = unknown.ListBuckets(ctxT(t), &s3.ListBucketsInput{})
	wantStatus(t, "ListBuckets with unknown access key", err, http.StatusForbidden, "InvalidAccessKeyId")

	for _, r := range []struct{ method, path string }{
		{http.MethodGet, "/"},
		{http.MethodGet, "/auth/secret"},
		{http.MethodGet, "/auth?list-type=2"},
		{http.MethodPut, "/auth/unsigned"},
		{http.MethodDelete, "/auth/secret"},
	} {
		req, _ := http.NewRequest(r.method, p.Endpoint+r.path, strings.NewReader("unsigned body"))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatalf("unsigned %s %s: %v", r.method, r.path, err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusForbidden {
			t.Errorf("unsigned %s %s: %s, want 403", r.method, r.path, resp.Status)
		}
		if bytes.Contains(b, []byte("top secret")) {
			t.Errorf("unsigned %s %s leaked the object", r.method, r.path)
		}
	}
	// Nothing changed.
	if got := getObj(t, good, "auth", "secret"); string(got) != "top secret" {
		t.Errorf("object after rejected requests = %q", got)
	}
	_, err = good.HeadObject(ctxT(t), &s3.HeadObjectInput{Bucket: aws.String("auth"), Key: aws.String("unsigned")})
	wantStatus(t, "HEAD of unsigned PUT", err, http.StatusNotFound, "")
	_, err = good.HeadObject(ctxT(t), &s3.HeadObjectInput{Bucket: aws.String("auth"), Key: aws.String("w")})
	wantStatus(t, "HEAD of wrongly signed PUT", err, http.StatusNotFound, "")
}

func TestRestartKeepsObjects(t *testing.T) {
	t.Parallel()
	p, c := startWithBucket(t, sealOpts{}, mustCreateBucket, "keep")
	bodies := map[string][]byte{"small": []byte("hello"), "big": patternBytes(31, 300000), "empty": {}}
	for k, b := range bodies {
		putObj(t, c, "keep", k, b)
	}
	keyFile := filepath.Join(p.DataDir, "dev-master.key")
	st, err := os.Stat(keyFile)
	if err != nil {
		t.Fatalf("dev master key: %v", err)
	}
	if st.Mode().Perm() != 0o600 {
		t.Errorf("%s mode %v, want 0600", keyFile, st.Mode().Perm())
	}
	if !strings.Contains(strings.ToLower(p.Log()), "warn") {
		t.Errorf("no warning logged about the dev key/credentials:\n%s", p.Log())
	}
	keyBefore, _ := os.ReadFile(keyFile)
	p.Stop()

	p2 := startS3seal(t, sealOpts{DataDir: p.DataDir})
	c2 := sdkFor(t, p2)
	for k, b := range bodies {
		if got := getObj(t, c2, "keep", k); !bytes.Equal(got, b) {
			t.Errorf("after restart %s: %d bytes differ", k, len(got))
		}
	}
	if keys := listAllV2(t, c2, "keep", &s3.ListObjectsV2Input{}); !slices.Equal(keys, []string{"big", "empty", "small"}) {
		t.Errorf("after restart list = %q", keys)
	}
	if keyAfter, _ := os.ReadFile(keyFile); !bytes.Equal(keyBefore, keyAfter) {
		t.Errorf("dev master key changed across restart")
	}
}

func TestRealBackendNeedsKeyAndCredentials(t *testing.T) {
	t.Parallel()
	base := []string{"serve", "--listen", "127.0.0.1:0", "--data-dir", t.TempDir(),
		"--backend-endpoint", "http://127.0.0.1:9", "--backend-path-style",
		"--backend-access-key", "x", "--backend-secret-key", "y"}
	key := randomKey(t)
	openKeys := writeJSON(t, t.TempDir(), "keys.json", keysFile{Primary: "k1", Keys: map[string]string{"k1": key}})
	if err := os.Chmod(openKeys, 0o644); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		args []string
	}{
		{"no key", []string{"--access-key", "ak", "--secret-key", "sk"}},
		{"no client credentials", []string{"--key", key}},
		{"keys file readable by others", []string{"--access-key", "ak", "--secret-key", "sk", "--keys-file", openKeys}},
	}
	for _, tc := range cases {
		code, out := runS3sealExit(t, nil, append(slices.Clone(base), tc.args...)...)
		if code != 2 {
			t.Errorf("%s: exit code %d, want 2; output:\n%s", tc.name, code, out)
		}
	}
	if _, out := runS3sealExit(t, nil, append(slices.Clone(base), cases[2].args...)...); !strings.Contains(out, "chmod 600 "+openKeys) {
		t.Errorf("an open keys file: the message does not say what to do:\n%s", out)
	}
}

// TestConcurrentPuts: clients upload in parallel (aws s3 cp --recursive uses
// ten threads); no request may hang or fail.
func TestConcurrentPuts(t *testing.T) {
	t.Parallel()
	_, c := startWithBucket(t, sealOpts{}, mustCreateBucket, "conc")
	const workers, perWorker = 10, 4
	errs := make(chan error, workers*perWorker)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range perWorker {
				body := patternBytes(uint64(w*100+i), 200001+w*1000)
				ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
				_, err := c.PutObject(ctx, &s3.PutObjectInput{
					Bucket: aws.String("conc"), Key: aws.String(fmt.Sprintf("w%d/o%d", w, i)),
					Body: bytes.NewReader(body), ContentLength: aws.Int64(int64(len(body))),
				})
				cancel()
				if err != nil {
					errs <- fmt.Errorf("PUT w%d/o%d: %w", w, i, err)
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	for w := range workers {
		for i := range perWorker {
			want := patternBytes(uint64(w*100+i), 200001+w*1000)
			if got := getObj(t, c, "conc", fmt.Sprintf("w%d/o%d", w, i)); !bytes.Equal(got, want) {
				t.Errorf("GET w%d/o%d differs", w, i)
			}
		}
	}
}
