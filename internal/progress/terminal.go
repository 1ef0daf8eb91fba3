package progress

import (
	"io"
	"os"

	"golang.org/x/term"
)

// Terminal reports whether w is a terminal that a frame can be redrawn
// on in place, and a function that tells its width. TERM=dumb (Emacs'
// shell, some CI consoles) says it cannot: the frame is drawn there as
// lines. Nothing here is in colour, so NO_COLOR asks nothing of it.
func Terminal(w io.Writer, getenv func(string) string) (bool, func() int) {
	f, ok := w.(*os.File)
	if !ok || !term.IsTerminal(int(f.Fd())) || getenv("TERM") == "dumb" {
		return false, nil
	}
	return true, func() int {
		cols, _, err := term.GetSize(int(f.Fd()))
		if err != nil {
			return 0
		}
		return cols
	}
}

// IsTerminal reports whether w is a terminal, whatever TERM says.
func IsTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}
