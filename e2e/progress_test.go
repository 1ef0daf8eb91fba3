package e2e

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/creack/pty"
)

// runS3sealTerminal runs s3seal with stdout and stderr on a new
// pseudo-terminal of 100 columns, as from an interactive shell, and
// returns its exit code and everything it wrote there.
func runS3sealTerminal(t *testing.T, env []string, args ...string) (int, string) {
	t.Helper()
	requireBinary(t)
	ptmx, tty, err := pty.Open()
	if err != nil {
		t.Skipf("no pseudo-terminal: %v", err)
	}
	defer ptmx.Close()
	if err := pty.Setsize(ptmx, &pty.Winsize{Rows: 40, Cols: 100}); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(s3sealBin, args...)
	cmd.Env = sealEnv(env)
	cmd.Stdout, cmd.Stderr = tty, tty
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	tty.Close()
	read := make(chan []byte)
	go func() {
		var b bytes.Buffer
		io.Copy(&b, ptmx) // until the terminal's last holder closes it (EIO)
		read <- b.Bytes()
	}()
	timer := time.AfterFunc(30*time.Second, func() { cmd.Process.Kill() })
	defer timer.Stop()
	err = cmd.Wait()
	out := string(<-read)
	var ee *exec.ExitError
	switch {
	case err == nil:
		return 0, out
	case errors.As(err, &ee) && !errors.Is(err, syscall.ECHILD):
		return ee.ExitCode(), out
	}
	t.Fatalf("s3seal %v: %v\n%q", args, err, out)
	return -1, ""
}

// TestProgressOnTerminal: `s3seal verify` run on a terminal draws its
// progress in place ("\r" frames on stderr) and leaves its last frame,
// all objects of all listed, the summary after it as without a terminal;
// with TERM=dumb, or with its output not a terminal, no frame at all.
func TestProgressOnTerminal(t *testing.T) {
	t.Parallel()
	p, c := startWithBucket(t, sealOpts{}, mustCreateBucket, "ptybkt")
	for i := range 5 {
		putObj(t, c, "ptybkt", fmt.Sprintf("obj%d", i), patternBytes(uint64(i), 70000))
	}
	p.Stop()
	args := []string{"verify", "--data-dir", p.DataDir, "--bucket", "ptybkt", "--deep"}

	code, out := runS3sealTerminal(t, []string{"TERM=xterm"}, args...)
	frame := regexp.MustCompile(`\rverify ptybkt: (\d+)/(\d+) objects \(100%\), [0-9.]+ KiB, [0-9.]+ objects/s, [0-9.]+ [KMG]?i?B/s, in \d+s *\r\n`)
	m := frame.FindStringSubmatch(out)
	if code != 0 || m == nil || m[1] != m[2] {
		t.Fatalf("verify on a terminal: exit %d, no last frame of all objects:\n%q", code, out)
	}
	summary := m[1] + " object(s), "
	if rest := out[strings.Index(out, m[0])+len(m[0]):]; !strings.HasPrefix(rest, summary) || !strings.Contains(rest, m[1]+" ok, 0 problem(s)") {
		t.Fatalf("verify on a terminal: the summary after the last frame is not %q...:\n%q", summary, out)
	}

	for name, run := range map[string]func() (int, string){
		"TERM=dumb":      func() (int, string) { return runS3sealTerminal(t, []string{"TERM=dumb"}, args...) },
		"not a terminal": func() (int, string) { return runS3sealExit(t, []string{"TERM=xterm"}, args...) },
		"--no-progress": func() (int, string) {
			return runS3sealTerminal(t, []string{"TERM=xterm"}, append(args, "--no-progress")...)
		},
	} {
		code, out := run()
		if code != 0 || strings.Contains(out, "verify ptybkt:") || !strings.Contains(out, m[1]+" ok, 0 problem(s)") {
			t.Errorf("%s: exit %d, a progress frame or no summary:\n%q", name, code, out)
		}
	}
}
