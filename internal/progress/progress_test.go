package progress

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

const mib = 1 << 20

// fakeClock is a clock the test moves.
type fakeClock struct{ now time.Time }

func (c *fakeClock) Now() time.Time          { return c.now }
func (c *fakeClock) advance(d time.Duration) { c.now = c.now.Add(d) }
func newClock() *fakeClock                   { return &fakeClock{now: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)} }

// lastFrame is the frame drawn last, without the blanks after it.
func lastFrame(out string) string {
	return strings.TrimRight(out[strings.LastIndex(out, "\r")+1:], " ")
}

// TestRenderRateAndTimeLeft: the frame says done of the total with the
// percentage, the bytes, the rate over the last window (since the start
// while the window is shorter than a second) and the time left that rate
// gives for the rest.
func TestRenderRateAndTimeLeft(t *testing.T) {
	clk := newClock()
	var out bytes.Buffer
	r := newReporter(&out, Options{Mode: Live, Label: "verify b", Bytes: true, Now: clk.Now})
	r.Listed(100, 100*mib, true)

	clk.advance(2 * time.Second)
	r.Add(20, 20*mib)
	r.tick(clk.now)
	if got, want := lastFrame(out.String()), "verify b: 20/100 objects (20%), 20 MiB, 10 objects/s, 10 MiB/s, 8s left"; got != want {
		t.Errorf("after 2s:\n got %q\nwant %q", got, want)
	}

	// The pace doubles: the window's rate follows it, not the average.
	clk.advance(2 * time.Second)
	r.Add(40, 40*mib)
	r.tick(clk.now)
	if got, want := lastFrame(out.String()), "verify b: 60/100 objects (60%), 60 MiB, 20 objects/s, 20 MiB/s, 2s left"; got != want {
		t.Errorf("after 4s:\n got %q\nwant %q", got, want)
	}

	// Past the window, the oldest samples are forgotten.
	for range 12 {
		clk.advance(time.Second)
		r.Add(3, 3*mib)
		r.tick(clk.now)
	}
	if got, want := lastFrame(out.String()), "verify b: 96/100 objects (96%), 96 MiB, 3.0 objects/s, 3.0 MiB/s, 1s left"; got != want {
		t.Errorf("after 16s:\n got %q\nwant %q", got, want)
	}

	// Stop leaves the last frame with the overall rate and the time taken.
	r.Add(4, 4*mib)
	r.Stop()
	if got, want := out.String()[strings.LastIndex(out.String(), "\r")+1:], "verify b: 100/100 objects (100%), 100 MiB, 6.2 objects/s, 6.2 MiB/s, in 16s\n"; got != want {
		t.Errorf("final:\n got %q\nwant %q", got, want)
	}
}

// TestRenderByBytes: a deep verify's time left goes by the bytes: one
// large object left is most of the work.
func TestRenderByBytes(t *testing.T) {
	clk := newClock()
	var out bytes.Buffer
	r := newReporter(&out, Options{Mode: Live, Label: "v", Bytes: true, ByBytes: true, Now: clk.Now})
	r.Listed(10, 100*mib, true)
	clk.advance(10 * time.Second)
	r.Add(9, 10*mib)
	r.tick(clk.now)
	if got, want := lastFrame(out.String()), "v: 9/10 objects (10%), 10 MiB, 0.9 objects/s, 1.0 MiB/s, 1m30s left"; got != want {
		t.Errorf("\n got %q\nwant %q", got, want)
	}
}

// TestRenderWhileListing: while the listing goes on, the total is what it
// found so far ("+"), with no percentage and no time left; with no
// listing at all (gc), the count alone.
func TestRenderWhileListing(t *testing.T) {
	clk := newClock()
	var out bytes.Buffer
	r := newReporter(&out, Options{Mode: Live, Label: "rewrap b", Now: clk.Now})
	r.Listed(1000, 0, false)
	clk.advance(4 * time.Second)
	r.Add(400, 0)
	r.tick(clk.now)
	if got, want := lastFrame(out.String()), "rewrap b: 400/1000+ objects, 100 objects/s"; got != want {
		t.Errorf("\n got %q\nwant %q", got, want)
	}

	out.Reset()
	g := newReporter(&out, Options{Mode: Live, Label: "gc b", Unit: "entries", Now: clk.Now})
	clk.advance(2 * time.Second)
	g.Add(7, 0)
	g.tick(clk.now)
	if got, want := lastFrame(out.String()), "gc b: 7 entries, 3.5 entries/s"; got != want {
		t.Errorf("\n got %q\nwant %q", got, want)
	}
	// Rewrap reports uploads in progress that no listing found: more done
	// than listed is no "5/4".
	h := newReporter(&out, Options{Mode: Live, Now: clk.Now})
	h.Listed(4, 0, true)
	h.Add(5, 0)
	clk.advance(time.Second)
	h.tick(clk.now)
	if got, want := lastFrame(out.String()), "5 objects, 5.0 objects/s"; got != want {
		t.Errorf("\n got %q\nwant %q", got, want)
	}
}

