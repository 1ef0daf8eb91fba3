package e2e

import (
	"bytes"
	"context"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestReadmeBackups runs the README's quick start and its three backup
// blocks (rclone, restic, the aws CLI) as bash scripts (set -euo pipefail), as they are, against
// one s3seal started as the README's "Two commands" starts it: `s3seal
// serve` on its embedded default (its data directory, development key and
// credentials in the working directory), on a free port in place of 7070.
// Each block backs up a directory photos (made here: a small file and a
// 10 MB one, multipart for every client), restores it and compares the
// two with diff -r; rclone check must also find no difference.
//
// AWS_CA_BUNDLE stays set (to the machine's value, or to a file that does
// not exist where the machine has none): the blocks unset it exactly where
// the README tells users to (rclone), and the other clients must work
// with it.
func TestReadmeBackups(t *testing.T) {
	t.Parallel()
	requireBinary(t)
	for _, tool := range []string{"rclone", "restic", "aws", "curl", "diff"} {
		requireTool(t, tool)
	}

	work := t.TempDir()
	port := strconv.Itoa(freePort(t))
	serve := exec.Command(s3sealBin, "serve", "--listen", "127.0.0.1:"+port)
	serve.Dir = work
	serve.Env = sealEnv(nil)
	logFile, err := os.Create(filepath.Join(work, "serve.log"))
	if err != nil {
		t.Fatal(err)
	}
	defer logFile.Close()
	serve.Stdout, serve.Stderr = logFile, logFile
	if err := serve.Start(); err != nil {
		t.Fatal(err)
	}
	serveLog := func() string {
		b, _ := os.ReadFile(logFile.Name())
		return string(b)
	}
	done := make(chan struct{})
	go func() { _ = serve.Wait(); close(done) }()
	t.Cleanup(func() {
		_ = serve.Process.Kill()
		<-done
	})
	endpoint := "http://127.0.0.1:" + port
	for deadline := time.Now().Add(30 * time.Second); ; {
		resp, err := http.Get(endpoint + "/readyz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				break
			}
		}
		select {
		case <-done:
			t.Fatalf("s3seal serve exited:\n%s", serveLog())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("s3seal serve not ready:\n%s", serveLog())
		}
		time.Sleep(100 * time.Millisecond)
	}

	caBundle := os.Getenv("AWS_CA_BUNDLE")
	if caBundle == "" {
		caBundle = filepath.Join(work, "no-such-ca.pem")
	}
	for _, c := range []struct{ name, heading, want string }{
		{"rclone", "### rclone", "0 differences found"},
		{"restic", "### restic", "snapshot"},
		{"aws", "### aws CLI", "make_bucket: aws-backups"},
		// The quick start copies a cat.jpg of the reader's own.
		{"quickstart", "## Quick start with the aws CLI", "make_bucket: photos"},
	} {
		t.Run(c.name, func(t *testing.T) {
			script := readmeBlock(t, "README.md", c.heading)
			if !strings.Contains(script, "127.0.0.1:7070") {
				t.Fatalf("README's %s block does not name 127.0.0.1:7070", c.heading)
			}
			script = strings.ReplaceAll(script, "127.0.0.1:7070", "127.0.0.1:"+port)
			dir := t.TempDir()
			writeFile(t, dir, "photos/a.txt", []byte("first day\n"))
			big := make([]byte, 10<<20)
			for i := range big {
				big[i] = byte(i * 7 / 3)
			}
			writeFile(t, dir, "photos/2026/b.bin", big)
			writeFile(t, dir, "cat.jpg", big[:300<<10])
			check := ""
			if c.name == "quickstart" {
				check = "cmp cat.jpg copy.jpg\n"
			}
			path := writeFile(t, t.TempDir(), c.name+".sh", []byte("set -euo pipefail\nset -x\ncd "+dir+"\n"+script+check+"echo BACKUP-DONE\n"))

			var env []string
			for _, kv := range cleanEnv([]string{"HOME", "AWS_CA_BUNDLE", "XDG_CONFIG_HOME", "XDG_CACHE_HOME"},
				"HOME="+t.TempDir(), "AWS_CA_BUNDLE="+caBundle) {
				if !strings.HasPrefix(kv, "RESTIC_") {
					env = append(env, kv)
				}
			}
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
			defer cancel()
			cmd := exec.CommandContext(ctx, "bash", path)
			cmd.Env = env
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			err := cmd.Run()
			out, errOut := stdout.String(), stderr.String()
			if err != nil || !strings.Contains(out, "BACKUP-DONE") {
				t.Fatalf("README's %s block: %v\nstdout:\n%s\nstderr:\n%s\nserve log:\n%s", c.heading, err, out, errOut, serveLog())
			}
			if !strings.Contains(out+errOut, c.want) {
				t.Errorf("README's %s block: output lacks %q:\n%s\n%s", c.heading, c.want, out, errOut)
			}
		})
	}
}
