package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestCIRunFromAnyDirectory: .ci/run finds scripts/test.sh from any
// working directory (bash /path/to/repo/.ci/run), here with a stand-in
// test.sh that reports where it runs and what it was given.
func TestCIRunFromAnyDirectory(t *testing.T) {
	t.Parallel()
	ciRun, err := os.ReadFile("../.ci/run")
	if err != nil {
		t.Fatal(err)
	}
	repo := t.TempDir()
	writeFile(t, filepath.Join(repo, ".ci"), "run", ciRun)
	writeFile(t, filepath.Join(repo, "scripts"), "test.sh", []byte("cd \"$(dirname \"$0\")/..\" && echo \"test.sh in $PWD: $*\"\n"))
	cmd := exec.Command("bash", filepath.Join(repo, ".ci", "run"), "arg")
	cmd.Dir = t.TempDir()
	out, err := cmd.CombinedOutput()
	if want := "test.sh in " + repo + ": arg"; err != nil || strings.TrimSpace(string(out)) != want {
		t.Errorf("bash %s/.ci/run from another directory: %v, %q, want %q", repo, err, out, want)
	}
}
