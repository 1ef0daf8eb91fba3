package e2e

import (
	"bytes"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
)

// procIO is the bytes a process read and wrote through system calls
// (/proc/PID/io rchar + wchar): sockets, files and pipes alike.
func procIO(t *testing.T, pid int) int64 {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/io", pid))
	if err != nil {
		t.Skipf("no /proc/PID/io: %v", err)
	}
	var n int64
	for _, line := range strings.Split(string(b), "\n") {
		k, v, _ := strings.Cut(line, ": ")
		if k == "rchar" || k == "wchar" {
			x, _ := strconv.ParseInt(v, 10, 64)
			n += x
		}
	}
	return n
}

// awsCLIMultipart is the aws CLI with its default 8 MiB multipart threshold
// and part size: large uploads and copies go in 8 MiB parts, a copy of a
// large object as UploadPartCopy of 8 MiB ranges.
func awsCLIMultipart(t *testing.T, p *sealProc) *awsCLI {
	a := newAWSCLI(t, p)
	config := writeFile(t, t.TempDir(), "config", []byte("[default]\nregion = us-east-1\noutput = json\ns3 =\n    addressing_style = path\n"))
	for i, kv := range a.env {
		if strings.HasPrefix(kv, "AWS_CONFIG_FILE=") {
			a.env[i] = "AWS_CONFIG_FILE=" + config
		}
	}
	return a
}

// Server-side copies by the aws CLI (a multipart object: UploadPartCopy of
// its 8 MiB parts; a single object: CopyObject) and rclone's moveto (a
// CopyObject of that multipart copy, then a delete) are made by the store: they read back byte for byte, and over moto (a store
// in another process) s3seal itself reads and writes less than 2 MiB for
// copies of 40 MiB.
func TestServerSideCopiesMoveNoBytes(t *testing.T) {
	t.Parallel()
	requireRclone(t)
	onEachStoreOpts(t, func(t *testing.T, o sealOpts) {
		p := startS3seal(t, o)
		a := awsCLIMultipart(t, p)
		dir := t.TempDir()
		big := make([]byte, 40<<20+12345)
		rnd := rand.NewChaCha8([32]byte{7})
		rnd.Read(big)
		single := big[:3<<20+7]
		writeFile(t, dir, "big", big)
		writeFile(t, dir, "single", single)
		a.run("s3", "mb", "s3://copies")
		a.run("s3", "cp", "--no-progress", filepath.Join(dir, "big"), "s3://copies/big")
		a.run("s3api", "put-object", "--bucket", "copies", "--key", "single", "--body", filepath.Join(dir, "single"))

		before := procIO(t, p.PID())
		a.run("s3", "cp", "--no-progress", "s3://copies/big", "s3://copies/big-copy")
		a.run("s3api", "copy-object", "--bucket", "copies", "--key", "single-copy", "--copy-source", "copies/single",
			"--metadata-directive", "REPLACE", "--content-type", "text/x-copied", "--metadata", "note=copied")
		env := rcloneEnv(t, p)
		runTool(t, env, rcloneBin, "--retries", "1", "moveto", "s3seal:copies/big-copy", "s3seal:copies/moved")
		moved := procIO(t, p.PID()) - before
		if o.Backend != nil && moved > 2<<20 {
			t.Errorf("s3seal read and wrote %d bytes for three copies of %d bytes", moved, len(big)+2*len(single))
		}
		t.Logf("s3seal's own I/O for the copies: %d bytes", moved)

		for key, want := range map[string][]byte{"moved": big, "single-copy": single} {
			out := filepath.Join(dir, key+".out")
			a.run("s3", "cp", "--no-progress", "s3://copies/"+key, out)
			if got := readFile(t, out); !bytes.Equal(got, want) {
				t.Errorf("%s read back %d bytes, want %d identical", key, len(got), len(want))
			}
		}
		head := a.run("s3api", "head-object", "--bucket", "copies", "--key", "single-copy")
		if !strings.Contains(head, `"ContentType": "text/x-copied"`) || !strings.Contains(head, `"note": "copied"`) || !strings.Contains(head, md5Hex(single)) {
			t.Errorf("head-object of the copy:\n%s", head)
		}
		if _, _, err := tryTool(t, a.env, "aws", "--endpoint-url", a.endpoint, "s3api", "head-object", "--bucket", "copies", "--key", "big-copy"); err == nil {
			t.Error("rclone moveto left its source")
		}
	})
}

// What the store can do with a copy and its source (docs/FORMAT.md, "Copies
// the store makes"): serving the source's bytes under the copy's envelope
// gives the same bytes; serving the source's sealed metadata, or bytes
// written since under the source's name, fails the read.
func TestStoreSwappingCopyAndSource(t *testing.T) {
	t.Parallel()
	m := startMoto(t)
	p := startS3seal(t, sealOpts{Backend: m})
	c, store := sdkFor(t, p), motoClient(t, m)
	ctx := ctxT(t)
	data := bytes.Repeat([]byte("copied by the store "), 10000)
	put := func(key string, body []byte) {
		t.Helper()
		if _, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("swaps"), Key: aws.String(key), Body: bytes.NewReader(body)}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := c.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String("swaps")}); err != nil {
		t.Fatal(err)
	}
	put("src", data)
	if _, err := c.CopyObject(ctx, &s3.CopyObjectInput{Bucket: aws.String("swaps"), Key: aws.String("dst"), CopySource: aws.String("swaps/src"),
		MetadataDirective: "REPLACE", Metadata: map[string]string{"label": "copy"}}); err != nil {
		t.Fatal(err)
	}
	raw := func(key string) ([]byte, map[string]string) {
		t.Helper()
		out, err := store.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String("swaps"), Key: aws.String(key)})
		if err != nil {
			t.Fatal(err)
		}
		defer out.Body.Close()
		b, _ := io.ReadAll(out.Body)
		return b, out.Metadata
	}
	rewrite := func(body []byte, meta map[string]string) {
		t.Helper()
		if _, err := store.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("swaps"), Key: aws.String("dst"), Body: bytes.NewReader(body), Metadata: meta}); err != nil {
			t.Fatal(err)
		}
	}
	read := func() ([]byte, error) {
		out, err := c.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String("swaps"), Key: aws.String("dst")})
		if err != nil {
			return nil, err
		}
		defer out.Body.Close()
		return io.ReadAll(out.Body)
	}
	srcBody, srcMeta := raw("src")
	dstBody, dstMeta := raw("dst")
	if !bytes.Equal(srcBody, dstBody) {
		t.Fatal("the store's copy is not the source's ciphertext")
	}
	rewrite(srcBody, dstMeta)
	if got, err := read(); err != nil || !bytes.Equal(got, data) {
		t.Errorf("the source's bytes under the copy's envelope: %v", err)
	}
	swapped := map[string]string{}
	for k, v := range dstMeta {
		swapped[k] = v
	}
	swapped["s3seal-meta"] = srcMeta["s3seal-meta"]
	rewrite(dstBody, swapped)
	if got, err := read(); err == nil {
		t.Errorf("the source's sealed metadata on the copy read back %d bytes", len(got))
	}
	put("src", data) // the same bytes written again: another data key
	newBody, _ := raw("src")
	rewrite(newBody, dstMeta)
	if got, err := read(); err == nil {
		t.Errorf("bytes written since under the source's name read back as the copy (%d bytes)", len(got))
	}
}
