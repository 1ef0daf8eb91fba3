package main

import (
	"flag"
	"io"
	"strconv"

	"github.com/s3seal/s3seal/internal/progress"
	"github.com/s3seal/s3seal/sealstore"
)

// The progress of rewrap, verify and gc on stderr, as rclone and restic
// show theirs: on a terminal (TERM not dumb) one line redrawn in place a
// few times a second and left at the end; elsewhere (a log, a pipe) a
// line every --progress-every objects (rewrap and verify; gc none), in
// text also with --json: stdout holds one JSON document, and stderr's
// other lines are text. --progress draws in place even when stderr is not a
// terminal (rclone's -P), --no-progress (or --progress=false) shows
// nothing. The summary on stdout is the same in every case.

// progressFlag is --progress and --no-progress: auto (decided by
// stderr, the default), on or off.
type progressFlag struct{ set, on bool }

func (p *progressFlag) String() string {
	if p == nil || !p.set {
		return "auto"
	}
	return strconv.FormatBool(p.on)
}

// Set takes true, false (as a bool flag does) or auto.
func (p *progressFlag) Set(s string) error {
	if s == "auto" {
		p.set = false
		return nil
	}
	v, err := strconv.ParseBool(s)
	if err != nil {
		return err
	}
	p.set, p.on = true, v
	return nil
}

func (p *progressFlag) IsBoolFlag() bool { return true }

// noProgressFlag is --no-progress: --progress=false.
type noProgressFlag struct{ p *progressFlag }

func (n noProgressFlag) String() string { return "false" }

func (n noProgressFlag) Set(s string) error {
	v, err := strconv.ParseBool(s)
	if err != nil {
		return err
	}
	if v {
		n.p.set, n.p.on = true, false
	}
	return nil
}

func (n noProgressFlag) IsBoolFlag() bool { return true }

// register adds --progress and --no-progress to fs; lines says the
// command has --progress-every.
func (p *progressFlag) register(fs *flag.FlagSet, lines bool) {
	auto, none := "auto only on a terminal whose TERM is not dumb", "show no progress on stderr"
	if lines {
		auto += " (elsewhere the lines of --progress-every)"
		none += ", not even the lines of --progress-every"
	}
	fs.Var(p, "progress", "progress on stderr redrawn in place: true even when stderr is not a terminal, false for none, "+auto)
	fs.Var(noProgressFlag{p}, "no-progress", none)
}

// progressSetup is what a command tells of its run.
type progressSetup struct {
	label   string
	unit    string // default "objects"
	bytes   bool   // count bytes too
	byBytes bool   // the work goes with the bytes (a deep verify)
	every   int    // a line every so many when stderr is no terminal (0: none)
}

// cmdProgress is a command's progress display.
type cmdProgress struct {
	r       *progress.Reporter
	off     bool // nothing shown
	ownsTTY bool // drawn in place: lines to the same terminal go through r
}

// newProgress starts the progress display of a run writing to stderr, as
// --progress and the terminal decide.
func newProgress(stderr io.Writer, getenv func(string) string, pf progressFlag, s progressSetup) *cmdProgress {
	opt := progress.Options{Label: s.label, Unit: s.unit, Bytes: s.bytes, ByBytes: s.byBytes, Every: s.every}
	tty, width := progress.Terminal(stderr, getenv)
	switch {
	case pf.set && !pf.on:
		opt.Mode = progress.Off
	case tty || pf.set && pf.on:
		opt.Mode, opt.Width = progress.Live, width
	case s.every > 0:
		opt.Mode = progress.Lines
	}
	return &cmdProgress{r: progress.Start(stderr, opt), off: opt.Mode == progress.Off, ownsTTY: opt.Mode == progress.Live}
}

// add counts one object (or entry) done, of size bytes.
func (p *cmdProgress) add(size int64) { p.r.Add(1, size) }

// listing is the run's sealstore.ListProgress: nil when nothing is shown,
// which spares the store the count's listing.
func (p *cmdProgress) listing() sealstore.ListProgress {
	if p.off {
		return nil
	}
	return p.r.Listed
}

// examined counts one entry gc looked at.
func (p *cmdProgress) examined() { p.r.Add(1, 0) }

// writer is w for the lines a command prints during the run: while the
// progress is drawn in place and w is a terminal too (the same one, as a
// rule), they clear the line first and it is drawn again after them.
func (p *cmdProgress) writer(w io.Writer) io.Writer {
	if !p.ownsTTY || !progress.IsTerminal(w) {
		return w
	}
	return p.r.Writer(w)
}

// done stops the display, leaving its last frame on a terminal.
func (p *cmdProgress) done() { p.r.Stop() }
