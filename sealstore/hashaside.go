package sealstore

import (
	"io"
	"sync"
)

// Hashing beside sealing. A PUT's bytes go through MD5 (the ETag, 1.2 ns
// a byte on this kind of machine), the client's checksum and AES-GCM with
// the spool write (0.3 ns a byte together). hashAside runs the digests on
// a goroutine of their own while the caller's goroutine seals the same
// buffer, so one upload keeps two cores busy and MD5 alone bounds it.

// asideMin is the smallest write handed to the other goroutine; below it
// the handoff costs more than the hashing it moves. (A variable so that
// BenchmarkSealBody can compare with hashing in line.)
var asideMin = 16 << 10

// hashAside writes each buffer to seal on the caller's goroutine and to
// hashes on its own, and returns once both are done with it: p is never
// held past Write, as io.Writer requires. Close stops the goroutine; it
// must be called.
type hashAside struct {
	seal, hashes io.Writer
	work         chan []byte
	done         chan error
	once         sync.Once
}

func newHashAside(seal, hashes io.Writer) *hashAside {
	return &hashAside{seal: seal, hashes: hashes}
}

func (h *hashAside) Write(p []byte) (int, error) {
	if len(p) < asideMin {
		if _, err := h.hashes.Write(p); err != nil {
			return 0, err
		}
		return h.seal.Write(p)
	}
	h.once.Do(func() {
		h.work, h.done = make(chan []byte), make(chan error)
		go func() {
			for b := range h.work {
				_, err := h.hashes.Write(b)
				h.done <- err
			}
		}()
	})
	h.work <- p
	n, err := h.seal.Write(p)
	if herr := <-h.done; herr != nil && err == nil {
		return 0, herr
	}
	return n, err
}

// Close ends the hashing goroutine, if one was started.
func (h *hashAside) Close() {
	if h.work != nil {
		close(h.work)
		h.work = nil
	}
}

// bodyBufSize is the size of the buffers a body is read into before it
// is hashed and sealed: two segments, filled as far as the client's bytes
// allow, so the handoff between the goroutines is rare.
const bodyBufSize = 128 << 10

var bodyBufs = sync.Pool{New: func() any { b := make([]byte, bodyBufSize); return &b }}
