package e2e

import (
	"strconv"
	"strings"
	"testing"
)

// Two s3seal processes on one --data-dir: the second is refused with one
// clear message naming the first's pid; once the first has stopped, the
// data dir is free again.
func TestDataDirLockTwoProcesses(t *testing.T) {
	t.Parallel()
	p := startS3seal(t, sealOpts{})
	code, out := runS3sealExit(t, nil, "serve", "--listen", "127.0.0.1:0", "--data-dir", p.DataDir)
	want := "s3seal: --data-dir " + p.DataDir + " is in use by another s3seal process (pid " + strconv.Itoa(p.PID()) + ")"
	if code != 2 || !strings.Contains(out, want) || strings.Count(out, "is in use") != 1 {
		t.Fatalf("second serve on the same data dir: exit %d, output:\n%s", code, out)
	}
	code, out = runS3sealExit(t, nil, "gc", "--data-dir", p.DataDir)
	if code != 2 || !strings.Contains(out, want) {
		t.Fatalf("gc on the data dir of a running serve: exit %d, output:\n%s", code, out)
	}
	p.Stop()
	code, out = runS3sealExit(t, nil, "gc", "--data-dir", p.DataDir)
	if code != 0 {
		t.Fatalf("gc after serve stopped: exit %d, output:\n%s", code, out)
	}
}
