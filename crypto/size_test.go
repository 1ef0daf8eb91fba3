package crypto

import (
	"errors"
	"math"
	"testing"
)

func TestSizes(t *testing.T) {
	const S, O = SegmentSize, SegmentOverhead
	for _, tc := range []struct {
		plain, segs, cipher int64
	}{
		{0, 1, O},
		{1, 1, 1 + O},
		{S - 1, 1, S - 1 + O},
		{S, 1, S + O},
		{S + 1, 2, S + 1 + 2*O},
		{2*S - 1, 2, 2*S - 1 + 2*O},
		{2 * S, 2, 2*S + 2*O},
		{2*S + 1, 3, 2*S + 1 + 3*O},
		{5 << 40, 5 << 24, 5<<40 + 28*(5<<24)}, // 5 TiB
		{MaxPlainSize, MaxPlainSize / S, MaxPlainSize + O*(MaxPlainSize/S)},
	} {
		if got := Segments(tc.plain); got != tc.segs {
			t.Errorf("Segments(%d) = %d, want %d", tc.plain, got, tc.segs)
		}
		if got := CiphertextSize(tc.plain); got != tc.cipher {
			t.Errorf("CiphertextSize(%d) = %d, want %d", tc.plain, got, tc.cipher)
		}
		if got, err := PlaintextSize(tc.cipher); err != nil || got != tc.plain {
			t.Errorf("PlaintextSize(%d) = %d, %v, want %d", tc.cipher, got, err, tc.plain)
		}
	}
	if SegmentOverhead != 28 || sealedSegSize != 65564 {
		t.Fatal("segment constants changed")
	}
}

// TestPlaintextSizeExhaustive checks every ciphertext size up to four
// segments: PlaintextSize accepts exactly the sizes CiphertextSize
// produces, and inverts it.
func TestPlaintextSizeExhaustive(t *testing.T) {
	const maxPlain = 4*SegmentSize + 10
	produced := map[int64]int64{}
	for p := int64(0); p <= maxPlain; p++ {
		produced[CiphertextSize(p)] = p
	}
	for c := int64(-2); c <= CiphertextSize(maxPlain); c++ {
		p, err := PlaintextSize(c)
		want, ok := produced[c]
		switch {
		case ok && (err != nil || p != want):
			t.Fatalf("PlaintextSize(%d) = %d, %v, want %d", c, p, err, want)
		case !ok && err == nil:
			t.Fatalf("PlaintextSize(%d) = %d, want an error", c, p)
		case !ok && !errors.Is(err, ErrCorrupt):
			t.Fatalf("PlaintextSize(%d): error %v does not match ErrCorrupt", c, err)
		}
	}
}

func TestPlaintextSizeInvalid(t *testing.T) {
	for _, c := range []int64{
		math.MinInt64, -1, 0, 1, 27,
		sealedSegSize + 1, sealedSegSize + 28, // a second segment with no plaintext
		2*sealedSegSize + 5,
		CiphertextSize(MaxPlainSize) + 1, math.MaxInt64,
	} {
		if p, err := PlaintextSize(c); err == nil {
			t.Errorf("PlaintextSize(%d) = %d, want an error", c, p)
		}
	}
}

func TestSizePanics(t *testing.T) {
	for name, f := range map[string]func(){
		"Segments(-1)":             func() { Segments(-1) },
		"CiphertextSize(max+1)":    func() { CiphertextSize(MaxPlainSize + 1) },
		"CipherRange(10, -1, 1)":   func() { CipherRange(10, -1, 1) },
		"CipherRange(10, 5, 6)":    func() { CipherRange(10, 5, 6) },
		"CipherRange(10, 11, 0)":   func() { CipherRange(10, 11, 0) },
		"CipherRange(10, 0, -1)":   func() { CipherRange(10, 0, -1) },
		"CipherRange(10, 1, max)":  func() { CipherRange(10, 1, math.MaxInt64) },
		"CipherRange(-1, 0, 0)":    func() { CipherRange(-1, 0, 0) },
		"CipherRange(0, 0, 1)":     func() { CipherRange(0, 0, 1) },
		"CipherRange(max+1, 0, 1)": func() { CipherRange(MaxPlainSize+1, 0, 1) },
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s did not panic", name)
				}
			}()
			f()
		}()
	}
}

// naiveCipherRange finds the covering segments by walking them.
func naiveCipherRange(plainSize, off, length int64) (int64, int64) {
	if plainSize == 0 {
		return 0, SegmentOverhead
	}
	if length == 0 {
		return 0, 0
	}
	cOff, cEnd := int64(-1), int64(0)
	var pos, cpos int64
	for i := int64(0); i < Segments(plainSize); i++ {
		n := int64(segPlainLen(plainSize, i))
		if pos < off+length && off < pos+n { // segment overlaps the range
			if cOff < 0 {
				cOff = cpos
			}
			cEnd = cpos + n + SegmentOverhead
		}
		pos += n
		cpos += n + SegmentOverhead
	}
	return cOff, cEnd - cOff
}

func TestCipherRange(t *testing.T) {
	const S = SegmentSize
	sizes := []int64{0, 1, 2, S - 1, S, S + 1, 2*S - 1, 2 * S, 2*S + 1, 3*S + 1000}
	for _, ps := range sizes {
		points := []int64{0, 1, S - 1, S, S + 1, 2*S - 1, 2 * S, 2*S + 1, ps - 1, ps, ps / 2}
		for _, off := range points {
			for _, end := range points {
				if off < 0 || end > ps || end < off || (end == off && ps > 0) {
					continue
				}
				l := end - off
				co, cl := CipherRange(ps, off, l)
				wo, wl := naiveCipherRange(ps, off, l)
				if co != wo || cl != wl {
					t.Errorf("CipherRange(%d, %d, %d) = (%d, %d), want (%d, %d)", ps, off, l, co, cl, wo, wl)
				}
			}
		}
	}
	// Whole stream: the whole ciphertext.
	for _, ps := range sizes {
		if co, cl := CipherRange(ps, 0, ps); co != 0 || cl != CiphertextSize(ps) {
			t.Errorf("CipherRange(%d, 0, %d) = (%d, %d), want the whole stream", ps, ps, co, cl)
		}
	}
	// Zero-length range in a non-empty stream.
	if co, cl := CipherRange(10, 4, 0); co != 0 || cl != 0 {
		t.Errorf("CipherRange(10, 4, 0) = (%d, %d), want (0, 0)", co, cl)
	}
	// Large object: the offset is arithmetic.
	const big = 5 << 40
	off := int64(3<<40 + 12345)
	co, cl := CipherRange(big, off, 1)
	if co != (off/S)*sealedSegSize || cl != sealedSegSize {
		t.Errorf("CipherRange(5 TiB, %d, 1) = (%d, %d)", off, co, cl)
	}
}
