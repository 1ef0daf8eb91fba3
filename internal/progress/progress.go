// Package progress shows how far a long command over a bucket has got
// (s3seal rewrap, verify, gc): items done, bytes, rate, and the time left
// once the listing has ended. The command's hot path only adds to atomic
// counters; one goroutine draws them on a ticker, in place on a terminal
// (Live), or a line every so many items goes to a log (Lines).
package progress

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Mode is how progress is shown.
type Mode int

const (
	// Off shows nothing.
	Off Mode = iota
	// Live redraws one line in place ("\r", no escape sequences) a few
	// times a second, and leaves the last frame as a line at Stop.
	Live
	// Lines writes "progress: ..." every Options.Every items: for a log.
	Lines
)

// DefaultInterval is how often Live redraws: at most four times a second.
const DefaultInterval = 250 * time.Millisecond

// rateWindow is how far back Live's rate looks: recent enough to follow a
// change of pace, long enough not to jump with each tick.
const rateWindow = 10 * time.Second

// Options configure a Reporter.
type Options struct {
	Mode Mode
	// Label starts every line: "verify photos".
	Label string
	// Unit names the items counted, plural: "objects" (the default).
	Unit string
	// Bytes shows the bytes done (and listed) beside the items.
	Bytes bool
	// ByBytes estimates the fraction done and the time left from the
	// bytes rather than the items: when the work goes with the size (a
	// deep verify reads every byte).
	ByBytes bool
	// Every is Lines' step: a line each time the items done
	// pass a multiple of it (0: never).
	Every int
	// Interval is Live's period. Default DefaultInterval.
	Interval time.Duration
	// Width, for Live, tells the terminal's columns (0: unknown): a
	// frame is cut to fit, since "\r" cannot redraw a wrapped line.
	Width func() int
	// Now is the clock. Default time.Now.
	Now func() time.Time
	// Ticks, for tests, replaces Live's ticker.
	Ticks <-chan time.Time
}

// Reporter counts a command's progress and shows it as Options say.
// Its methods are safe for concurrent use; Add and Listed only touch
// atomics (and, in Lines mode, write every Every items).
type Reporter struct {
	w   io.Writer
	opt Options

	start       time.Time
	done        atomic.Int64
	bytes       atomic.Int64
	listed      atomic.Int64
	listedBytes atomic.Int64
	listingDone atomic.Bool

	mu      sync.Mutex // guards what follows and writes to w
	frame   string     // the last frame drawn (Live)
	shown   int        // columns of it on screen; 0: none
	samples []sample   // Live's recent counts, oldest first
	drawn   bool       // a frame has been drawn

	stopOnce sync.Once
	stop     chan struct{}
	stopped  chan struct{}
}

// sample is the counts at one tick.
type sample struct {
	at    time.Time
	done  int64
	bytes int64
}

// Start returns a Reporter writing to w; in Live mode it starts drawing.
// Stop it when the work is over.
func Start(w io.Writer, opt Options) *Reporter {
	r := newReporter(w, opt)
	if r.opt.Mode == Live {
		r.stopped = make(chan struct{})
		go r.run()
	}
	return r
}

func newReporter(w io.Writer, opt Options) *Reporter {
	if opt.Unit == "" {
		opt.Unit = "objects"
	}
	if opt.Interval <= 0 {
		opt.Interval = DefaultInterval
	}
	if opt.Now == nil {
		opt.Now = time.Now
	}
	if opt.Width == nil {
		opt.Width = func() int { return 0 }
	}
	r := &Reporter{w: w, opt: opt, start: opt.Now(), stop: make(chan struct{}), stopped: make(chan struct{})}
	close(r.stopped) // no goroutine draws until Start starts one
	return r
}

// Add counts n items done, of bytes bytes.
func (r *Reporter) Add(n int, bytes int64) {
	if r.opt.Mode == Off {
		return
	}
	done := r.done.Add(int64(n))
	r.bytes.Add(bytes)
	if every := int64(r.opt.Every); r.opt.Mode == Lines && every > 0 && done/every != (done-int64(n))/every {
		r.mu.Lock()
		defer r.mu.Unlock()
		r.writeLine(r.snapshot(r.opt.Now(), false))
	}
}

