package crypto

import (
	"errors"
	"fmt"
	"io"
)

// NewReader returns a reader of the plaintext range [off, off+length) of a
// stream of plainSize bytes sealed with dk as stream s.
//
// src must deliver exactly the ciphertext range CipherRange(plainSize, off,
// length) of the stream: for a whole stream, off = 0, length = plainSize
// and src the whole ciphertext. The reader opens each segment of that range
// in turn, checking through its associated data that it is the expected
// segment (oid, part, stream id, index, and final flag set exactly on segment
// Segments(plainSize)-1), drops the bytes before off and stops after length
// bytes. When the range includes the final segment the reader also checks
// that src ends right after it (wrap a body that goes on, for example the
// next part, in io.LimitReader).
//
// A segment that fails authentication yields an error matching [ErrAuth]; a
// src that ends early (with io.EOF or io.ErrUnexpectedEOF, as an HTTP body
// cut short does) or goes on after the final segment yields an error
// matching [ErrCorrupt], never a clean io.EOF; any other error of src is
// returned wrapped. Every error is final. The reader returns only plaintext
// of segments it has authenticated, and reports io.EOF only after every
// segment of the range (and the end of src where checked) has been
// verified.
//
// It holds one pooled 64 KiB buffer while reading, returned at io.EOF or
// the first error, and makes no allocation per segment. The reader also
// implements io.WriterTo. It is not safe for concurrent use.
//
// NewReader fails (with an error that is not an [*Error]) when dk is nil or
// the range is out of bounds.
func NewReader(src io.Reader, dk *DataKey, s Stream, plainSize, off, length int64) (io.Reader, error) {
	if dk == nil {
		return nil, errNilDataKey
	}
	if plainSize < 0 || plainSize > MaxPlainSize || off < 0 || length < 0 || off > plainSize || length > plainSize-off {
		return nil, fmt.Errorf("NewReader: range [%d, +%d) outside a stream of %d bytes", off, length, plainSize)
	}
	r := &reader{src: src, dk: dk, part: s.Part, plainSize: plainSize, nseg: Segments(plainSize), left: length}
	r.aad.init(dk.oid, s)
	switch {
	case plainSize == 0: // the one empty segment, to authenticate it
		r.next, r.last = 0, 0
	case length == 0: // nothing to read
		r.next, r.last = 1, 0
	default:
		r.next, r.last = off/SegmentSize, (off+length-1)/SegmentSize
		r.skip = int(off - r.next*SegmentSize)
	}
	return r, nil
}

type reader struct {
	src       io.Reader
	dk        *DataKey
	part      uint32
	aad       segAAD
	plainSize int64
	nseg      int64   // segments in the stream
	next      int64   // index of the next segment to open
	last      int64   // index of the last segment of the range
	skip      int     // plaintext bytes to drop from the first segment
	left      int64   // plaintext bytes of the range not yet opened
	buf       *[]byte // pooled; nil before the first segment and after the end
	out       []byte  // authenticated plaintext not yet returned, within buf
	err       error   // sticky: io.EOF or the first error
	probe     [1]byte // for the end-of-src check
}

func (r *reader) Read(p []byte) (int, error) {
	if len(r.out) == 0 {
		if err := r.fill(); err != nil {
			return 0, err
		}
	}
	n := copy(p, r.out)
	r.out = r.out[n:]
	return n, nil
}

// WriteTo writes the rest of the range to w without an intermediate copy.
func (r *reader) WriteTo(w io.Writer) (int64, error) {
	var total int64
	for {
		if len(r.out) == 0 {
			if err := r.fill(); err == io.EOF {
				return total, nil
			} else if err != nil {
				return total, err
			}
		}
		n, err := w.Write(r.out)
		total += int64(n)
		r.out = r.out[n:]
		if err == nil && len(r.out) > 0 {
			err = io.ErrShortWrite
		}
		if err != nil {
			return total, err
		}
	}
}

// fill opens segments until r.out holds plaintext or the range is done.
func (r *reader) fill() error {
	for len(r.out) == 0 {
		if r.err != nil {
			return r.err
		}
		if r.next > r.last {
			r.end(io.EOF)
			return io.EOF
		}
		if err := r.open(); err != nil {
			r.end(err)
			return err
		}
	}
	return nil
}

func (r *reader) end(err error) {
	r.err = err
	r.out = nil
	if r.buf != nil {
		putSegBuf(r.buf)
		r.buf = nil
	}
}

// open reads, authenticates and opens segment r.next into r.out.
func (r *reader) open() error {
	if r.buf == nil {
		r.buf = getSegBuf()
	}
	i := r.next
	seg := (*r.buf)[:segPlainLen(r.plainSize, i)+SegmentOverhead]
	if err := r.readSegment(seg, i); err != nil {
		return err
	}
	final := i == r.nseg-1
	pt, err := r.dk.aead.Open(seg[nonceSize:nonceSize], seg[:nonceSize], seg[nonceSize:], r.aad.set(uint64(i), final))
	if err != nil {
		return newErr(ErrAuth, "segment %d of part %d", i, r.part)
	}
	if final {
		if err := r.checkEnd(); err != nil {
			return err
		}
	}
	pt = pt[r.skip:]
	r.skip = 0
	if int64(len(pt)) > r.left {
		pt = pt[:r.left]
	}
	r.left -= int64(len(pt))
	r.out = pt
	r.next++
	return nil
}

// readSegment fills seg from src. An end of src before seg is full means
// the stream is truncated: the reader knows how many bytes it needs, so a
// short src is corruption, whichever end-of-data error src reports; any
// other error of src is returned wrapped.
func (r *reader) readSegment(seg []byte, i int64) error {
	n := 0
	for n < len(seg) {
		m, err := r.src.Read(seg[n:])
		n += m
		if n == len(seg) {
			break
		}
		if err == io.EOF || errors.Is(err, io.ErrUnexpectedEOF) {
			return newErr(ErrCorrupt, "stream of part %d truncated: segment %d has %d of %d bytes", r.part, i, n, len(seg))
		}
		if err != nil {
			return fmt.Errorf("reading segment %d of part %d: %w", i, r.part, err)
		}
	}
	return nil
}

// checkEnd makes sure src ends after the final segment.
func (r *reader) checkEnd() error {
	for range 100 {
		n, err := r.src.Read(r.probe[:])
		if n > 0 {
			return newErr(ErrCorrupt, "data after the final segment of part %d", r.part)
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("reading the end of part %d: %w", r.part, err)
		}
	}
	return fmt.Errorf("reading the end of part %d: %w", r.part, io.ErrNoProgress)
}
