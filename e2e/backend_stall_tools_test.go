package e2e

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/s3seal/s3seal/internal/faultproxy"
)

// `s3seal verify` and `s3seal gc` on a store that stops answering end with
// a failure within a few backend timeouts per call, not a hang.
func TestBackendStallTools(t *testing.T) {
	t.Parallel()
	p, fp := startStalling(t)
	c := sdkFor(t, p)
	mustCreateBucket(t, c, "tools")
	for _, k := range []string{"a", "b"} {
		putObj(t, c, "tools", k, patternBytes(8, 2000))
	}
	base := []string{"--data-dir", filepath.Join(t.TempDir(), "tool"),
		"--backend-endpoint", fp.URL(), "--backend-path-style", "--backend-access-key", "x", "--backend-secret-key", "y",
		"--key", p.Key, "--backend-response-timeout", stallBound.String(), "--backend-idle-timeout", stallBound.String()}
	for _, tc := range []struct {
		name  string
		rules []faultproxy.Rule
		args  []string
	}{
		{"verify-list", []faultproxy.Rule{{Op: faultproxy.ListObjects, Fault: faultproxy.Stall}}, []string{"verify", "--bucket", "tools"}},
		{"verify-deep-get", []faultproxy.Rule{{Op: faultproxy.GetObject, Fault: faultproxy.Stall}, {Op: faultproxy.HeadObject, Fault: faultproxy.Stall}}, []string{"verify", "--deep", "--bucket", "tools"}},
		{"verify-deep-midbody", []faultproxy.Rule{{Op: faultproxy.GetObject, Fault: faultproxy.ForwardThenStallBody}}, []string{"verify", "--deep", "--bucket", "tools"}},
		{"gc-list", []faultproxy.Rule{{Op: faultproxy.ListObjects, Fault: faultproxy.Stall}, {Op: faultproxy.ListMultipartUploads, Fault: faultproxy.Stall}, {Op: faultproxy.ListBuckets, Fault: faultproxy.Stall}}, []string{"gc", "--bucket", "tools"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fp.Reset()
			fp.Inject(tc.rules...)
			start := time.Now()
			code, out := runS3sealExit(t, nil, append(tc.args, base...)...)
			d := time.Since(start)
			t.Logf("%v: exit %d after %v\n%s", tc.args, code, d, out)
			if code == 0 {
				t.Errorf("%v on a stalled store: exit 0", tc.args)
			}
			if d > 20*time.Second {
				t.Errorf("%v on a stalled store: ended after %v", tc.args, d)
			}
			fp.Reset()
		})
	}
}