// Listed sets what the listing has found so far (items, bytes), and with
// complete that it has ended: the total, from which the fraction done and
// the time left follow. It has the signature of sealstore.ListProgress.
func (r *Reporter) Listed(n int, bytes int64, complete bool) {
	r.listed.Store(int64(n))
	r.listedBytes.Store(bytes)
	if complete {
		r.listingDone.Store(true)
	}
}

// SetLabel changes the label (gc's bucket as it goes from one to the next).
func (r *Reporter) SetLabel(label string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.opt.Label = label
}

// Stop ends the drawing. In Live mode the last frame, with the overall
// rate and the time taken, is left on its own line, once something was
// done or drawn.
func (r *Reporter) Stop() {
	r.stopOnce.Do(func() {
		close(r.stop)
		<-r.stopped
		if r.opt.Mode != Live {
			return
		}
		r.mu.Lock()
		defer r.mu.Unlock()
		if r.done.Load() == 0 && !r.drawn {
			return
		}
		r.draw(r.render(r.snapshot(r.opt.Now(), true), true))
		io.WriteString(r.w, "\n")
		r.shown = 0
	})
}

// Writer returns a writer to w that, in Live mode, clears the frame
// before each write and draws it again after a whole line, so that lines
// the command prints to the same terminal do not run into it. In other
// modes it returns w.
func (r *Reporter) Writer(w io.Writer) io.Writer {
	if r.opt.Mode != Live {
		return w
	}
	return &lineWriter{r: r, w: w}
}

type lineWriter struct {
	r *Reporter
	w io.Writer
}

func (l *lineWriter) Write(p []byte) (int, error) {
	r := l.r
	r.mu.Lock()
	defer r.mu.Unlock()
	shown := r.shown
	if shown > 0 {
		io.WriteString(r.w, "\r"+strings.Repeat(" ", shown)+"\r")
		r.shown = 0
	}
	n, err := l.w.Write(p)
	if shown > 0 && len(p) > 0 && p[len(p)-1] == '\n' {
		r.draw(r.frame)
	}
	return n, err
}

// run draws a frame at each tick until Stop.
func (r *Reporter) run() {
	defer close(r.stopped)
	ticks := r.opt.Ticks
	if ticks == nil {
		t := time.NewTicker(r.opt.Interval)
		defer t.Stop()
		ticks = t.C
	}
	for {
		select {
		case <-r.stop:
			return
		case <-ticks:
			r.tick(r.opt.Now())
		}
	}
}

// tick samples the counts at now and draws them.
func (r *Reporter) tick(now time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.samples = append(r.samples, sample{at: now, done: r.done.Load(), bytes: r.bytes.Load()})
	for len(r.samples) > 1 && now.Sub(r.samples[1].at) >= rateWindow {
		r.samples = r.samples[1:]
	}
	r.draw(r.render(r.snapshot(now, false), false))
}

// draw writes frame over the one on screen (r.mu held).
func (r *Reporter) draw(frame string) {
	if w := r.opt.Width(); w > 1 && len(frame) > w-1 {
		frame = frame[:w-1]
	}
	pad := ""
	if len(frame) < r.shown {
		pad = strings.Repeat(" ", r.shown-len(frame))
	}
	io.WriteString(r.w, "\r"+frame+pad)
	r.frame, r.shown, r.drawn = frame, len(frame), true
}

// Snapshot is the counts at one moment, with what follows from them.
type Snapshot struct {
	Elapsed     time.Duration
	Done        int64
	Bytes       int64
	Listed      int64 // items the listing found so far; 0 with no listing
	ListedBytes int64
	ListingDone bool
	Rate        float64       // items a second; 0 when not yet known
	ByteRate    float64       // bytes a second
	Left        time.Duration // time left; -1 when it cannot be estimated
}

