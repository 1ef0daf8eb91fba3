package sealstore

import (
	"errors"
	"fmt"
	"io"
	"sync"
	"syscall"
)

// DefaultSpoolReserve is the free space of the spool's filesystem that
// spool files never take (Options.SpoolReserve).
const DefaultSpoolReserve = 256 << 20

// spoolGrowStep is how much more room a spool file whose length was not
// declared asks for each time it outgrows what it was given.
const spoolGrowStep = 4 << 20

// spoolSpace admits spool bytes against the free space of the spool
// directory's filesystem: a body is refused with 503 SlowDown, before a
// byte of it is written, when it would leave less than the reserve free.
// Bytes admitted but not written yet are pending; written bytes show in
// the filesystem's own free count, so each is counted once (or, for the
// moment between a write and its accounting, twice: never too few).
type spoolSpace struct {
	dir     string
	reserve int64
	free    func(dir string) (int64, error) // bytes an unprivileged writer may still take

	mu      sync.Mutex
	pending int64
}

func newSpoolSpace(dir string, reserve int64, free func(string) (int64, error)) *spoolSpace {
	if reserve == 0 {
		reserve = DefaultSpoolReserve
	}
	if reserve < 0 {
		reserve = 0
	}
	if free == nil {
		free = freeSpace
	}
	return &spoolSpace{dir: dir, reserve: reserve, free: free}
}

// spoolFull is the answer to a body that does not fit: S3's 503 SlowDown,
// which every S3 client retries with backoff.
func spoolFull(err error) *Error {
	e := errorf("SlowDown", "Please reduce your request rate.")
	e.Err = err
	return e
}

// take admits n more bytes, or refuses them with SlowDown when they would
// leave less than the reserve free.
func (s *spoolSpace) take(n int64) error {
	if n <= 0 {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	free, err := s.free(s.dir)
	if err != nil {
		return fmt.Errorf("free space of the spool directory: %w", err)
	}
	if free-s.pending-n < s.reserve {
		return spoolFull(fmt.Errorf("spool: %d bytes asked, %d free, %d pending, %d reserved", n, free, s.pending, s.reserve))
	}
	s.pending += n
	return nil
}

// done ends n admitted bytes: written (the filesystem counts them now) or
// never needed.
func (s *spoolSpace) done(n int64) {
	if n <= 0 {
		return
	}
	s.mu.Lock()
	s.pending -= n
	s.mu.Unlock()
}

// spaceWriter writes a spool file within the room admitted for it, asking
// for more as it grows past it. A full filesystem (ENOSPC, EDQUOT), which
// other writers can bring about whatever was admitted, is SlowDown too.
type spaceWriter struct {
	w     io.Writer
	space *spoolSpace
	held  int64 // admitted and not yet written
}

func (w *spaceWriter) Write(p []byte) (int, error) {
	if need := int64(len(p)) - w.held; need > 0 {
		step := max(need, spoolGrowStep)
		if err := w.space.take(step); err != nil {
			return 0, err
		}
		w.held += step
	}
	n, err := w.w.Write(p)
	w.held -= int64(n)
	w.space.done(int64(n))
	if noSpace(err) {
		return n, spoolFull(err)
	}
	return n, err
}

// release gives back what was admitted and not written.
func (w *spaceWriter) release() {
	w.space.done(w.held)
	w.held = 0
}

func noSpace(err error) bool {
	return errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EDQUOT)
}
