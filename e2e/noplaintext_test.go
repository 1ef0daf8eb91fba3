package e2e

import (
	"bytes"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
)

const (
	segPlain    = 65536
	segOverhead = 28 // 12-byte nonce + 16-byte GCM tag
	segCipher   = segPlain + segOverhead
)

// cipherSize is the format's stored size for p plaintext bytes (FORMAT.md).
func cipherSize(p int) int {
	segs := max(1, (p+segPlain-1)/segPlain)
	return p + segOverhead*segs
}

// canary is plaintext that must never be found in the backend or on disk.
func canary(n int) []byte {
	const word = "S3SEAL-CANARY-PLAINTEXT-must-never-reach-the-store|"
	return bytes.Repeat([]byte(word), n/len(word)+1)[:n]
}

// containsPlaintext reports whether stored holds any 24-byte window of plain.
func containsPlaintext(stored, plain []byte) bool {
	const w = 24
	if len(plain) < w {
		return len(plain) > 0 && bytes.Contains(stored, plain)
	}
	for i := 0; i+w <= len(plain); i += w / 2 {
		if bytes.Contains(stored, plain[i:i+w]) {
			return true
		}
	}
	return false
}

// rawObject reads an object from moto directly: bytes and user metadata.
func rawObject(t *testing.T, b *s3.Client, bucket, key string) ([]byte, map[string]string, *s3.GetObjectOutput) {
	t.Helper()
	out, err := b.GetObject(ctxT(t), &s3.GetObjectInput{Bucket: aws.String(bucket), Key: aws.String(key)})
	if err != nil {
		t.Fatalf("backend GET %s/%s: %v", bucket, key, err)
	}
	defer out.Body.Close()
	data, err := io.ReadAll(out.Body)
	if err != nil {
		t.Fatalf("backend GET %s/%s body: %v", bucket, key, err)
	}
	meta := map[string]string{}
	for k, v := range out.Metadata {
		meta[strings.ToLower(k)] = v
	}
	return data, meta, out
}

func TestNoPlaintextInBackend(t *testing.T) {
	t.Parallel()
	m := startMoto(t)
	p := startS3seal(t, sealOpts{Backend: m})
	c, b := sdkFor(t, p), motoClient(t, m)
	mustCreateBucket(t, c, "noplain")

	for _, n := range []int{0, 30, 65536, 3*65536 + 777} {
		key := "canary-" + strconv.Itoa(n)
		plain := canary(n)
		_, err := c.PutObject(ctxT(t), &s3.PutObjectInput{
			Bucket: aws.String("noplain"), Key: aws.String(key), Body: bytes.NewReader(plain),
			ContentType: aws.String("text/x-canary"), Metadata: map[string]string{"visible": "yes"},
		})
		if err != nil {
			t.Fatalf("PUT %s: %v", key, err)
		}
		stored, meta, out := rawObject(t, b, "noplain", key)
		if containsPlaintext(stored, plain) {
			t.Errorf("%s: backend object contains plaintext", key)
		}
		if len(stored) != cipherSize(n) {
			t.Errorf("%s: backend size %d, want cipherSize(%d) = %d", key, len(stored), n, cipherSize(n))
		}
		if unquote(out.ETag) == md5Hex(plain) {
			t.Errorf("%s: backend ETag is the plaintext MD5", key)
		}
		want := map[string]func(string) bool{
			"s3seal-v":    func(v string) bool { return v == "2" },
			"s3seal-kid":  func(v string) bool { return v != "" },
			"s3seal-oid":  func(v string) bool { return len(v) == 22 },
			"s3seal-dek":  func(v string) bool { return len(v) > 80 }, // DEK, sealed MD5 and checksum
			"s3seal-size": func(v string) bool { return v == strconv.Itoa(n) },
			"s3seal-meta": func(v string) bool { return len(v) > 40 }, // the sealed user metadata
			"visible":     func(v string) bool { return v == "" },     // sealed in s3seal-meta
		}
		// Nothing in the clear fingerprints the plaintext: no MD5, no checksum.
		for k, v := range meta {
			if strings.Contains(strings.ToLower(v), md5Hex(plain)) || strings.HasPrefix(k, "s3seal-md5") || strings.HasPrefix(k, "s3seal-checksum") {
				t.Errorf("%s: backend metadata %s = %q fingerprints the plaintext", key, k, v)
			}
		}
		for k, ok := range want {
			if !ok(meta[k]) {
				t.Errorf("%s: backend metadata %s = %q (all: %v)", key, k, meta[k], meta)
			}
		}
		if got := getObj(t, c, "noplain", key); !bytes.Equal(got, plain) {
			t.Errorf("%s: GET through s3seal differs", key)
		}
	}

	// The backend's listing shows ciphertext sizes, s3seal's plaintext sizes.
	lb, err := b.ListObjectsV2(ctxT(t), &s3.ListObjectsV2Input{Bucket: aws.String("noplain")})
	if err != nil {
		t.Fatalf("backend list: %v", err)
	}
	for _, o := range lb.Contents {
		if strings.HasPrefix(aws.ToString(o.Key), ".s3seal/") {
			continue // s3seal's own sealed objects (the bucket's owner document)
		}
		n, _ := strconv.Atoi(strings.TrimPrefix(aws.ToString(o.Key), "canary-"))
		if aws.ToInt64(o.Size) != int64(cipherSize(n)) {
			t.Errorf("backend lists %s with size %d, want %d", aws.ToString(o.Key), aws.ToInt64(o.Size), cipherSize(n))
		}
	}
}

