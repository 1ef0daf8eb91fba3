package crypto

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"testing"
)

// cutSource delivers data and then fails the way net/http does when a
// response body ends before its Content-Length: with io.ErrUnexpectedEOF
// (end is that error, or io.EOF for a source that just stops).
func cutSource(data []byte, end error) io.Reader {
	return io.MultiReader(bytes.NewReader(data), &endReader{end})
}

type endReader struct{ err error }

func (e *endReader) Read([]byte) (int, error) { return 0, e.err }

// TestCutSourceIsCorrupt: a source that ends early is always an error
// matching ErrCorrupt, never a clean io.EOF, whether it ends with io.EOF or
// io.ErrUnexpectedEOF, wherever it is cut, for whole reads and ranges, and
// through Read and WriteTo alike.
func TestCutSourceIsCorrupt(t *testing.T) {
	dk := testDataKey(t, "cut")
	const size = 3*S + 500
	plain := randomPlain(size, "cut plain")
	ct := seal(t, dk, 0, plain, 0)
	cuts := []struct {
		name string
		at   int // ciphertext bytes of the range delivered
	}{
		{"nothing", 0},
		{"inside the first nonce", 5},
		{"after the first nonce", 12},
		{"inside the first ciphertext", 1000},
		{"one byte short of the first segment", sealedSegSize - 1},
		{"at a segment boundary", sealedSegSize},
		{"inside a later segment", 2*sealedSegSize + 77},
		{"one byte short", len(ct) - 1},
	}
	ranges := []struct {
		name      string
		off, size int64
	}{
		{"whole", 0, size},
		{"from inside segment 0", 10, size - 10},
		{"segments 0 to 2", 100, 2*S + 10},
	}
	for _, rg := range ranges {
		cOff, cLen := CipherRange(size, rg.off, rg.size)
		src := ct[cOff : cOff+cLen]
		for _, c := range cuts {
			if c.at >= len(src) {
				continue
			}
			for _, end := range []error{io.EOF, io.ErrUnexpectedEOF} {
				for _, writeTo := range []bool{false, true} {
					name := fmt.Sprintf("%s/%s/%v/writeTo=%v", rg.name, c.name, end, writeTo)
					r, err := NewReader(cutSource(src[:c.at], end), dk, Stream{}, size, rg.off, rg.size)
					if err != nil {
						t.Fatal(err)
					}
					var got []byte
					if writeTo {
						var buf bytes.Buffer
						_, err = r.(io.WriterTo).WriteTo(&buf)
						got = buf.Bytes()
					} else {
						got, err = io.ReadAll(r)
					}
					if errors.Is(err, io.ErrUnexpectedEOF) {
						t.Errorf("%s: error %v could pass for a short read", name, err)
					}
					mustFailAuthentic(t, name, got, err, plain[rg.off:], int(rg.size))
					if _, again := r.Read(make([]byte, 1)); again == nil || again == io.EOF {
						t.Errorf("%s: after the error a Read returns %v", name, again)
					}
				}
			}
		}
	}
}
