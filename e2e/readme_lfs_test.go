package e2e

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestReadmeLFSWalkthrough runs docs/LFS.md's round trip as a bash script
// (set -euo pipefail), with the s3seal built for these tests first on
// PATH, free ports for 7070, 7071 and 9092 (the development Kafka of
// --lfs-dev-kafka) and a temporary directory for ~/lfs-demo: serve --lfs,
// a produce with its content type, kcat reading the envelope, a streamed
// and a presigned download, each compared with the blob.
func TestReadmeLFSWalkthrough(t *testing.T) {
	t.Parallel()
	requireBinary(t)
	for _, tool := range []string{"curl", "kcat", "jq"} {
		requireTool(t, tool)
	}
	script := readmeBlock(t, "docs/LFS.md", "## A round trip over HTTP")
	demo := filepath.Join(t.TempDir(), "lfs-demo")
	for _, addr := range []string{"127.0.0.1:7070", "127.0.0.1:7071", "127.0.0.1:9092"} {
		script = strings.ReplaceAll(script, addr, "127.0.0.1:"+strconv.Itoa(freePort(t)))
	}
	script = strings.ReplaceAll(script, "~/lfs-demo", demo)
	path := writeFile(t, t.TempDir(), "lfs-walkthrough.sh", []byte("set -euo pipefail\nset -x\n"+script+"echo LFS-WALKTHROUGH-DONE\n"))
	env := cleanEnv([]string{"AWS_CA_BUNDLE", "HOME", "PATH"},
		"HOME="+t.TempDir(), "PATH="+filepath.Dir(s3sealBin)+":"+os.Getenv("PATH"))
	out, errOut, err := tryTool(t, env, "bash", path)
	if err != nil || !strings.Contains(out, "LFS-WALKTHROUGH-DONE") {
		serveLog, _ := os.ReadFile(filepath.Join(demo, "serve.log"))
		t.Fatalf("LFS round trip (docs/LFS.md): %v\nstdout:\n%s\nstderr:\n%s\nserve.log:\n%s", err, out, errOut, serveLog)
	}
	for _, want := range []string{`"content_type": "application/octet-stream"`, `"size": 5000000`, `order-1 {"kfs_lfs":1`} {
		if !strings.Contains(out, want) {
			t.Errorf("walkthrough output lacks %q:\n%s\n%s", want, out, errOut)
		}
	}
}
