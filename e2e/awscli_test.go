package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
)

// awsCLI runs the aws CLI against one endpoint with private config files.
type awsCLI struct {
	t        *testing.T
	endpoint string
	env      []string
}

func newAWSCLI(t *testing.T, p *sealProc) *awsCLI {
	t.Helper()
	return newAWSCLIAs(t, p, p.AccessKey, p.SecretKey)
}

// newAWSCLIAs is newAWSCLI with the credential accessKey, secretKey.
func newAWSCLIAs(t *testing.T, p *sealProc, accessKey, secretKey string) *awsCLI {
	t.Helper()
	requireTool(t, "aws")
	dir := t.TempDir()
	config := writeFile(t, dir, "config", []byte(`[default]
region = us-east-1
output = json
s3 =
    multipart_threshold = 5GB
    addressing_style = path
`))
	creds := writeFile(t, dir, "credentials", []byte(fmt.Sprintf(
		"[default]\naws_access_key_id = %s\naws_secret_access_key = %s\n", accessKey, secretKey)))
	env := cleanEnv(nil,
		"AWS_CONFIG_FILE="+config,
		"AWS_SHARED_CREDENTIALS_FILE="+creds,
		"AWS_EC2_METADATA_DISABLED=true",
		"AWS_MAX_ATTEMPTS=1",
		"HOME="+dir,
	)
	return &awsCLI{t: t, endpoint: p.Endpoint, env: env}
}

func (a *awsCLI) run(args ...string) string {
	a.t.Helper()
	return runTool(a.t, a.env, "aws", append([]string{"--endpoint-url", a.endpoint}, args...)...)
}

