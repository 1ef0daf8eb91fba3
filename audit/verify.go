package audit

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"strings"
)

// File is one file of a trail, for Verify: its name (for messages) and
// its content.
type File struct {
	Name string
	R    io.Reader
}

// Result is what Verify found in a trail that verifies.
type Result struct {
	Lines int
	// FirstSeq and LastSeq are the sequence numbers of the first and
	// last lines.
	FirstSeq, LastSeq uint64
	// Genesis says the first line begins a new trail (prev_seq 0): no
	// line before it can have been removed. Otherwise the first file
	// continues one whose earlier files were not given, and only its
	// anchor (PrevSeq) is known.
	Genesis bool
	PrevSeq uint64
	// Checkpoint says the last line is a clean stop's checkpoint: the
	// trail was closed there. Without it, lines written after the last
	// one may have been cut, or s3seal is still writing.
	Checkpoint bool
	// Rotated says the last line is a rotation's checkpoint: the file
	// after it was not given, or was removed. The trail is not closed
	// (Checkpoint is false): a rotation's checkpoint is always followed
	// by the next file's start line.
	Rotated bool
	// Unclosed are the sequence numbers of the start lines that follow,
	// in the files given, a line that is no checkpoint: s3seal restarted
	// after a crash, or after lines before the restart were cut (an
	// anchor kept from before then is the way to tell).
	Unclosed []uint64
	// LastMAC is the last line's MAC, hex.
	LastMAC string
}

// Failure is where a trail first fails to verify.
type Failure struct {
	File   string
	Line   int    // 1-based, in File
	Seq    uint64 // the sequence number it claims, 0 when unreadable
	Reason string
}

func (f *Failure) Error() string {
	return fmt.Sprintf("%s:%d: %s", f.File, f.Line, f.Reason)
}

// maxLine bounds a line Verify reads (the writer cuts every field at
// maxField bytes, at most six bytes each written).
const maxLine = 1 << 20

// Verify checks the files of a trail, in order, under the chain key:
// every line well formed and sealed by the MAC chained from the line
// before, sequence numbers consecutive, each file (and each restart
// within one) begun by a start line anchored on the line before it.
// A changed, removed, inserted or reordered line fails, as does a file
// missing between two given, or a cut last line; the first failure is
// returned as a *Failure. A trail whose last lines were all removed, with
// no checkpoint, cannot be told from one still being written: Result.
// Checkpoint says whether it was closed, and lastMAC (hex, "" for none)
// anchors its end to a MAC kept elsewhere.
func Verify(key []byte, files []File, lastMAC string) (Result, error) {
	ch, err := newChain(key)
	if err != nil {
		return Result{}, err
	}
	var (
		res   Result
		prev  [sha256.Size]byte
		begun bool
	)
	for _, f := range files {
		br := bufio.NewReaderSize(f.R, 64<<10)
		for n := 1; ; n++ {
			line, err := readLine(br)
			if err == io.EOF {
				if n == 1 {
					return res, &Failure{File: f.Name, Line: 1, Reason: "the file is empty: a trail's file begins with a start line"}
				}
				break
			}
			fail := func(seq uint64, format string, args ...any) error {
				return &Failure{File: f.Name, Line: n, Seq: seq, Reason: fmt.Sprintf(format, args...)}
			}
			if err != nil {
				return res, fail(0, "%v", err)
			}
			body, mac, l, err := splitLine(line)
			if err != nil {
				return res, fail(0, "%v", err)
			}
			if n == 1 && l.Type != TypeStart {
				return res, fail(l.Seq, "a file begins with a start line, not %q: its first lines were removed", l.Type)
			}
			if l.Type == TypeStart {
				anchor, err := parseMAC(l.PrevMAC)
				if err != nil {
					return res, fail(l.Seq, "start line: prev_mac: %v", err)
				}
				if !begun {
					prev, res.PrevSeq, res.Genesis, res.FirstSeq = anchor, l.PrevSeq, l.PrevSeq == 0, l.PrevSeq+1
					res.LastSeq = l.PrevSeq
					begun = true
				} else if anchor != prev || l.PrevSeq != res.LastSeq {
					return res, fail(l.Seq, "start line anchored on seq %d (mac %.16s…), but the line before is seq %d (mac %.16s…): lines are missing or out of order between them",
						l.PrevSeq, l.PrevMAC, res.LastSeq, hex.EncodeToString(prev[:]))
				} else if !res.Checkpoint && !res.Rotated {
					res.Unclosed = append(res.Unclosed, l.Seq)
				}
			}
			if l.Seq != res.LastSeq+1 {
				return res, fail(l.Seq, "seq %d follows seq %d: lines are missing or out of order", l.Seq, res.LastSeq)
			}
			if ch.next(prev, body) != mac {
				return res, fail(l.Seq, "the MAC does not verify: this line was changed (or the one before it, or the key is not the trail's)")
			}
			prev, res.LastSeq = mac, l.Seq
			res.Lines++
			res.Rotated = l.Type == TypeCheckpoint && l.Reason == reasonRotation
			res.Checkpoint = l.Type == TypeCheckpoint && !res.Rotated
		}
	}
	if !begun {
		return res, errors.New("no file to verify")
	}
	res.LastMAC = hex.EncodeToString(prev[:])
	lastMAC = strings.ToLower(strings.TrimSpace(lastMAC)) // as copied from a log
	if lastMAC != "" && lastMAC != res.LastMAC {
		return res, &Failure{File: files[len(files)-1].Name, Line: 0, Seq: res.LastSeq,
			Reason: fmt.Sprintf("the last line (seq %d) is not the anchor given (mac %.16s…): the trail's end was cut, or lines follow it", res.LastSeq, lastMAC)}
	}
	return res, nil
}

// readLine reads one line, without its newline; a last line without
// one was cut.
func readLine(br *bufio.Reader) ([]byte, error) {
	var line []byte
	for {
		frag, err := br.ReadSlice('\n')
		line = append(line, frag...)
		switch {
		case err == bufio.ErrBufferFull:
			if len(line) > maxLine {
				return nil, fmt.Errorf("a line longer than %d bytes", maxLine)
			}
			continue
		case err == io.EOF && len(line) == 0:
			return nil, io.EOF
		case err == io.EOF:
			return nil, errors.New("the line is cut (no newline at its end)")
		case err != nil:
			return nil, err
		}
		return bytes.TrimSuffix(line, []byte("\n")), nil
	}
}
