package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/s3seal/s3seal/audit"
)

const auditUsage = `usage: s3seal audit verify [--audit-key-file FILE] [--last-mac HEX] FILE...

Proves that an audit trail (s3seal serve --audit-log) was not edited:
every line sealed by the MAC chained from the line before, sequence
numbers consecutive, each file begun by a start line anchored on the
file before it. Give the rotated files oldest first, the current one
last (FILE.* FILE: the rotated names sort by time). A file alone
verifies from its anchor. It names the first line that fails and exits 1;
2 for a usage mistake.

The last lines of the newest file can be cut without a trace unless its
end is anchored: a trail closed by s3seal ends with a checkpoint line,
and --last-mac checks the last line against the MAC s3seal logged
("audit trail closed" or "audit trail rotated", kept elsewhere).

flags:
`

// auditVerifyFlags are the flags of `s3seal audit verify`, which parses
// them alone: it reads no store and no master key.
type auditVerifyFlags struct{ keyFile, lastMAC string }

func (a *auditVerifyFlags) define(fs *flag.FlagSet) {
	fs.StringVar(&a.keyFile, "audit-key-file", "", "file holding the trail's chain key, as serve's --audit-key-file [S3SEAL_AUDIT_KEY_FILE]")
	fs.StringVar(&a.lastMAC, "last-mac", "", "the MAC (hex) the trail must end on, as s3seal logged it at its last rotation or shutdown")
}

// auditCommand runs `s3seal audit verify`: exit 0 when the trail
// verifies, 1 when it does not, 2 for a usage mistake.
func auditCommand(args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] != "verify" {
		if len(args) > 0 && (args[0] == "-h" || args[0] == "--help" || args[0] == "help") {
			fmt.Fprint(stdout, auditUsage)
			return 0
		}
		fmt.Fprint(stderr, "s3seal: audit takes one command, verify\n"+auditUsage)
		return 2
	}
	fs := flag.NewFlagSet("s3seal audit verify", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	var fl auditVerifyFlags
	fl.define(fs)
	keyFile, lastMAC := &fl.keyFile, &fl.lastMAC
	if err := fs.Parse(args[1:]); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprint(stdout, auditUsage)
			fs.SetOutput(stdout)
			fs.PrintDefaults()
			return 0
		}
		fmt.Fprintln(stderr, "s3seal: audit verify:", flagError(fs, err, "audit verify"))
		return 2
	}
	if *keyFile == "" {
		*keyFile = getenv("S3SEAL_AUDIT_KEY_FILE")
	}
	if *keyFile == "" || fs.NArg() == 0 {
		fmt.Fprint(stderr, "s3seal: audit verify needs --audit-key-file and the trail's files\n"+auditUsage)
		return 2
	}
	text, err := readPrivateFile(*keyFile)
	if err != nil {
		fmt.Fprintln(stderr, "s3seal: audit verify: --audit-key-file:", err)
		return 2
	}
	key, err := audit.ParseKey(text)
	if err != nil {
		fmt.Fprintln(stderr, "s3seal: audit verify: --audit-key-file:", err)
		return 2
	}
	var files []audit.File
	for _, name := range fs.Args() {
		f, err := os.Open(name)
		if err != nil {
			fmt.Fprintln(stderr, "s3seal: audit verify:", err)
			return 1
		}
		defer f.Close()
		files = append(files, audit.File{Name: name, R: f})
	}
	res, err := audit.Verify(key, files, *lastMAC)
	if err != nil {
		fmt.Fprintln(stderr, "s3seal: audit verify: FAILED:", err)
		return 1
	}
	from := "a new trail"
	if !res.Genesis {
		from = fmt.Sprintf("continuing seq %d (its earlier files not given)", res.PrevSeq)
	}
	end := "closed by a checkpoint"
	switch {
	case res.Rotated:
		end = "NOT closed: it ends on a rotation's checkpoint, so the file after it is not given (or was removed)"
	case !res.Checkpoint:
		end = "NOT closed by a checkpoint: s3seal is still writing it, stopped without closing it, or its last lines were cut"
	}
	fmt.Fprintf(stdout, "ok: %d lines in %d files, seq %d to %d; %s; %s; last mac %s\n",
		res.Lines, len(files), res.FirstSeq, res.LastSeq, from, end, res.LastMAC)
	if len(res.Unclosed) > 0 {
		fmt.Fprintf(stdout, "note: %d restarts after a line that is no checkpoint (a crash, or the lines before the restart were cut): start lines seq %v; an anchor kept from before each tells which\n",
			len(res.Unclosed), res.Unclosed)
	}
	return 0
}
