package crypto

import (
	"fmt"
	"io"
	"sync"
)

// segPool holds segment buffers of exactly one sealed segment:
// nonce || plaintext or ciphertext || tag. Buffers are zeroed before they go
// back, so plaintext never lingers in the pool.
var segPool = sync.Pool{New: func() any {
	b := make([]byte, sealedSegSize)
	return &b
}}

func getSegBuf() *[]byte { return segPool.Get().(*[]byte) }

func putSegBuf(b *[]byte) {
	clear(*b)
	segPool.Put(b)
}

// Writer seals a plaintext stream into segments as docs/FORMAT.md
// specifies and writes them to its destination. See [NewWriter].
type Writer struct {
	dst    io.Writer
	dk     *DataKey
	part   uint32
	aad    segAAD
	index  uint64  // index of the segment being filled
	buf    *[]byte // pooled; nil before the first Write and after Close or an error
	n      int     // plaintext bytes in (*buf)[nonceSize:]
	err    error   // sticky
	closed bool
}

// NewWriter returns a Writer that seals what is written to it with dk as
// stream s (the zero Stream for a single-PUT object, the part number and
// stream id for a multipart part) and writes the sealed segments to dst.
//
// A segment is written to dst once it is full and more plaintext follows;
// Close seals and writes the last one, which carries the final flag (an
// empty stream is one empty segment). Close must be called, or the stream
// is incomplete; Close does not close dst. The total written to dst is
// CiphertextSize(plaintext bytes written).
//
// The Writer holds one pooled 64 KiB buffer from the first Write to Close,
// whatever the stream size, and makes no allocation per segment. Once a
// Write or Close fails (dst, or the random source, failed), every later
// call returns the same error. A Writer is not safe for concurrent use;
// several Writers may share a DataKey.
func NewWriter(dst io.Writer, dk *DataKey, s Stream) *Writer {
	w := &Writer{dst: dst, dk: dk, part: s.Part}
	if dk == nil {
		w.err = errNilDataKey
		return w
	}
	w.aad.init(dk.oid, s)
	return w
}

// Write seals p into segments, writing each full segment that more
// plaintext follows. It returns len(p) unless an error occurred.
func (w *Writer) Write(p []byte) (int, error) {
	if w.err != nil {
		return 0, w.err
	}
	if w.closed {
		return 0, errWriteAfterClose
	}
	written := 0
	for len(p) > 0 {
		if w.buf == nil {
			w.buf = getSegBuf()
		}
		if w.n == SegmentSize { // full, and p holds more: not the last segment
			if err := w.seal(nil, false); err != nil {
				return written, err
			}
		}
		if w.n == 0 && len(p) > SegmentSize {
			// A whole non-final segment straight from p, saving a copy.
			if err := w.seal(p[:SegmentSize], false); err != nil {
				return written, err
			}
			p, written = p[SegmentSize:], written+SegmentSize
			continue
		}
		c := copy((*w.buf)[nonceSize+w.n:nonceSize+SegmentSize], p)
		w.n += c
		p, written = p[c:], written+c
	}
	return written, nil
}

// Close seals and writes the final segment (the only one of an empty
// stream) and releases the buffer. It does not close dst. Calling Close
// again returns the first call's result.
func (w *Writer) Close() error {
	if w.closed {
		return w.err
	}
	w.closed = true
	if w.err != nil {
		return w.err
	}
	if w.buf == nil {
		w.buf = getSegBuf()
	}
	err := w.seal(nil, true)
	w.release()
	return err
}

// seal seals the buffered plaintext, or src if it is not nil (then the
// buffer is empty), as segment w.index and writes it to dst.
func (w *Writer) seal(src []byte, final bool) error {
	b := *w.buf
	nonce := b[:nonceSize]
	if _, err := io.ReadFull(w.dk.rand, nonce); err != nil {
		return w.fail(fmt.Errorf("reading nonce: %w", err))
	}
	if src == nil {
		src = b[nonceSize : nonceSize+w.n]
	}
	// Seal in place: the ciphertext overwrites the plaintext (or lands in
	// the buffer when sealing straight from src).
	ct := w.dk.aead.Seal(b[nonceSize:nonceSize], nonce, src, w.aad.set(w.index, final))
	out := b[:nonceSize+len(ct)]
	n, err := w.dst.Write(out)
	if err == nil && n != len(out) {
		err = io.ErrShortWrite
	}
	if err != nil {
		return w.fail(fmt.Errorf("writing segment %d of part %d: %w", w.index, w.part, err))
	}
	w.index++
	w.n = 0
	return nil
}

func (w *Writer) fail(err error) error {
	w.err = err
	w.release()
	return err
}

func (w *Writer) release() {
	if w.buf != nil {
		putSegBuf(w.buf)
		w.buf = nil
	}
	w.n = 0
}
