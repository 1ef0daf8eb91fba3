package e2e

import (
	"context"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// A wrong backend secret is a mistake no retry mends. Answered 503
// ServiceUnavailable, the status aws-sdk-go v1 (rclone, many Go tools)
// counts as throttling, backing off from 0.5 s up to 300 s per attempt,
// rclone at its defaults (--low-level-retries 10, --retries 3) hung for
// many minutes on an `lsd` before it said what was wrong (measured: still
// retrying after 400 s; answered 500, still after 90 s). It is answered
// 403 AccessDenied with words naming s3seal's backend credentials, which
// no client retries: rclone must say what is wrong within 90 s.
func TestWrongBackendSecretDoesNotHangRclone(t *testing.T) {
	t.Parallel()
	requireRclone(t)
	store := storeFor(t)
	p := startS3seal(t, sealOpts{AccessKey: "client", SecretKey: "client-secret-key", Args: []string{"--key", randomKey(t),
		"--backend-endpoint", store.Endpoint, "--backend-path-style",
		"--backend-access-key", store.AccessKey, "--backend-secret-key", "not-" + store.SecretKey}})
	ctx, cancel := context.WithTimeout(ctxT(t), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, rcloneBin, "lsd", "s3seal:")
	cmd.Env = rcloneEnv(t, p)
	start := time.Now()
	out, err := cmd.CombinedOutput()
	if ctx.Err() != nil {
		t.Fatalf("rclone lsd with s3seal's backend secret wrong was still retrying after %v:\n%s", time.Since(start).Round(time.Second), out)
	}
	if err == nil || !strings.Contains(string(out), "backend credentials") {
		t.Fatalf("rclone lsd: %v\n%s", err, out)
	}
}
