package progress

import (
	"bytes"
	"io"
	"os"
	"testing"

	"github.com/creack/pty"
)

// TestTerminal: a pseudo-terminal is one, with its width; TERM=dumb
// makes it one that cannot be redrawn in place; a buffer and a pipe are
// none.
func TestTerminal(t *testing.T) {
	ptmx, tty, err := pty.Open()
	if err != nil {
		t.Skipf("no pseudo-terminal: %v", err)
	}
	defer ptmx.Close()
	defer tty.Close()
	if err := pty.Setsize(ptmx, &pty.Winsize{Rows: 30, Cols: 123}); err != nil {
		t.Fatal(err)
	}
	env := func(term string) func(string) string {
		return func(k string) string {
			if k == "TERM" {
				return term
			}
			return ""
		}
	}
	ok, width := Terminal(tty, env("xterm-256color"))
	if !ok || width() != 123 {
		t.Errorf("a pty: Terminal says %v", ok)
	}
	if ok, _ := Terminal(tty, env("dumb")); ok || !IsTerminal(tty) {
		t.Errorf("a pty with TERM=dumb: Terminal %v, IsTerminal %v", ok, IsTerminal(tty))
	}
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	for name, out := range map[string]io.Writer{"a pipe": w, "a buffer": &bytes.Buffer{}} {
		if ok, _ := Terminal(out, env("xterm")); ok {
			t.Errorf("%s is taken for a terminal", name)
		}
	}
}
