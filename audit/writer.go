package audit

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"sync"
	"time"
)

// Options say how a Writer keeps its lines. The zero value is the
// default: buffered, flushed every second, never fsynced but at a
// rotation or a close, no size limit.
type Options struct {
	// Sync writes each line through to the file and fsyncs it before the
	// call returns: a crash loses no acknowledged line, at the cost of a
	// disk flush per request.
	Sync bool
	// MaxSize rotates the file once it reaches this many bytes: it is
	// renamed to its name followed by "." and the time (UTC), and a new
	// one begun. 0: never.
	MaxSize int64
	// FlushEvery bounds how long a line waits in memory. Default 1 s.
	FlushEvery time.Duration
	// OnError is told of the first failure to write (the Writer then
	// refuses every record until a Rotate opens a file again). Default
	// none.
	OnError func(error)
	// Now gives the lines' time. Default time.Now.
	Now func() time.Time
	// AnchorFile, when set, keeps the last line's seq and MAC (written
	// at start, at each rotation and at a clean stop) where the trail's
	// files are not: in s3seal's own data directory.
	AnchorFile string
}

// Writer appends an audit trail to a file (or a stream) and rotates it.
// It is safe for concurrent use; each record is one line, chained to the
// one before. Once a write fails every record fails with that error
// (never a line dropped silently) until Rotate opens a file again.
type Writer struct {
	mu   sync.Mutex
	opt  Options
	path string   // "" for a stream
	file *os.File // nil for a stream
	bw   *bufio.Writer
	ch   *chain
	mac  [sha256.Size]byte // the last line's
	seq  uint64            // the last line's
	size int64             // of the current file
	err  error             // sticky: the first write that failed
	buf  []byte            // the body being sealed
	line []byte            // the line being written
	done chan struct{}     // closed by Close: stops the flusher
	wg   sync.WaitGroup
}

// Open appends the trail to the file at path, made (mode 600) if it does
// not exist. A file that holds a trail already is continued: its last
// line must verify under key (the MAC of the line before it, or its own
// anchor), and a last line cut by a crash is dropped first; the new lines
// begin with a start line anchored on the last one kept.
func Open(path string, key []byte, opt Options) (*Writer, error) {
	w, err := newWriter(key, opt)
	if err != nil {
		return nil, err
	}
	w.path = path
	kept, hasAnchor, err := readAnchor(opt.AnchorFile)
	if err != nil {
		return nil, err
	}
	reason, err := w.openFile(true)
	if err != nil {
		return nil, err
	}
	if hasAnchor {
		reason = w.checkAnchor(reason, kept)
	}
	if err := w.begin(reason); err != nil {
		w.file.Close()
		return nil, err
	}
	if err := w.keepAnchor(); err != nil {
		w.file.Close()
		return nil, err
	}
	w.startFlusher()
	return w, nil
}

// anchor is a line's seq and MAC, as Options.AnchorFile keeps them.
type anchor struct {
	seq uint64
	mac [sha256.Size]byte
}

// readAnchor reads the anchor file ("" or missing: none).
func readAnchor(path string) (a anchor, ok bool, err error) {
	if path == "" {
		return a, false, nil
	}
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return a, false, nil
	}
	if err != nil {
		return a, false, err
	}
	var mac string
	if _, err := fmt.Sscanf(string(b), "%d %s\n", &a.seq, &mac); err != nil {
		return a, false, fmt.Errorf("%s: not an audit anchor (seq and mac): %v", path, err)
	}
	if a.mac, err = parseMAC(mac); err != nil {
		return a, false, fmt.Errorf("%s: not an audit anchor: %v", path, err)
	}
	return a, true, nil
}

// checkAnchor compares what the file holds (w.seq, w.mac, after
// openFile) with the anchor s3seal kept when it last wrote the trail,
// and returns the start line's reason: an empty or missing file goes on
// from the anchor (moved aside, or removed, while s3seal was stopped); a
// file that ends before the anchor was cut.
func (w *Writer) checkAnchor(reason string, kept anchor) string {
	switch {
	case w.seq == 0:
		w.seq, w.mac = kept.seq, kept.mac
		return fmt.Sprintf("the trail's file was missing or empty: continued from the anchor s3seal kept (seq %d); its earlier files were moved aside or removed", kept.seq)
	case w.seq < kept.seq:
		return reason + fmt.Sprintf("; the anchor s3seal kept is seq %d: lines were cut after seq %d", kept.seq, w.seq)
	case w.seq == kept.seq && w.mac != kept.mac:
		return reason + fmt.Sprintf("; the anchor s3seal kept at seq %d has another MAC: the file was replaced", kept.seq)
	}
	return reason
}