func TestNoPlaintextInDataDir(t *testing.T) {
	t.Parallel()
	p, c := startWithBucket(t, sealOpts{}, mustCreateBucket, "noplain")
	plain := canary(200000)
	putObj(t, c, "noplain", "canary", plain)
	putObj(t, c, "noplain", "small", canary(40))
	if got := getObj(t, c, "noplain", "canary"); !bytes.Equal(got, plain) {
		t.Fatalf("GET canary differs")
	}
	var files int
	err := filepath.WalkDir(p.DataDir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		files++
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if containsPlaintext(data, plain) {
			t.Errorf("plaintext found in %s", path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if files == 0 {
		t.Errorf("no files under %s: where are the objects?", p.DataDir)
	}
}

// TestLegacyPlaintextPassthrough: with --allow-plaintext-reads an object
// written around s3seal (no s3seal metadata) is served unchanged, and every
// read of it is logged at WARN with bucket and key.
func TestLegacyPlaintextPassthrough(t *testing.T) {
	t.Parallel()
	m := startMoto(t)
	p := startS3seal(t, sealOpts{Backend: m, Args: []string{"--allow-plaintext-reads"}})
	c, b := sdkFor(t, p), motoClient(t, m)
	mustCreateBucket(t, c, "legacy")
	plain := patternBytes(77, 150000)
	_, err := b.PutObject(ctxT(t), &s3.PutObjectInput{
		Bucket: aws.String("legacy"), Key: aws.String("old"), Body: bytes.NewReader(plain),
		ContentType: aws.String("application/x-old"), Metadata: map[string]string{"era": "before"},
	})
	if err != nil {
		t.Fatalf("backend PUT: %v", err)
	}
	if got := getObj(t, c, "legacy", "old"); !bytes.Equal(got, plain) {
		t.Errorf("legacy GET through s3seal: %d bytes differ", len(got))
	}
	h, err := c.HeadObject(ctxT(t), &s3.HeadObjectInput{Bucket: aws.String("legacy"), Key: aws.String("old")})
	if err != nil {
		t.Fatalf("legacy HEAD: %v", err)
	}
	if aws.ToInt64(h.ContentLength) != int64(len(plain)) || unquote(h.ETag) != md5Hex(plain) ||
		h.Metadata["era"] != "before" || aws.ToString(h.ContentType) != "application/x-old" {
		t.Errorf("legacy HEAD: size %d ETag %s meta %v type %q", aws.ToInt64(h.ContentLength), unquote(h.ETag), h.Metadata, aws.ToString(h.ContentType))
	}
	out, err := c.GetObject(ctxT(t), &s3.GetObjectInput{Bucket: aws.String("legacy"), Key: aws.String("old"), Range: aws.String("bytes=65000-70000")})
	if err != nil {
		t.Fatalf("legacy range GET: %v", err)
	}
	got, _ := io.ReadAll(out.Body)
	out.Body.Close()
	if !bytes.Equal(got, plain[65000:70001]) {
		t.Errorf("legacy range GET: %d bytes differ", len(got))
	}
	// The log reaches us through a pipe: give it a moment.
	warns := func() int { return countLines(p.Log(), "level=WARN", "bucket=legacy", "key=old") }
	for deadline := time.Now().Add(5 * time.Second); warns() < 2 && time.Now().Before(deadline); {
		time.Sleep(20 * time.Millisecond)
	}
	// (At least: a client may retry a GET. sealstore's tests count exactly.)
	if n := warns(); n < 2 {
		t.Errorf("%d WARN lines naming legacy/old for two GETs; log:\n%s", n, p.Log())
	}
	// A listing shows its real size and ETag.
	if e := listedEntry(t, c, "legacy", "old"); aws.ToInt64(e.Size) != int64(len(plain)) || unquote(e.ETag) != md5Hex(plain) {
		t.Errorf("legacy object listed as %d %s", aws.ToInt64(e.Size), unquote(e.ETag))
	}
	// A new write to the same key is encrypted.
	putObj(t, c, "legacy", "old", plain)
	stored, meta, _ := rawObject(t, b, "legacy", "old")
	if containsPlaintext(stored, plain) || meta["s3seal-v"] != "2" {
		t.Errorf("rewrite of a legacy key is not encrypted (s3seal-v=%q)", meta["s3seal-v"])
	}
}

// TestPlaintextRefusedByDefault: without --allow-plaintext-reads an object
// without s3seal metadata (whatever the provider chose to store) is refused
// by GET, HEAD and as a copy source, with 403 InvalidObjectState naming
// the flag (the aws CLI shows it at once, without retrying); a listing shows
// it with the backend's size and an ETag marked unverified, and it can be
// deleted.
func TestPlaintextRefusedByDefault(t *testing.T) {
	t.Parallel()
	m := startMoto(t)
	p := startS3seal(t, sealOpts{Backend: m})
	c, b := sdkFor(t, p), motoClient(t, m)
	mustCreateBucket(t, c, "strict")
	chosen := []byte("content the provider chose")
	putRaw(t, b, "strict", "bare", chosen, nil)
	_, _, raw := rawObject(t, b, "strict", "bare")

	_, err := c.GetObject(ctxT(t), &s3.GetObjectInput{Bucket: aws.String("strict"), Key: aws.String("bare")})
	wantStatus(t, "GET", err, 403, "InvalidObjectState")
	if !strings.Contains(err.Error(), "--allow-plaintext-reads") {
		t.Errorf("GET: %v, want the message to name --allow-plaintext-reads", err)
	}
	_, err = c.GetObject(ctxT(t), &s3.GetObjectInput{Bucket: aws.String("strict"), Key: aws.String("bare"), Range: aws.String("bytes=0-3")})
	wantStatus(t, "range GET", err, 403, "InvalidObjectState")
	_, err = c.HeadObject(ctxT(t), &s3.HeadObjectInput{Bucket: aws.String("strict"), Key: aws.String("bare")})
	wantStatus(t, "HEAD", err, 403, "")
	_, err = c.CopyObject(ctxT(t), &s3.CopyObjectInput{Bucket: aws.String("strict"), Key: aws.String("sealed"), CopySource: aws.String("strict/bare")})
	wantStatus(t, "CopyObject", err, 403, "InvalidObjectState")
	if _, err := b.HeadObject(ctxT(t), &s3.HeadObjectInput{Bucket: aws.String("strict"), Key: aws.String("sealed")}); err == nil {
		t.Error("a refused copy sealed the provider's content")
	}

	// The aws CLI, with its default retries, fails at once and shows why
	// and the flag (a 500 was retried four times, 8 s, and showed
	// "Internal Server Error").
	cli := newAWSCLI(t, p)
	env := cli.env[:0:0]
	for _, kv := range cli.env {
		if !strings.HasPrefix(kv, "AWS_MAX_ATTEMPTS=") { // the CLI's own retries
			env = append(env, kv)
		}
	}
	cli.env = env
	const refusedGET = "method=GET path=/strict/bare code=InvalidObjectState"
	before := strings.Count(p.Log(), refusedGET)
	errOut := cli.fails("InvalidObjectState", "s3api", "get-object", "--bucket", "strict", "--key", "bare", filepath.Join(t.TempDir(), "out"))
	// One GET reached s3seal: the CLI did not retry it (its log line may
	// trail the answer by a moment).
	deadline := time.Now().Add(10 * time.Second)
	for strings.Count(p.Log(), refusedGET) == before && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	if n := strings.Count(p.Log(), refusedGET) - before; n != 1 || strings.Contains(errOut, "retries") {
		t.Errorf("aws get-object sent %d GETs, want 1 (not retried):\n%s", n, errOut)
	}
	for _, want := range []string{"not encrypted by s3seal", "--allow-plaintext-reads"} {
		if !strings.Contains(errOut, want) {
			t.Errorf("aws get-object said %q, want it to contain %q", errOut, want)
		}
	}

	e := listedEntry(t, c, "strict", "bare")
	if want := "s3seal-unverified-" + unquote(raw.ETag); unquote(e.ETag) != want || aws.ToInt64(e.Size) != int64(len(chosen)) {
		t.Errorf("listed as %d %s, want %d %s", aws.ToInt64(e.Size), unquote(e.ETag), len(chosen), want)
	}
	if _, err := c.DeleteObject(ctxT(t), &s3.DeleteObjectInput{Bucket: aws.String("strict"), Key: aws.String("bare")}); err != nil {
		t.Fatalf("DELETE: %v", err)
	}
	if _, err := b.HeadObject(ctxT(t), &s3.HeadObjectInput{Bucket: aws.String("strict"), Key: aws.String("bare")}); err == nil {
		t.Error("refused object still on the backend after DELETE")
	}
}

// listedEntry lists bucket through s3seal and returns key's entry.
func listedEntry(t *testing.T, c *s3.Client, bucket, key string) types.Object {
	t.Helper()
	out, err := c.ListObjectsV2(ctxT(t), &s3.ListObjectsV2Input{Bucket: aws.String(bucket), Prefix: aws.String(key)})
	if err != nil {
		t.Fatalf("list %s: %v", bucket, err)
	}
	for _, o := range out.Contents {
		if aws.ToString(o.Key) == key {
			return o
		}
	}
	t.Fatalf("%s/%s not listed", bucket, key)
	return types.Object{}
}

// countLines counts the lines of log that contain every one of parts.
func countLines(log string, parts ...string) int {
	n := 0
	for _, l := range strings.Split(log, "\n") {
		all := true
		for _, p := range parts {
			all = all && strings.Contains(l, p)
		}
		if all {
			n++
		}
	}
	return n
}
