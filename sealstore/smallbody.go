package sealstore

import (
	"bytes"
	"io"
	"sync/atomic"

	"github.com/s3seal/s3seal/crypto"
)

// A sealed body waits to be sent (and sent again on a retry) in a
// sealedBody: an unlinked spool file (seal), or, for a body whose
// declared length is at most smallBodyMax, memory, within a budget shared
// by every body of the Store (Options.MemoryBodies). A small body that
// finds the budget spent goes to a spool file as any other. Either way
// the body is read whole and every check made before anything is sent.

// smallBodyMax is the largest declared plaintext length sealed into
// memory.
const smallBodyMax = 1 << 20

// DefaultMemoryBodies is Options.MemoryBodies's default: 32 bodies of
// smallBodyMax at once, or thousands of a few KiB.
const DefaultMemoryBodies = 32 << 20

// sealedBody is a sealed body waiting to be sent: read from its start,
// rewound for a retry, closed once sent.
type sealedBody interface {
	io.ReadSeeker
	io.Closer
}

// memBudget bounds the ciphertext bytes held in memory at once.
type memBudget struct {
	limit int64
	used  atomic.Int64
}

// take admits n bytes, or answers false when they would pass the limit.
func (b *memBudget) take(n int64) bool {
	if b.used.Add(n) > b.limit {
		b.used.Add(-n)
		return false
	}
	return true
}

func (b *memBudget) done(n int64) { b.used.Add(-n) }

// memBody is a sealed body in memory; closing it gives its bytes back to
// the budget.
type memBody struct {
	*bytes.Reader
	budget *memBudget
	held   int64
}

func (m *memBody) Close() error {
	m.budget.done(m.held)
	m.held = 0
	return nil
}

// sealInMemory seals a small declared body into memory. ok is false,
// with nothing read, when the body is not small or the budget is spent:
// the caller spools it.
func (s *Store) sealInMemory(in PutInput, dk *crypto.DataKey, stream crypto.Stream) (sp *spooled, ok bool, err error) {
	if in.Size < 0 || in.Size > smallBodyMax {
		return nil, false, nil
	}
	n := crypto.CiphertextSize(in.Size)
	if !s.memory.take(n) {
		return nil, false, nil
	}
	body := &memBody{budget: s.memory, held: n}
	buf := bytes.NewBuffer(make([]byte, 0, n))
	if sp, err = s.sealInto(body, buf, in, dk, stream); err != nil {
		body.Close()
		return nil, true, err
	}
	body.Reader = bytes.NewReader(buf.Bytes())
	return sp, true, nil
}