// fails runs the aws CLI expecting it to fail with an error naming code;
// it returns the error text.
func (a *awsCLI) fails(code string, args ...string) string {
	a.t.Helper()
	out, errOut, err := tryTool(a.t, a.env, "aws", append([]string{"--endpoint-url", a.endpoint}, args...)...)
	if err == nil || !strings.Contains(errOut, "("+code+")") {
		a.t.Fatalf("aws %s: %v, want an error %s\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), err, code, out, errOut)
	}
	return errOut
}

func TestAWSCLI(t *testing.T) {
	t.Parallel()
	p := startS3seal(t, sealOpts{Args: []string{"--log-level", "debug"}})
	a := newAWSCLI(t, p)
	src := t.TempDir()
	files := clientFixture()
	for name, data := range files {
		writeFile(t, src, name, data)
	}

	a.run("s3", "mb", "s3://clibkt")
	a.run("s3", "cp", "--recursive", "--no-progress", src, "s3://clibkt/up/")
	a.run("s3", "cp", "--no-progress", filepath.Join(src, "small.txt"), "s3://clibkt/single.txt")
	ls := a.run("s3", "ls", "--recursive", "s3://clibkt/up/")
	for name, data := range files {
		want := fmt.Sprintf("%d up/%s", len(data), name)
		if !containsLineSuffix(ls, want) {
			t.Errorf("aws s3 ls: no line ending in %q:\n%s", want, ls)
		}
	}

	dst := t.TempDir()
	a.run("s3", "cp", "--recursive", "--no-progress", "s3://clibkt/up/", dst)
	for name, data := range files {
		if got := readFile(t, filepath.Join(dst, filepath.FromSlash(name))); !bytes.Equal(got, data) {
			t.Errorf("aws s3 cp down %s: %d bytes, want %d identical", name, len(got), len(data))
		}
	}
	a.run("s3", "cp", "--no-progress", "s3://clibkt/single.txt", filepath.Join(dst, "single.txt"))
	if got := readFile(t, filepath.Join(dst, "single.txt")); !bytes.Equal(got, files["small.txt"]) {
		t.Errorf("aws s3 cp down single.txt: %q", got)
	}

	for _, name := range []string{"empty.txt", "seg.bin", "sub/deep/big.bin"} {
		data := files[name]
		var head struct {
			ETag          string
			ContentLength int64
		}
		if err := json.Unmarshal([]byte(a.run("s3api", "head-object", "--bucket", "clibkt", "--key", "up/"+name)), &head); err != nil {
			t.Fatalf("head-object JSON: %v", err)
		}
		if strings.Trim(head.ETag, `"`) != md5Hex(data) || head.ContentLength != int64(len(data)) {
			t.Errorf("head-object %s: ETag %s size %d, want %s %d", name, head.ETag, head.ContentLength, md5Hex(data), len(data))
		}
	}

	big := files["sub/deep/big.bin"]
	for _, r := range []struct {
		spec       string
		start, end int
	}{
		{"bytes=100-199", 100, 199},
		{"bytes=65500-131100", 65500, 131100},
		{"bytes=-1000", len(big) - 1000, len(big) - 1},
	} {
		out := filepath.Join(dst, "range.out")
		resp := a.run("s3api", "get-object", "--bucket", "clibkt", "--key", "up/sub/deep/big.bin", "--range", r.spec, out)
		if got := readFile(t, out); !bytes.Equal(got, big[r.start:r.end+1]) {
			t.Errorf("get-object --range %s: %d bytes, want %d identical", r.spec, len(got), r.end-r.start+1)
		}
		wantCR := fmt.Sprintf("bytes %d-%d/%d", r.start, r.end, len(big))
		if !strings.Contains(resp, wantCR) {
			t.Errorf("get-object --range %s: response lacks ContentRange %q:\n%s", r.spec, wantCR, resp)
		}
	}

	a.run("s3", "rm", "s3://clibkt/up/small.txt")
	a.run("s3", "rm", "--recursive", "s3://clibkt/up/sub/")
	ls = a.run("s3", "ls", "--recursive", "s3://clibkt/")
	if strings.Contains(ls, "small.txt") || strings.Contains(ls, "up/sub/") || !strings.Contains(ls, "up/seg.bin") {
		t.Errorf("aws s3 ls after rm:\n%s", ls)
	}
	if _, stderr, err := tryTool(t, a.env, "aws", "--endpoint-url", a.endpoint, "s3api", "head-object", "--bucket", "clibkt", "--key", "up/small.txt"); err == nil || !strings.Contains(stderr, "404") {
		t.Errorf("head-object of removed key: err %v, stderr %s", err, stderr)
	}
}

// containsLineSuffix reports whether some line of out ends with suffix
// after trimming spaces (aws s3 ls pads sizes).
func containsLineSuffix(out, suffix string) bool {
	for _, line := range strings.Split(out, "\n") {
		f := strings.Fields(line)
		if len(f) >= 2 && strings.Join(f[len(f)-2:], " ") == suffix {
			return true
		}
	}
	return false
}

// TestAWSCLIEmptyThenBodyOnOneConnection: botocore sends "Expect:
// 100-continue" with every PutObject. If an empty PUT is answered without a
// "100 Continue" on a connection that stays open, botocore keeps that early
// answer's status line and mis-reads the next answer on the connection: the
// next upload hangs until its read timeout. One request at a time makes the
// CLI reuse the connection, so this fails every time on such a server.
func TestAWSCLIEmptyThenBodyOnOneConnection(t *testing.T) {
	t.Parallel()
	p := startS3seal(t, sealOpts{})
	a := newAWSCLI(t, p)
	cfg := writeFile(t, t.TempDir(), "config", []byte("[default]\nregion = us-east-1\ns3 =\n    max_concurrent_requests = 1\n    multipart_threshold = 5GB\n    addressing_style = path\n"))
	a.env = append(a.env, "AWS_CONFIG_FILE="+cfg)
	src := t.TempDir()
	writeFile(t, src, "a-empty.txt", nil)
	writeFile(t, src, "b-body.bin", bytes.Repeat([]byte("x"), 200001))
	a.run("s3", "mb", "s3://onecon")
	// A 5 s read timeout with retries off turns the hang into a failure.
	a.run("--cli-read-timeout", "5", "s3", "cp", "--recursive", "--no-progress", src, "s3://onecon/")
	ls := a.run("s3", "ls", "s3://onecon/")
	if !strings.Contains(ls, "200001 b-body.bin") || !strings.Contains(ls, "0 a-empty.txt") {
		t.Fatalf("listing after upload:\n%s", ls)
	}
}

// newAWSCLIMultipart is newAWSCLI whose s3 commands upload files above
// 8 MiB as multipart uploads of 5 MiB parts.
func newAWSCLIMultipart(t *testing.T, p *sealProc) *awsCLI {
	t.Helper()
	a := newAWSCLI(t, p)
	config := writeFile(t, t.TempDir(), "config", []byte("[default]\nregion = us-east-1\noutput = json\ns3 =\n"+
		"    multipart_threshold = 8MB\n    multipart_chunksize = 5MB\n    addressing_style = path\n"))
	a.env = append(a.env, "AWS_CONFIG_FILE="+config)
	return a
}