// keepAnchor writes the last line's seq and MAC to the anchor file, when
// there is one, atomically.
func (w *Writer) keepAnchor() error {
	if w.opt.AnchorFile == "" {
		return nil
	}
	tmp := w.opt.AnchorFile + ".tmp"
	text := fmt.Sprintf("%d %s\n", w.seq, hex.EncodeToString(w.mac[:]))
	if err := os.WriteFile(tmp, []byte(text), 0o600); err != nil {
		return fmt.Errorf("the audit anchor: %w", err)
	}
	if err := os.Rename(tmp, w.opt.AnchorFile); err != nil {
		return fmt.Errorf("the audit anchor: %w", err)
	}
	return nil
}

// NewStream writes a new trail to out (standard output, for `--audit-log
// -`): it cannot be continued or rotated.
func NewStream(out io.Writer, key []byte, opt Options) (*Writer, error) {
	w, err := newWriter(key, opt)
	if err != nil {
		return nil, err
	}
	w.bw = bufio.NewWriterSize(out, 64<<10)
	if err := w.begin("a new trail"); err != nil {
		return nil, err
	}
	w.startFlusher()
	return w, nil
}

func newWriter(key []byte, opt Options) (*Writer, error) {
	ch, err := newChain(key)
	if err != nil {
		return nil, err
	}
	if opt.FlushEvery <= 0 {
		opt.FlushEvery = time.Second
	}
	if opt.Now == nil {
		opt.Now = time.Now
	}
	return &Writer{opt: opt, ch: ch, done: make(chan struct{})}, nil
}

// Access records an access decision. It fails when the trail cannot be
// written: the caller refuses the request (s3seal fails closed).
func (w *Writer) Access(a Access) error {
	d := "deny"
	if a.Allow {
		d = "allow"
	}
	return w.write(Line{Type: TypeAccess, RequestID: a.RequestID, AccessKey: a.AccessKey, Account: a.Account,
		Op: a.Op, Bucket: a.Bucket, Key: a.Key, VersionID: a.VersionID, Decision: d, Rule: a.Rule, Reason: a.Reason})
}

// KeyUse records a use of a master key.
func (w *Writer) KeyUse(k KeyUse) error {
	return w.write(Line{Type: TypeKey, RequestID: k.RequestID, Op: k.Op, KeyID: k.KeyID,
		Bucket: k.Bucket, Key: k.Key, Outcome: k.Outcome})
}

// Last returns the sequence number and MAC (hex) of the last line
// written: an anchor to keep outside the trail (s3seal logs it at each
// rotation and at shutdown; `s3seal audit verify --last-mac` checks it).
func (w *Writer) Last() (seq uint64, mac string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.seq, hex.EncodeToString(w.mac[:])
}

// write seals l and appends it.
func (w *Writer) write(l Line) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.err != nil {
		return w.err
	}
	if w.bw == nil {
		return errors.New("the audit trail is closed")
	}
	if err := w.appendLocked(l); err != nil {
		return err
	}
	if w.opt.MaxSize > 0 && w.file != nil && w.size >= w.opt.MaxSize {
		return w.rotateLocked(true, "")
	}
	return nil
}

// appendLocked gives l the next sequence number and the time, encodes,
// seals and writes it. Encoding by hand under the lock costs less than
// encoding/json outside it, and allocates nothing.
func (w *Writer) appendLocked(l Line) error {
	l.Seq = w.seq + 1
	w.buf = appendBody(w.buf[:0], l, w.opt.Now())
	mac := w.ch.next(w.mac, w.buf)
	w.line = appendLine(w.line[:0], w.buf, mac)
	var err error
	if len(w.line) > w.bw.Available() && w.bw.Buffered() > 0 {
		// The file only ever ends at a line's end: a reader of the live
		// file (audit verify, a shipper) never finds a cut line.
		err = w.bw.Flush()
	}
	n := 0
	if err == nil {
		n, err = w.bw.Write(w.line)
	}
	w.size += int64(n)
	if err == nil && w.opt.Sync {
		err = w.syncLocked()
	}
	if err != nil {
		return w.fail(err)
	}
	w.seq, w.mac = l.Seq, mac
	return nil
}

