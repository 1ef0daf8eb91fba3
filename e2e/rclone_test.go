package e2e

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// rcloneBin is Debian's rclone 1.60 (aws-sdk-go v1).
const rcloneBin = "/usr/bin/rclone"

// rcloneEnv configures the remote "s3seal:" through environment variables.
// AWS_CA_BUNDLE is removed: rclone 1.60 refuses to start with it set.
func rcloneEnv(t *testing.T, p *sealProc) []string {
	t.Helper()
	return cleanEnv([]string{"AWS_CA_BUNDLE"},
		"RCLONE_CONFIG="+filepath.Join(t.TempDir(), "rclone.conf"),
		"RCLONE_CONFIG_S3SEAL_TYPE=s3",
		"RCLONE_CONFIG_S3SEAL_PROVIDER=Other",
		"RCLONE_CONFIG_S3SEAL_ENDPOINT="+p.Endpoint,
		"RCLONE_CONFIG_S3SEAL_ACCESS_KEY_ID="+p.AccessKey,
		"RCLONE_CONFIG_S3SEAL_SECRET_ACCESS_KEY="+p.SecretKey,
		"RCLONE_CONFIG_S3SEAL_REGION=us-east-1",
		"RCLONE_CONFIG_S3SEAL_FORCE_PATH_STYLE=true",
		"RCLONE_CONFIG_S3SEAL_UPLOAD_CUTOFF=5G",
		"HOME="+t.TempDir(),
	)
}

func TestRclone(t *testing.T) {
	t.Parallel()
	requireRclone(t)
	p := startS3seal(t, sealOpts{})
	env := rcloneEnv(t, p)
	rc := func(args ...string) string {
		t.Helper()
		return runTool(t, env, rcloneBin, append([]string{"--retries", "1", "--low-level-retries", "1", "--s3-upload-cutoff", "5G"}, args...)...)
	}

	src := t.TempDir()
	files := clientFixture()
	for name, data := range files {
		writeFile(t, src, name, data)
	}

	rc("mkdir", "s3seal:rclonebkt")
	rc("copy", src, "s3seal:rclonebkt/dir")

	// check compares sizes and MD5 (ETag) of every file.
	out, errOut, err := tryTool(t, env, rcloneBin, "check", src, "s3seal:rclonebkt/dir")
	if err != nil {
		t.Fatalf("rclone check failed: %v\n%s%s", err, out, errOut)
	}
	all := out + errOut
	if !strings.Contains(all, fmt.Sprintf("%d matching files", len(files))) || !strings.Contains(all, "0 differences found") {
		t.Errorf("rclone check output:\n%s", all)
	}
	if strings.Contains(all, "No common hash") || strings.Contains(all, "no hashes in common") {
		t.Errorf("rclone check did not compare hashes:\n%s", all)
	}

	// md5sum reports the ETags: each must be the plaintext MD5.
	sums := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(rc("md5sum", "s3seal:rclonebkt/dir")), "\n") {
		sum, name, ok := strings.Cut(line, "  ")
		if ok {
			sums[name] = sum
		}
	}
	for name, data := range files {
		if sums[name] != md5Hex(data) {
			t.Errorf("rclone md5sum %s = %q, want %s", name, sums[name], md5Hex(data))
		}
	}

	sizes := map[string]int64{}
	for _, line := range strings.Split(strings.TrimSpace(rc("lsl", "s3seal:rclonebkt/dir")), "\n") {
		f := strings.Fields(line)
		if len(f) < 4 {
			continue
		}
		n, err := strconv.ParseInt(f[0], 10, 64)
		if err != nil {
			t.Errorf("rclone lsl line %q: %v", line, err)
		}
		sizes[f[len(f)-1]] = n
	}
	for name, data := range files {
		if got, ok := sizes[name]; !ok || got != int64(len(data)) {
			t.Errorf("rclone lsl %s: size %d (listed %v), want %d", name, got, ok, len(data))
		}
	}

	if got := rc("cat", "s3seal:rclonebkt/dir/sub/deep/big.bin"); !bytes.Equal([]byte(got), files["sub/deep/big.bin"]) {
		t.Errorf("rclone cat big.bin: %d bytes, want %d identical", len(got), len(files["sub/deep/big.bin"]))
	}

	// And back down: a full download round trip.
	dst := t.TempDir()
	rc("copy", "s3seal:rclonebkt/dir", dst)
	for name, data := range files {
		got, err := os.ReadFile(filepath.Join(dst, filepath.FromSlash(name)))
		if err != nil || !bytes.Equal(got, data) {
			t.Errorf("rclone copy down %s: err %v, %d bytes, want %d identical", name, err, len(got), len(data))
		}
	}
}

// requireRclone fails under CI (skips elsewhere) when Debian's rclone is
// missing.
func requireRclone(t *testing.T) {
	t.Helper()
	if _, err := os.Stat(rcloneBin); err == nil {
		return
	}
	requireTool(t, rcloneBin)
}
