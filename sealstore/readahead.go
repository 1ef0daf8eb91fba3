package sealstore

import (
	"fmt"
	"io"
	"sync"
)

// Reading ahead on GET. A GET's bytes are fetched from the backend,
// authenticated and decrypted, then written to the client. In one
// goroutine each step waits for the others; WriteTo runs the first two on
// a goroutine of its own, a few segments ahead of the client, so the
// store's sending, the decryption and the client's receiving overlap.

// aheadBufs is how many buffers of aheadBufSize a GET holds: one filling,
// one ready, one being written.
const (
	aheadBufs    = 3
	aheadBufSize = 64 << 10
)

// aheadPool keeps the buffers of GETs that ended cleanly; those of a GET
// that ended early may still be in its goroutine's hands and are left to
// the garbage collector.
var aheadPool = sync.Pool{New: func() any { b := make([]byte, aheadBufSize); return &b }}

type aheadChunk struct {
	b   []byte
	err error
}

// WriteTo writes the Reader's Len bytes to w, reading ahead of w on a
// goroutine (see above); it stops at the first error of either side. After
// the Len bytes it reads the source to its end, as a copy that reads until
// io.EOF would: the checks the source makes there (the empty parts that
// end a multipart object authenticated, nothing after the last part) are
// made before WriteTo reports success (verify and the LFS read-back copy
// with io.Copy, which comes here). It does not close the Reader, which the
// caller still must; the goroutine ends when WriteTo returns, at the
// latest once Close ends its read.
func (r *Reader) WriteTo(w io.Writer) (int64, error) {
	src := &lenReader{r: r.Reader, left: r.Len}
	if r.Len <= aheadBufSize { // nothing to overlap
		return io.CopyBuffer(w, src, make([]byte, aheadBufSize))
	}
	full := make(chan aheadChunk, aheadBufs)
	free := make(chan []byte, aheadBufs)
	done := make(chan struct{})
	defer close(done)
	for range aheadBufs {
		free <- *aheadPool.Get().(*[]byte)
	}
	go func() {
		for {
			var b []byte
			select {
			case b = <-free:
			case <-done:
				return
			}
			n, err := fill(src, b)
			select {
			case full <- aheadChunk{b[:n], err}:
			case <-done:
				return
			}
			if err != nil {
				return
			}
		}
	}()
	var written int64
	for {
		c := <-full
		if len(c.b) > 0 {
			m, err := w.Write(c.b)
			written += int64(m)
			if err != nil {
				return written, err
			}
		}
		if c.err == io.EOF { // the goroutine has ended: every buffer is back
			last := c.b[:cap(c.b)]
			aheadPool.Put(&last)
			for range len(free) {
				b := <-free
				aheadPool.Put(&b)
			}
			return written, nil
		}
		if c.err != nil {
			return written, c.err
		}
		free <- c.b[:cap(c.b)]
	}
}

// fill reads src into b until b is full or src fails; a bare io.EOF
// comes back as it is.
func fill(src io.Reader, b []byte) (int, error) {
	n := 0
	for n < len(b) {
		m, err := src.Read(b[n:])
		n += m
		if err != nil {
			return n, err
		}
	}
	return n, nil
}

// lenReader reads left bytes of r and then r's end: a bare io.EOF, or the
// error r reports there. A byte beyond left is an error: the Reader holds
// more than it said.
type lenReader struct {
	r    io.Reader
	left int64
}

func (l *lenReader) Read(p []byte) (int, error) {
	if l.left <= 0 {
		var one [1]byte
		for {
			n, err := l.r.Read(one[:])
			if n > 0 {
				return 0, fmt.Errorf("%w: the plaintext goes on past its length", ErrIntegrity)
			}
			if err != nil {
				return 0, err // a bare io.EOF is the clean end
			}
		}
	}
	if int64(len(p)) > l.left {
		p = p[:l.left]
	}
	n, err := l.r.Read(p)
	l.left -= int64(n)
	return n, err
}
