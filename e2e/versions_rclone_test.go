package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestVersionsRclone: rclone 1.60 lists the versions of a versioned
// bucket (--s3-versions) and restores the file as it was at a time
// (--s3-version-at) after the newer version was deleted, in front of moto
// and on the embedded store.
func TestVersionsRclone(t *testing.T) {
	t.Parallel()
	requireRclone(t)
	onEachStore(t, func(t *testing.T, p *sealProc) {
		c := sdkFor(t, p)
		mustCreateVersionedBucket(t, c, "rclone-versions")
		env := rcloneEnv(t, p)
		rc := func(args ...string) string {
			t.Helper()
			return runTool(t, env, rcloneBin, append([]string{"--retries", "1", "--low-level-retries", "1"}, args...)...)
		}
		src := t.TempDir()
		writeFile(t, src, "notes.txt", []byte("monday's notes"))
		rc("copy", src, "s3seal:rclone-versions/b")
		time.Sleep(1500 * time.Millisecond)
		between := time.Now().UTC()
		time.Sleep(1500 * time.Millisecond)
		writeFile(t, src, "notes.txt", []byte("tuesday's notes, longer"))
		rc("copy", src, "s3seal:rclone-versions/b")
		rc("delete", "s3seal:rclone-versions/b")

		ls := rc("ls", "--s3-versions", "s3seal:rclone-versions/b")
		if !strings.Contains(ls, "       14 notes-v") || !strings.Contains(ls, "       23 notes") {
			t.Fatalf("rclone ls --s3-versions: want both versions with plaintext sizes:\n%s", ls)
		}
		dst := t.TempDir()
		rc("copy", "--s3-version-at", between.Format(time.RFC3339), "s3seal:rclone-versions/b", dst)
		got, err := os.ReadFile(filepath.Join(dst, "notes.txt"))
		if err != nil || string(got) != "monday's notes" {
			t.Fatalf("restored at %s: %q, %v", between, got, err)
		}
	})
}
