package e2e

import (
	"bytes"
	"encoding/json"
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
// CopyObject of that multipart copy, then a delete) read back byte for
// byte. Over the embedded store the store makes every one of them
// (s3seal_copies_total by made_by); moto ignores
// x-amz-copy-source-if-match, which a store copy relies on, so there
// s3seal reads and seals each source again, and says so in its log.
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
		t.Logf("s3seal's own I/O for the copies: %d bytes", procIO(t, p.PID())-before)
		copies := metricSums(soakGet(t, p.Endpoint+"/metrics"), "s3seal_copies_total", "made_by")
		want := "store"
		if o.Backend != nil {
			want = "s3seal"
			if !strings.Contains(p.Log(), "ignores x-amz-copy-source-if-match") {
				t.Error("s3seal did not say why its copies over moto read their source")
			}
		}
		// 6 parts by the aws CLI, one object by copy-object, one by rclone.
		if copies[want] != 8 || len(copies) != 1 {
			t.Errorf("copies made: %v, want 8 made by the %s", copies, want)
		}

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
// the store makes"), done to the embedded store's files while s3seal is
// stopped, as a provider would to its disks: serving the source's bytes
// under the copy's envelope gives the same bytes; the source's sealed
// metadata on the copy, or bytes written since under the source's name,
// fail the read.
func TestStoreSwappingCopyAndSource(t *testing.T) {
	t.Parallel()
	p := startS3seal(t, sealOpts{})
	dataDir := p.DataDir
	c := sdkFor(t, p)
	ctx := ctxT(t)
	data := bytes.Repeat([]byte("copied by the store "), 10000)
	put := func(c *s3.Client, key string) {
		t.Helper()
		if _, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("swaps"), Key: aws.String(key), Body: bytes.NewReader(data)}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := c.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String("swaps")}); err != nil {
		t.Fatal(err)
	}
	put(c, "src")
	if _, err := c.CopyObject(ctx, &s3.CopyObjectInput{Bucket: aws.String("swaps"), Key: aws.String("dst"), CopySource: aws.String("swaps/src"),
		MetadataDirective: "REPLACE", Metadata: map[string]string{"label": "copy"}}); err != nil {
		t.Fatal(err)
	}
	if n := metricSums(soakGet(t, p.Endpoint+"/metrics"), "s3seal_copies_total", "made_by")["store"]; n != 1 {
		t.Fatalf("the copy was not made by the store (%v)", n)
	}
	p.Stop()

	objects := filepath.Join(dataDir, "objects")
	body := func(key string) string { return filepath.Join(objects, "buckets", "swaps", key) }
	metaFile := func(key string) string {
		t.Helper()
		m, _ := filepath.Glob(filepath.Join(objects, "metadata", "swaps", key+"-*"))
		if len(m) != 1 {
			t.Fatalf("metadata files of %s: %v", key, m)
		}
		return m[0]
	}
	readMeta := func(key string) map[string]json.RawMessage {
		t.Helper()
		var m map[string]json.RawMessage
		if err := json.Unmarshal(readFile(t, metaFile(key)), &m); err != nil {
			t.Fatal(err)
		}
		return m
	}
	writeMeta := func(key string, m map[string]json.RawMessage) {
		t.Helper()
		b, _ := json.Marshal(m)
		if err := os.WriteFile(metaFile(key), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	srcBody, dstBody, dstMeta := readFile(t, body("src")), readFile(t, body("dst")), readMeta("dst")
	if !bytes.Equal(srcBody, dstBody) {
		t.Fatal("the store's copy is not the source's ciphertext")
	}
	read := func(what string, wantOK bool) {
		t.Helper()
		p := startS3seal(t, sealOpts{DataDir: dataDir})
		defer p.Stop()
		out, err := sdkFor(t, p).GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String("swaps"), Key: aws.String("dst")})
		var got []byte
		if err == nil {
			got, err = io.ReadAll(out.Body)
			out.Body.Close()
		}
		switch {
		case wantOK && (err != nil || !bytes.Equal(got, data)):
			t.Errorf("%s: %v, %d bytes; want the copy's bytes", what, err, len(got))
		case !wantOK && err == nil:
			t.Errorf("%s: read %d bytes; want the read refused", what, len(got))
		}
	}

	if err := os.WriteFile(body("dst"), srcBody, 0o644); err != nil {
		t.Fatal(err)
	}
	read("the source's bytes under the copy's envelope", true)

	var srcMetas, dstMetas map[string]string
	json.Unmarshal(readMeta("src")["Meta"], &srcMetas)
	json.Unmarshal(dstMeta["Meta"], &dstMetas)
	dstMetas["X-Amz-Meta-S3seal-Meta"] = srcMetas["X-Amz-Meta-S3seal-Meta"]
	swapped := map[string]json.RawMessage{}
	for k, v := range dstMeta {
		swapped[k] = v
	}
	swapped["Meta"], _ = json.Marshal(dstMetas)
	writeMeta("dst", swapped)
	read("the source's sealed metadata on the copy", false)
	writeMeta("dst", dstMeta)

	p2 := startS3seal(t, sealOpts{DataDir: dataDir})
	put(sdkFor(t, p2), "src") // the same bytes written again: another data key
	p2.Stop()
	if err := os.WriteFile(body("dst"), readFile(t, body("src")), 0o644); err != nil {
		t.Fatal(err)
	}
	read("bytes written since under the source's name", false)
}