// Err is the failure every record now fails with, nil while the trail is
// written (and after a Rotate opened a file again): /readyz reports it,
// so that a replica refusing every request leaves its load balancer.
func (w *Writer) Err() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.err
}

// fail makes err the writer's sticky error.
func (w *Writer) fail(err error) error {
	if w.err == nil {
		w.err = fmt.Errorf("the audit trail cannot be written: %w", err)
		if w.opt.OnError != nil {
			w.opt.OnError(w.err)
		}
	}
	return w.err
}

func (w *Writer) syncLocked() error {
	if err := w.bw.Flush(); err != nil {
		return err
	}
	if w.file != nil {
		return w.file.Sync()
	}
	return nil
}

// begin writes a start line anchored on the last line (seq and MAC).
func (w *Writer) begin(reason string) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	l := Line{Type: TypeStart, Reason: reason,
		PrevSeq: w.seq, PrevMAC: hex.EncodeToString(w.mac[:])}
	if err := w.appendLocked(l); err != nil {
		return err
	}
	return w.syncLocked()
}

// Rotate ends the current file with a checkpoint line, closes it, and
// opens the path again, where the operator (or logrotate) has moved the
// old file aside: the new file begins with a start line anchored on the
// checkpoint. After a failure to write it is how the trail is resumed
// (the start line says so). A stream is only flushed.
func (w *Writer) Rotate() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.file == nil {
		if w.bw == nil {
			return errors.New("the audit trail is closed")
		}
		return w.bw.Flush()
	}
	return w.rotateLocked(false, "")
}

// rotateLocked closes the current file with a checkpoint (renaming it
// aside when rename is set) and begins the next, whose start line says
// why ("rotated" when why is "").
func (w *Writer) rotateLocked(rename bool, why string) error {
	reason := "rotated"
	if why != "" {
		reason = why
	}
	if w.err == nil {
		cp := Line{Type: TypeCheckpoint, Reason: reasonRotation}
		if err := w.appendLocked(cp); err == nil {
			if err := w.syncLocked(); err != nil {
				w.fail(err)
			}
		}
	}
	if w.err != nil {
		reason = fmt.Sprintf("reopened after a failed write (%v): the file before may lack lines up to seq %d", w.err, w.seq)
		// Left in place (SIGHUP once room was made), the failed file may
		// end in a cut line: it is moved aside, as a size rotation
		// would, so that the new lines begin a file of their own.
		if !rename && w.stillAtPath() {
			rename = true
		}
	}
	w.file.Close()
	if rename {
		aside := w.path + "." + w.opt.Now().UTC().Format("20060102T150405.000000000Z")
		// Moved aside already (logrotate, its SIGHUP still to come): the
		// checkpoint ended it, and a new file begins as well.
		if err := os.Rename(w.path, aside); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return w.fail(err)
		}
	}
	w.err = nil
	if _, err := w.openFile(false); err != nil {
		w.bw = bufio.NewWriter(io.Discard) // nothing reaches the closed file
		return w.fail(err)
	}
	l := Line{Type: TypeStart, Reason: reason,
		PrevSeq: w.seq, PrevMAC: hex.EncodeToString(w.mac[:])}
	if err := w.appendLocked(l); err != nil {
		return err
	}
	if err := w.syncLocked(); err != nil {
		return w.fail(err)
	}
	return w.keepAnchor()
}

// goneFromPath reports whether the path no longer names the file being
// written: removed, or another file put there. Any other failure to
// tell is not taken for it.
func (w *Writer) goneFromPath() bool {
	b, err := os.Stat(w.path)
	if errors.Is(err, fs.ErrNotExist) {
		return true
	}
	if err != nil {
		return false
	}
	a, err := w.file.Stat()
	return err == nil && !os.SameFile(a, b)
}

// stillAtPath reports whether the file being written is still the one
// at its path (not moved aside by the operator).
func (w *Writer) stillAtPath() bool {
	a, err := w.file.Stat()
	if err != nil {
		return false
	}
	b, err := os.Stat(w.path)
	return err == nil && os.SameFile(a, b)
}