// TestDrawOverwritesAndFits: a shorter frame blanks what is left of the
// longer one before it; a frame wider than the terminal is cut to one
// column less (a wrapped line cannot be redrawn with "\r").
func TestDrawOverwritesAndFits(t *testing.T) {
	var out bytes.Buffer
	width := 0
	r := newReporter(&out, Options{Mode: Live, Width: func() int { return width }})
	r.mu.Lock()
	defer r.mu.Unlock()
	r.draw("0123456789")
	r.draw("abc")
	if got, want := out.String(), "\r0123456789\rabc       "; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	out.Reset()
	width = 6
	r.draw("0123456789")
	if got, want := out.String(), "\r01234"; got != want {
		t.Errorf("on 6 columns: got %q, want %q", got, want)
	}
}

// TestLiveGoroutineAndWriter: Start draws at each tick; a line the
// command prints through Writer clears the frame first and has it drawn
// again after; Stop ends the goroutine and leaves the last frame.
func TestLiveGoroutineAndWriter(t *testing.T) {
	clk := newClock()
	ticks := make(chan time.Time)
	var out bytes.Buffer
	r := Start(&out, Options{Mode: Live, Label: "l", Now: clk.Now, Ticks: ticks})
	r.Listed(2, 0, true)
	r.Add(1, 0)
	clk.advance(time.Second)
	ticks <- clk.now
	var frame string
	for frame == "" {
		time.Sleep(time.Millisecond)
		r.mu.Lock()
		if r.drawn {
			frame = r.frame
			out.Reset()
		}
		r.mu.Unlock()
	}
	var stdout bytes.Buffer
	w := r.Writer(&stdout)
	w.Write([]byte("rewrapped b/k\n"))
	blank := "\r" + strings.Repeat(" ", len(frame)) + "\r"
	if got, want := out.String(), blank+"\r"+frame; got != want || stdout.String() != "rewrapped b/k\n" {
		t.Errorf("a line through Writer: stderr %q (want %q), stdout %q", got, want, stdout.String())
	}
	r.Add(1, 0)
	r.Stop()
	if got := out.String(); !strings.Contains(got, "\rl: 2/2 objects (100%), 2.0 objects/s, in 1s") || !strings.HasSuffix(got, "\n") {
		t.Errorf("after Stop: %q", got)
	}
	r.Stop() // twice is harmless
}

// TestStopWithNothingDone: a run that did nothing and drew nothing leaves
// nothing.
func TestStopWithNothingDone(t *testing.T) {
	var out bytes.Buffer
	Start(&out, Options{Mode: Live}).Stop()
	if out.Len() != 0 {
		t.Errorf("wrote %q", out.String())
	}
}

// TestLinesEvery: Lines writes "progress: ..." each time the count
// passes a multiple of Every, with the total and rate; Off and a Writer
// outside Live write nothing of their own.
func TestLinesEvery(t *testing.T) {
	clk := newClock()
	var out bytes.Buffer
	r := Start(&out, Options{Mode: Lines, Label: "verify b", Bytes: true, Every: 2, Now: clk.Now})
	r.Listed(5, 5000, false)
	for range 3 {
		clk.advance(time.Second)
		r.Add(1, 1000)
	}
	r.Listed(5, 5000, true)
	clk.advance(time.Second)
	r.Add(2, 2000) // passes 4 at once
	r.Stop()
	want := "progress: 2 objects, 2000 bytes of 5 listed so far; 1.0 objects/s, 1000 B/s (verify b)\n" +
		"progress: 5 objects, 5000 bytes of 5 (100%); 1.2 objects/s, 1.2 KiB/s, 0s left (verify b)\n"
	if out.String() != want {
		t.Errorf("\n got %q\nwant %q", out.String(), want)
	}

	out.Reset()
	off := Start(&out, Options{Mode: Off, Every: 1})
	off.Add(10, 10)
	off.Writer(&out).Write([]byte("x\n"))
	off.Stop()
	if out.String() != "x\n" {
		t.Errorf("Off wrote %q", out.String())
	}
}

func TestFormats(t *testing.T) {
	for n, want := range map[int64]string{0: "0 B", 1023: "1023 B", 1536: "1.5 KiB", 15 * mib: "15 MiB", 3 << 40: "3.0 TiB"} {
		if got := IBytes(n); got != want {
			t.Errorf("IBytes(%d) = %q, want %q", n, got, want)
		}
	}
	for d, want := range map[time.Duration]string{0: "0s", 4400 * time.Millisecond: "4s", 187 * time.Second: "3m07s", 2*time.Hour + 5*time.Minute + 40*time.Second: "2h06m"} {
		if got := Duration(d); got != want {
			t.Errorf("Duration(%v) = %q, want %q", d, got, want)
		}
	}
}
