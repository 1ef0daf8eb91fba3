package sealstore

import (
	"fmt"
	"io"

	"github.com/s3seal/s3seal/crypto"
)

// partsReader reads a plaintext range of a multipart object from src,
// which holds exactly the ciphertext of that range (m.CipherRange, or the
// whole object): each part the range touches is opened as its own sealed
// stream, and after the last one src must be at its end.
type partsReader struct {
	src   io.Reader
	dk    *crypto.DataKey
	parts []partRange
	cur   io.Reader
	err   error
}

// partRange is the piece [off, off+n) of one part that a read covers.
type partRange struct {
	part   crypto.ManifestPart
	off, n int64
}

// newPartsReader reads [off, off+n) of the object; whole means the whole
// object (every part, the empty ones too, is authenticated).
func newPartsReader(src io.Reader, dk *crypto.DataKey, m crypto.Manifest, off, n int64, whole bool) *partsReader {
	r := &partsReader{src: src, dk: dk}
	var start int64
	for _, p := range m.Parts {
		lo, hi := max(off, start), min(off+n, start+p.PlainSize)
		switch {
		case whole:
			r.parts = append(r.parts, partRange{p, 0, p.PlainSize})
		case hi > lo:
			r.parts = append(r.parts, partRange{p, lo - start, hi - lo})
		}
		start += p.PlainSize
	}
	return r
}

func (r *partsReader) Read(p []byte) (int, error) {
	for r.err == nil {
		if r.cur == nil {
			if r.err = r.openNext(); r.err != nil {
				break
			}
		}
		n, err := r.cur.Read(p)
		if err == io.EOF {
			r.cur = nil
			err = nil
		}
		r.err = err
		if n > 0 {
			return n, nil
		}
	}
	return 0, r.err
}

// openNext opens the next part of the read or, after the last, checks that
// src ended and reports io.EOF.
func (r *partsReader) openNext() error {
	if len(r.parts) == 0 {
		var one [1]byte
		if n, err := io.ReadFull(r.src, one[:]); n > 0 {
			return fmt.Errorf("%w: data after the last part", crypto.ErrCorrupt)
		} else if err != io.EOF {
			return err
		}
		return io.EOF
	}
	pr := r.parts[0]
	r.parts = r.parts[1:]
	_, cLen := crypto.CipherRange(pr.part.PlainSize, pr.off, pr.n)
	dk, stream, err := pr.part.Key(r.dk)
	if err != nil {
		return err
	}
	cur, err := crypto.NewReader(io.LimitReader(r.src, cLen), dk, stream, pr.part.PlainSize, pr.off, pr.n)
	if err != nil {
		return err
	}
	r.cur = cur
	return nil
}
