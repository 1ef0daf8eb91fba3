package e2e

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/twmb/franz-go/pkg/kfake"
)

// startLFS runs s3seal serve --lfs with extra arguments and returns it with
// the LFS API's base URL.
func startLFS(t *testing.T, o sealOpts) (*sealProc, string) {
	t.Helper()
	lfsAddr := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	o.Args = append(o.Args, "--lfs", "--lfs-listen", lfsAddr)
	p := startS3seal(t, o)
	base := "http://" + lfsAddr
	waitHTTP(t, base+"/lfs/produce", p.done, func(code int) bool { return code != 0 })
	return p, base
}

type envelope struct {
	KfsLFS int    `json:"kfs_lfs"`
	Bucket string `json:"bucket"`
	Key    string `json:"key"`
	Size   int64  `json:"size"`
	SHA256 string `json:"sha256"`
}

func lfsPost(t *testing.T, url string, h map[string]string, body io.Reader) (int, []byte) {
	t.Helper()
	return lfsDo(t, http.MethodPost, url, h, body)
}

// lfsDo sends one request with headers h and returns its status and body.
func lfsDo(t *testing.T, method, url string, h map[string]string, body io.Reader) (int, []byte) {
	t.Helper()
	req, _ := http.NewRequest(method, url, body)
	for k, v := range h {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, b
}

// TestLFSZeroSetup: s3seal serve --lfs with no brokers runs its development
// Kafka. curl produces a blob of 20 MiB (several parts), kcat (Debian)
// consumes the envelope, /lfs/download streams the blob back with its
// SHA-256 checked, a presigned URL to s3seal's S3 API returns it too, and
// what the store holds is ciphertext.
func TestLFSZeroSetup(t *testing.T) {
	curl := requireTool(t, "curl")
	kcat := requireTool(t, "kcat")
	kafka := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	p, base := startLFS(t, sealOpts{Args: []string{"--lfs-dev-kafka", kafka}})

	blob := bytes.Repeat([]byte("s3seal lfs blob "), 20<<20/16)
	blob = append(blob, "tail"...)
	path := filepath.Join(t.TempDir(), "blob")
	if err := os.WriteFile(path, blob, 0o600); err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(blob)
	out, err := exec.Command(curl, "-sS", "-X", "POST", "-H", "X-Kafka-Topic: backups", "-H", "X-Kafka-Key: "+base64.StdEncoding.EncodeToString([]byte("k1")),
		"-H", "Content-Type: application/octet-stream", "--data-binary", "@"+path, base+"/lfs/produce").CombinedOutput()
	if err != nil {
		t.Fatalf("curl: %v: %s", err, out)
	}
	var env envelope
	if err := json.Unmarshal(out, &env); err != nil || env.KfsLFS != 1 || env.Size != int64(len(blob)) || env.SHA256 != hex.EncodeToString(sum[:]) ||
		!strings.HasPrefix(env.Key, "default/backups/lfs/") {
		t.Fatalf("envelope %s (%v)", out, err)
	}

	// kcat reads the record: key k1, the envelope as value.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	rec, err := exec.CommandContext(ctx, kcat, "-b", kafka, "-t", "backups", "-C", "-e", "-o", "beginning", "-f", "%k\t%s\n").Output()
	if err != nil {
		t.Fatalf("kcat: %v", err)
	}
	k, v, _ := strings.Cut(strings.TrimSpace(string(rec)), "\t")
	var got envelope
	if k != "k1" || json.Unmarshal([]byte(v), &got) != nil || got != env {
		t.Fatalf("kcat read %q", rec)
	}

	// Stream download, verified.
	code, body := lfsPost(t, base+"/lfs/download", nil, strings.NewReader(fmt.Sprintf(`{"bucket":"lfs","key":%q,"mode":"stream"}`, env.Key)))
	if code != 200 || !bytes.Equal(body, blob) {
		t.Fatalf("download: %d, %d bytes", code, len(body))
	}
	// Presigned URL to s3seal's own S3 API.
	code, body = lfsPost(t, base+"/lfs/download", nil, strings.NewReader(fmt.Sprintf(`{"bucket":"lfs","key":%q,"mode":"presign","expires_seconds":60}`, env.Key)))
	var pre struct {
		URL string `json:"url"`
	}
	if code != 200 || json.Unmarshal(body, &pre) != nil || !strings.HasPrefix(pre.URL, p.Endpoint+"/lfs/") {
		t.Fatalf("presign: %d %s", code, body)
	}
	resp, err := http.Get(pre.URL)
	if err != nil {
		t.Fatal(err)
	}
	fromS3, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !bytes.Equal(fromS3, blob) {
		t.Fatalf("presigned GET: %d, %d bytes", resp.StatusCode, len(fromS3))
	}
	// The store holds ciphertext: no file under the data dir contains the
	// blob's text.
	_ = filepath.Walk(filepath.Join(p.DataDir, "objects"), func(path string, info os.FileInfo, err error) error {
		if err == nil && !info.IsDir() {
			if b, _ := os.ReadFile(path); bytes.Contains(b, []byte("s3seal lfs blob s3seal lfs blob")) {
				t.Errorf("%s holds plaintext", path)
			}
		}
		return nil
	})
}

// TestLFSNoBroker: with the only listed broker down, a produce and an
// upload init answer 503 backend_unavailable and leave nothing in storage.
func TestLFSNoBroker(t *testing.T) {
	// The credential's lists name the LFS bucket, which LFS owns: it may
	// look in.
	creds := writeJSON(t, t.TempDir(), "creds.json", map[string]any{"credentials": []map[string]any{
		{"access_key": "ops", "secret_key": "ops-secret", "read": []string{"lfs"}, "write": []string{"lfs"}}}})
	p, base := startLFS(t, sealOpts{Args: []string{"--lfs-brokers", fmt.Sprintf("127.0.0.1:%d", freePort(t))},
		CredentialsFile: creds, AccessKey: "ops", SecretKey: "ops-secret"})
	code, body := lfsPost(t, base+"/lfs/produce", map[string]string{"X-Kafka-Topic": "t"}, strings.NewReader("blob"))
	if code != 503 || !strings.Contains(string(body), `"backend_unavailable"`) {
		t.Fatalf("produce: %d %s", code, body)
	}
	code, body = lfsPost(t, base+"/lfs/uploads", nil, strings.NewReader(`{"topic":"t","size_bytes":10}`))
	if code != 503 || !strings.Contains(string(body), `"backend_unavailable"`) {
		t.Fatalf("upload init: %d %s", code, body)
	}
	c := sdkFor(t, p)
	ctx := ctxT(t)
	objs, err := c.ListObjectsV2(ctx, &s3.ListObjectsV2Input{Bucket: aws.String("lfs")})
	if err != nil || len(objs.Contents) != 0 {
		t.Fatalf("objects: %+v, %v", objs.Contents, err)
	}
	ups, err := c.ListMultipartUploads(ctx, &s3.ListMultipartUploadsInput{Bucket: aws.String("lfs")})
	if err != nil || len(ups.Uploads) != 0 {
		t.Fatalf("uploads: %+v, %v", ups.Uploads, err)
	}
}

// TestLFSTwoReplicasShareASession: two s3seal processes on one backend
// (moto_server) and one Kafka serve one multipart session: init on A,
// parts on A and B out of order, completion on B; the record is in Kafka
// and the blob reads back through A.
func TestLFSTwoReplicasShareASession(t *testing.T) {
	moto := startMoto(t)
	kc, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(1, "events"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(kc.Close)
	args := []string{"--lfs-brokers", kc.ListenAddrs()[0]}
	a, baseA := startLFS(t, sealOpts{Backend: moto, Args: args})
	_, baseB := startLFS(t, sealOpts{Backend: moto, Key: a.Key, Args: args})

	parts := [][]byte{bytes.Repeat([]byte{1}, 16<<20), bytes.Repeat([]byte{2}, 16<<20), []byte("last")}
	whole := bytes.Join(parts, nil)
	code, body := lfsPost(t, baseA+"/lfs/uploads", nil, strings.NewReader(fmt.Sprintf(`{"topic":"events","content_type":"application/octet-stream","size_bytes":%d}`, len(whole))))
	var init struct {
		UploadID string `json:"upload_id"`
		PartSize int64  `json:"part_size"`
	}
	if code != 200 || json.Unmarshal(body, &init) != nil || init.UploadID == "" || init.PartSize != 16<<20 {
		t.Fatalf("init: %d %s", code, body)
	}
	type done struct {
		N    int    `json:"part_number"`
		ETag string `json:"etag"`
	}
	var etags []done
	for _, n := range []int{3, 1, 2} { // out of order, alternating replicas
		base := map[int]string{1: baseB, 2: baseA, 3: baseB}[n]
		req, _ := http.NewRequest(http.MethodPut, fmt.Sprintf("%s/lfs/uploads/%s/parts/%d", base, init.UploadID, n), bytes.NewReader(parts[n-1]))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		var d done
		if resp.StatusCode != 200 || json.Unmarshal(b, &d) != nil || d.N != n {
			t.Fatalf("part %d: %d %s", n, resp.StatusCode, b)
		}
		etags = append(etags, d)
	}
	cb, _ := json.Marshal(map[string]any{"parts": []map[string]any{{"part_number": 1, "etag": etags[1].ETag}, {"part_number": 2, "etag": etags[2].ETag}, {"part_number": 3, "etag": etags[0].ETag}}})
	code, body = lfsPost(t, baseB+"/lfs/uploads/"+init.UploadID+"/complete", nil, bytes.NewReader(cb))
	var env envelope
	sum := sha256.Sum256(whole)
	if code != 200 || json.Unmarshal(body, &env) != nil || env.SHA256 != hex.EncodeToString(sum[:]) {
		t.Fatalf("complete: %d %s", code, body)
	}
	code, got := lfsPost(t, baseA+"/lfs/download", nil, strings.NewReader(fmt.Sprintf(`{"bucket":"lfs","key":%q,"mode":"stream"}`, env.Key)))
	if code != 200 || !bytes.Equal(got, whole) {
		t.Fatalf("download through A: %d, %d bytes", code, len(got))
	}
}