// Close ends the trail with a checkpoint line, flushes, fsyncs and
// closes it.
func (w *Writer) Close() error {
	w.mu.Lock()
	if w.bw == nil {
		w.mu.Unlock()
		return nil
	}
	close(w.done)
	var err error
	if w.err == nil {
		cp := Line{Type: TypeCheckpoint, Reason: "shutdown"}
		if err = w.appendLocked(cp); err == nil {
			err = w.syncLocked()
		}
		if err == nil {
			err = w.keepAnchor()
		}
	} else {
		err = w.err
	}
	if w.file != nil {
		if cerr := w.file.Close(); err == nil {
			err = cerr
		}
	}
	w.bw, w.file = nil, nil
	w.mu.Unlock()
	w.wg.Wait()
	return err
}

// startFlusher flushes the buffer every FlushEvery.
func (w *Writer) startFlusher() {
	w.wg.Add(1)
	go func() {
		defer w.wg.Done()
		t := time.NewTicker(w.opt.FlushEvery)
		defer t.Stop()
		for {
			select {
			case <-w.done:
				return
			case <-t.C:
			}
			w.mu.Lock()
			if w.err == nil && w.bw != nil && w.bw.Buffered() > 0 {
				if err := w.bw.Flush(); err != nil {
					w.fail(err)
				}
			}
			if w.err == nil && w.file != nil && w.goneFromPath() {
				// Moved or removed without a SIGHUP: lines must not go on
				// into a file nobody may read. (logrotate's own SIGHUP,
				// if one follows, rotates the new file once more.)
				_ = w.rotateLocked(false, "rotated: the file before was moved or removed without SIGHUP")
			}
			w.mu.Unlock()
		}
	}()
}

// openFile opens the file at w.path for appending. With resume, a trail
// already in it is continued (resumeTail): it returns what the start
// line is to say.
func (w *Writer) openFile(resume bool) (string, error) {
	f, err := os.OpenFile(w.path, os.O_RDWR|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return "", err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return "", err
	}
	reason := "a new trail"
	if !resume {
		reason = "rotated"
	}
	size := st.Size()
	if resume && size > 0 {
		if reason, size, err = w.resumeTail(f, size); err != nil {
			f.Close()
			return "", fmt.Errorf("%s: %w", w.path, err)
		}
	}
	w.file, w.size = f, size
	w.bw = bufio.NewWriterSize(f, 64<<10)
	return reason, nil
}

// tailWindow is how much of a file's end resumeTail reads: more than two
// lines of any record s3seal writes (maxField bounds each field).
const tailWindow = 256 << 10

// resumeTail reads the end of f (size bytes): the last complete line
// gives the chain's seq and MAC, once checked under the key; a line cut
// by a crash after it is truncated away. It returns what the start line
// says and the file's size after.
func (w *Writer) resumeTail(f *os.File, size int64) (string, int64, error) {
	from := max(size-tailWindow, 0)
	tail := make([]byte, size-from)
	if _, err := f.ReadAt(tail, from); err != nil {
		return "", 0, err
	}
	end := bytes.LastIndexByte(tail, '\n') + 1
	if end == 0 {
		return "", 0, errors.New("it holds no complete audit line: move it aside")
	}
	lines := bytes.Split(tail[:end-1], []byte("\n"))
	if from > 0 {
		lines = lines[1:] // maybe the end of a line
	}
	if len(lines) == 0 {
		return "", 0, errors.New("its last line is longer than any audit line: move it aside")
	}
	body, mac, last, err := splitLine(lines[len(lines)-1])
	if err != nil {
		return "", 0, fmt.Errorf("its last complete line: %v; move it aside", err)
	}
	prev, checkable := zeroMAC, false
	if len(lines) >= 2 {
		if _, pm, _, err := splitLine(lines[len(lines)-2]); err == nil {
			prev, checkable = pm, true
		}
	} else if last.Type == TypeStart {
		if pm, err := parseMAC(last.PrevMAC); err == nil {
			prev, checkable = pm, true
		}
	}
	if checkable && w.ch.next(prev, body) != mac {
		return "", 0, errors.New("its last line does not verify under this audit key (written under another key, or edited): move it aside, `s3seal audit verify` says which line fails")
	}
	reason := "restarted after a clean stop"
	if last.Type != TypeCheckpoint {
		reason = "restarted: the line before is no checkpoint (s3seal stopped without closing the trail, or its end was cut)"
	}
	if cut := int64(len(tail) - end); cut > 0 {
		if err := f.Truncate(from + int64(end)); err != nil {
			return "", 0, err
		}
		reason += fmt.Sprintf("; %d bytes of a cut last line dropped", cut)
		size = from + int64(end)
	}
	w.seq, w.mac = last.Seq, mac
	return reason, size, nil
}
