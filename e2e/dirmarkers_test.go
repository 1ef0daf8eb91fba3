package e2e

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestDirectoryMarkersCLIAndRclone builds a tree with directory markers
// (zero-byte keys ending in "/", as the AWS console and s3fs make them)
// on the embedded default store, lists it with the aws CLI and rclone and
// copies it back with rclone.
func TestDirectoryMarkersCLIAndRclone(t *testing.T) {
	t.Parallel()
	requireRclone(t)
	p := startS3seal(t, sealOpts{})
	a := newAWSCLI(t, p)
	src := t.TempDir()
	photo := bytes.Repeat([]byte("jpeg"), 1000)
	writeFile(t, src, "a.jpg", photo)
	writeFile(t, src, "readme.txt", []byte("read me"))

	a.run("s3", "mb", "s3://tree")
	for _, marker := range []string{"photos/", "photos/2024/", "empty/"} {
		a.run("s3api", "put-object", "--bucket", "tree", "--key", marker)
	}
	a.run("s3", "cp", "--no-progress", filepath.Join(src, "a.jpg"), "s3://tree/photos/2024/a.jpg")
	a.run("s3", "cp", "--no-progress", filepath.Join(src, "readme.txt"), "s3://tree/docs/readme.txt")

	top := a.run("s3", "ls", "s3://tree/")
	for _, want := range []string{"PRE docs/", "PRE empty/", "PRE photos/"} {
		if !strings.Contains(top, want) {
			t.Errorf("aws s3 ls s3://tree/ lacks %q:\n%s", want, top)
		}
	}
	photos := a.run("s3", "ls", "s3://tree/photos/")
	if !strings.Contains(photos, "PRE 2024/") || !hasZeroByteMarkerLine(photos) {
		t.Errorf("aws s3 ls s3://tree/photos/ should show 2024/ and the zero-byte marker:\n%s", photos)
	}
	rec := a.run("s3", "ls", "--recursive", "s3://tree/")
	for _, want := range []string{" 0 photos/", " 0 photos/2024/", " 0 empty/", " photos/2024/a.jpg", " docs/readme.txt"} {
		if !strings.Contains(rec, want+"\n") {
			t.Errorf("aws s3 ls --recursive lacks %q:\n%s", want, rec)
		}
	}

	env := rcloneEnv(t, p)
	lsf := runTool(t, env, rcloneBin, "lsf", "-R", "s3seal:tree")
	// rclone 1.60 shows directories from the keys under them and skips
	// the marker objects themselves, as it does on S3.
	for _, want := range []string{"photos/", "photos/2024/", "photos/2024/a.jpg", "docs/readme.txt"} {
		if !strings.Contains("\n"+lsf, "\n"+want+"\n") {
			t.Errorf("rclone lsf -R lacks %q:\n%s", want, lsf)
		}
	}
	dst := t.TempDir()
	runTool(t, env, rcloneBin, "--retries", "1", "copy", "s3seal:tree", dst)
	if got, err := os.ReadFile(filepath.Join(dst, "photos", "2024", "a.jpg")); err != nil || !bytes.Equal(got, photo) {
		t.Errorf("rclone copy back: %d bytes (%v), want %d", len(got), err, len(photo))
	}
	if got, err := os.ReadFile(filepath.Join(dst, "docs", "readme.txt")); err != nil || string(got) != "read me" {
		t.Errorf("rclone copy back readme: %q (%v)", got, err)
	}
	// aws s3 rm --recursive deletes the markers with the objects.
	a.run("s3", "rm", "--recursive", "s3://tree/photos/")
	if rest := a.run("s3", "ls", "--recursive", "s3://tree/"); strings.Contains(rest, "photos/") || !strings.Contains(rest, " 0 empty/") {
		t.Errorf("after aws s3 rm --recursive s3://tree/photos/:\n%s", rest)
	}
}

// hasZeroByteMarkerLine reports whether aws s3 ls printed the listed
// prefix's own marker: a date, a time, size 0 and an empty name.
func hasZeroByteMarkerLine(out string) bool {
	for _, line := range strings.Split(out, "\n") {
		if f := strings.Fields(line); len(f) == 3 && f[2] == "0" {
			return true
		}
	}
	return false
}
