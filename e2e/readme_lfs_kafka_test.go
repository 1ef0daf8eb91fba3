package e2e

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestReadmeLFSKafkaWay runs docs/LFS.md's "The Kafka way" block as a bash
// script (set -euo pipefail), with the s3seal built for these tests first
// on PATH, free ports for 7070, 7071, 9092 (the development Kafka) and
// 9093 (the Kafka listener) and a temporary directory for
// ~/lfs-kafka-demo: serve with --lfs-kafka-listen, kcat producing a file
// through s3seal with LFS_BLOB, kcat reading the envelope from the
// broker, the streamed download compared with the file.
func TestReadmeLFSKafkaWay(t *testing.T) {
	t.Parallel()
	requireBinary(t)
	for _, tool := range []string{"curl", "kcat", "jq"} {
		requireTool(t, tool)
	}
	script := readmeBlock(t, "docs/LFS.md", "## The Kafka way")
	demo := filepath.Join(t.TempDir(), "lfs-kafka-demo")
	for _, addr := range []string{"127.0.0.1:7070", "127.0.0.1:7071", "127.0.0.1:9092", "127.0.0.1:9093"} {
		if !strings.Contains(script, addr) {
			t.Fatalf("docs/LFS.md's Kafka way block does not name %s", addr)
		}
		script = strings.ReplaceAll(script, addr, "127.0.0.1:"+strconv.Itoa(freePort(t)))
	}
	script = strings.ReplaceAll(script, "~/lfs-kafka-demo", demo)
	path := writeFile(t, t.TempDir(), "lfs-kafka-way.sh", []byte("set -euo pipefail\nset -x\n"+script+"echo LFS-KAFKA-WAY-DONE\n"))
	env := cleanEnv([]string{"AWS_CA_BUNDLE", "HOME", "PATH"},
		"HOME="+t.TempDir(), "PATH="+filepath.Dir(s3sealBin)+":"+os.Getenv("PATH"))
	out, errOut, err := tryTool(t, env, "bash", path)
	if err != nil || !strings.Contains(out, "LFS-KAFKA-WAY-DONE") {
		serveLog, _ := os.ReadFile(filepath.Join(demo, "serve.log"))
		t.Fatalf("docs/LFS.md's Kafka way: %v\nstdout:\n%s\nstderr:\n%s\nserve.log:\n%s", err, out, errOut, serveLog)
	}
	// jq printed the envelope the broker holds: the blob's size, its
	// content type from the record's header, the sealed key.
	for _, want := range []string{`"kfs_lfs": 1`, `"size": 5000000`, `"content_type": "application/octet-stream"`, `"key": "default/events/lfs/kafka/0/obj-`} {
		if !strings.Contains(out, want) {
			t.Errorf("the walk's output lacks %q:\n%s\n%s", want, out, errOut)
		}
	}
}
