package e2e

import (
	"bytes"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
)

// s3cmdFor returns a runner of s3cmd configured (in dir, also its HOME)
// for p over plain HTTP with Signature V4.
func s3cmdFor(t *testing.T, p *sealProc, dir string) func(args ...string) string {
	cfg := writeFile(t, dir, "s3cfg", []byte(fmt.Sprintf(`[default]
access_key = %s
secret_key = %s
host_base = %s
host_bucket = %s
use_https = False
signature_v2 = False
bucket_location = us-east-1
check_ssl_certificate = False
`, p.AccessKey, p.SecretKey, p.Addr, p.Addr)))
	env := cleanEnv(nil, "HOME="+dir)
	return func(args ...string) string {
		t.Helper()
		return runTool(t, env, "s3cmd", append([]string{"-c", cfg, "--no-progress"}, args...)...)
	}
}

func TestS3cmd(t *testing.T) {
	t.Parallel()
	requireTool(t, "s3cmd")
	p := startS3seal(t, sealOpts{})
	dir := t.TempDir()
	s3cmd := s3cmdFor(t, p, dir)

	files := clientFixture()
	s3cmd("mb", "s3://s3cmdbkt")
	for name, data := range files {
		local := writeFile(t, dir, "src/"+name, data)
		s3cmd("put", "--disable-multipart", local, "s3://s3cmdbkt/"+name)
	}

	ls := s3cmd("ls", "--recursive", "s3://s3cmdbkt")
	for name, data := range files {
		want := fmt.Sprintf("%d s3://s3cmdbkt/%s", len(data), name)
		if !containsLineSuffix(ls, want) {
			t.Errorf("s3cmd ls: no line ending in %q:\n%s", want, ls)
		}
	}

	for name, data := range files {
		out := filepath.Join(dir, "dst", strings.ReplaceAll(name, "/", "_"))
		s3cmd("get", "--force", "s3://s3cmdbkt/"+name, out)
		if got := readFile(t, out); !bytes.Equal(got, data) {
			t.Errorf("s3cmd get %s: %d bytes, want %d identical", name, len(got), len(data))
		}
		info := s3cmd("info", "s3://s3cmdbkt/"+name)
		if !strings.Contains(info, md5Hex(data)) {
			t.Errorf("s3cmd info %s: no MD5 %s in\n%s", name, md5Hex(data), info)
		}
	}

	s3cmd("del", "s3://s3cmdbkt/small.txt")
	ls = s3cmd("ls", "--recursive", "s3://s3cmdbkt")
	if strings.Contains(ls, "small.txt") || !strings.Contains(ls, "seg.bin") {
		t.Errorf("s3cmd ls after del:\n%s", ls)
	}
}