// snapshot reads the counters at now (r.mu held). The rate is the last
// rateWindow's (Live's samples) or, with overall or too short a window,
// since the start.
func (r *Reporter) snapshot(now time.Time, overall bool) Snapshot {
	s := Snapshot{Elapsed: now.Sub(r.start), Done: r.done.Load(), Bytes: r.bytes.Load(),
		Listed: r.listed.Load(), ListedBytes: r.listedBytes.Load(), ListingDone: r.listingDone.Load(), Left: -1}
	from := sample{at: r.start}
	if !overall && len(r.samples) > 0 && now.Sub(r.samples[0].at) >= time.Second {
		from = r.samples[0]
	}
	if d := now.Sub(from.at).Seconds(); d > 0 {
		s.Rate = float64(s.Done-from.done) / d
		s.ByteRate = float64(s.Bytes-from.bytes) / d
	}
	if s.ListingDone {
		switch {
		case r.opt.ByBytes && s.ByteRate > 0 && s.ListedBytes >= s.Bytes:
			s.Left = time.Duration(float64(s.ListedBytes-s.Bytes) / s.ByteRate * float64(time.Second))
		case !r.opt.ByBytes && s.Rate > 0 && s.Listed >= s.Done:
			s.Left = time.Duration(float64(s.Listed-s.Done) / s.Rate * float64(time.Second))
		}
	}
	return s
}

// percent is the fraction done in percent, and whether it is known.
func (r *Reporter) percent(s Snapshot) (float64, bool) {
	switch {
	case !s.ListingDone || s.Listed < s.Done:
		return 0, false
	case r.opt.ByBytes && s.ListedBytes > 0:
		return min(100, 100*float64(s.Bytes)/float64(s.ListedBytes)), true
	case !r.opt.ByBytes && s.Listed > 0:
		return min(100, 100*float64(s.Done)/float64(s.Listed)), true
	}
	return 0, false
}

// render is Live's frame of s, e.g.
//
//	verify photos: 1200/5000 objects (24%), 1.2 GiB, 850 objects/s, 14.3 MiB/s, 4s left
//
// "1200/5000+" while the listing goes on; with final, the time taken
// instead of the time left.
func (r *Reporter) render(s Snapshot, final bool) string {
	var b strings.Builder
	b.WriteString(r.opt.Label)
	if r.opt.Label != "" {
		b.WriteString(": ")
	}
	fmt.Fprintf(&b, "%d", s.Done)
	// The total, once it can be told apart from what is done: rewrap
	// reports uploads in progress that no listing found.
	if s.Listed > 0 && s.Listed >= s.Done {
		fmt.Fprintf(&b, "/%d", s.Listed)
		if !s.ListingDone {
			b.WriteString("+")
		}
	}
	b.WriteString(" " + r.opt.Unit)
	if p, ok := r.percent(s); ok {
		fmt.Fprintf(&b, " (%.0f%%)", p)
	}
	if r.opt.Bytes {
		b.WriteString(", " + IBytes(s.Bytes))
	}
	if s.Rate > 0 || s.Elapsed >= time.Second {
		fmt.Fprintf(&b, ", %s %s/s", rate(s.Rate), r.opt.Unit)
		if r.opt.Bytes {
			fmt.Fprintf(&b, ", %s/s", IBytes(int64(s.ByteRate)))
		}
	}
	switch {
	case final:
		b.WriteString(", in " + Duration(s.Elapsed))
	case s.Left >= 0 && s.Left < 100*24*time.Hour:
		b.WriteString(", " + Duration(s.Left) + " left")
	}
	return b.String()
}

// writeLine writes Lines' line of s (r.mu held), e.g.
//
//	progress: 2000 objects, 3145728 bytes of 5000 (40%); 210 objects/s, 330 KiB/s, 14s left (verify photos)
func (r *Reporter) writeLine(s Snapshot) {
	var b strings.Builder
	fmt.Fprintf(&b, "progress: %d %s", s.Done, r.opt.Unit)
	if r.opt.Bytes {
		fmt.Fprintf(&b, ", %d bytes", s.Bytes)
	}
	if s.Listed > 0 && s.Listed >= s.Done {
		if s.ListingDone {
			fmt.Fprintf(&b, " of %d", s.Listed)
			if p, ok := r.percent(s); ok {
				fmt.Fprintf(&b, " (%.0f%%)", p)
			}
		} else {
			fmt.Fprintf(&b, " of %d listed so far", s.Listed)
		}
	}
	fmt.Fprintf(&b, "; %s %s/s", rate(s.Rate), r.opt.Unit)
	if r.opt.Bytes {
		fmt.Fprintf(&b, ", %s/s", IBytes(int64(s.ByteRate)))
	}
	if s.Left >= 0 {
		b.WriteString(", " + Duration(s.Left) + " left")
	}
	if r.opt.Label != "" {
		b.WriteString(" (" + r.opt.Label + ")")
	}
	b.WriteString("\n")
	io.WriteString(r.w, b.String())
}
