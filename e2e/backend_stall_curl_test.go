package e2e

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/s3seal/s3seal/internal/faultproxy"
)

// curl, which checks nothing but the HTTP framing, sees a GET whose store
// stopped mid-body as a broken transfer: fewer bytes than the
// Content-Length it announced, and curl's exit code 18 (partial file), for
// a whole GET and for a range.
func TestBackendStallMidGetCurl(t *testing.T) {
	t.Parallel()
	curl := requireTool(t, "curl")
	p, fp := startStalling(t)
	c := sdkFor(t, p)
	mustCreateBucket(t, c, "curl")
	big := patternBytes(9, 6*mib)
	putObj(t, c, "curl", "big", big)
	clRE := regexp.MustCompile(`(?i)\ncontent-length: *(\d+)`)
	for _, rng := range []string{"", "bytes=100-5000000"} {
		t.Run("range="+rng, func(t *testing.T) {
			fp.Reset()
			fp.Inject(faultproxy.Rule{Op: faultproxy.GetObject, Fault: faultproxy.ForwardThenStallBody})
			dir := t.TempDir()
			out, hdr := filepath.Join(dir, "body"), filepath.Join(dir, "headers")
			args := []string{"-sS", "--aws-sigv4", "aws:amz:us-east-1:s3", "--user", p.AccessKey + ":" + p.SecretKey,
				"-D", hdr, "-o", out, "--max-time", "30",
				"-H", "x-amz-content-sha256: e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"}
			if rng != "" {
				args = append(args, "-H", "Range: "+rng)
			}
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			cmd := exec.CommandContext(ctx, curl, append(args, p.Endpoint+"/curl/big")...)
			cmd.Env = append(os.Environ(), "AWS_CA_BUNDLE=")
			msg, err := cmd.CombinedOutput()
			code := 0
			if ee, ok := err.(*exec.ExitError); ok {
				code = ee.ExitCode()
			} else if err != nil {
				t.Fatal(err)
			}
			h, _ := os.ReadFile(hdr)
			b, _ := os.ReadFile(out)
			t.Logf("curl exit %d, %d bytes; %s\n%s", code, len(b), msg, h)
			if !regexp.MustCompile(`^HTTP/1.1 20[06]`).Match(h) {
				// No byte came before the store stalled: an error answer.
				t.Logf("answered with an error: %s", b)
				return
			}
			m := clRE.FindSubmatch(h)
			if len(m) == 0 {
				if code == 0 {
					t.Fatalf("no Content-Length and curl ended cleanly with %d bytes", len(b))
				}
				return
			}
			cl, _ := strconv.Atoi(string(m[1]))
			if code == 0 || len(b) >= cl {
				t.Fatalf("curl exit %d with %d of Content-Length %d bytes: a broken GET looks clean", code, len(b), cl)
			}
		})
	}
}
