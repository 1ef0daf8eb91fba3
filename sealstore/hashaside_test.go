package sealstore

import (
	"bytes"
	"crypto/md5"
	"errors"
	"io"
	"math/rand/v2"
	"testing"
	"testing/iotest"

	"github.com/s3seal/s3seal/crypto"
)

// copyingWriter keeps a copy of what it is given, after hashing it as
// the real half does, so a Write that returned before its other half was
// done would be seen: the caller reuses its buffer at once.
type copyingWriter struct{ got bytes.Buffer }

func (w *copyingWriter) Write(p []byte) (int, error) {
	md5.Sum(p) // take as long as the real hashing
	return w.got.Write(p)
}

// Both halves see exactly the bytes written, in order, whatever the
// write sizes, even though the caller overwrites its buffer right after
// each Write returns.
func TestHashAsideBothHalvesSeeEveryByte(t *testing.T) {
	data := randBytes(3<<20+123, 5)
	r := rand.New(rand.NewPCG(3, 4))
	seal, hashes := &copyingWriter{}, &copyingWriter{}
	h := newHashAside(seal, hashes)
	buf := make([]byte, 300<<10)
	for rest := data; len(rest) > 0; {
		k := min(len(rest), 1+r.IntN(len(buf)))
		copy(buf, rest[:k])
		if n, err := h.Write(buf[:k]); n != k || err != nil {
			t.Fatalf("Write = %d, %v", n, err)
		}
		for i := range buf[:k] { // reuse the buffer, as io.Copy does
			buf[i] = 0xEE
		}
		rest = rest[k:]
	}
	h.Close()
	if !bytes.Equal(seal.got.Bytes(), data) {
		t.Errorf("seal half got %d bytes, not the %d written", seal.got.Len(), len(data))
	}
	if !bytes.Equal(hashes.got.Bytes(), data) {
		t.Errorf("hash half got %d bytes, not the %d written", hashes.got.Len(), len(data))
	}
}

type failingWriter struct{ err error }

func (w failingWriter) Write(p []byte) (int, error) { return 0, w.err }

// An error of either half ends the copy.
func TestHashAsideErrors(t *testing.T) {
	boom := errors.New("boom")
	p := make([]byte, asideMin*2)
	for name, h := range map[string]*hashAside{
		"hashes": newHashAside(io.Discard, failingWriter{boom}),
		"seal":   newHashAside(failingWriter{boom}, io.Discard),
	} {
		if _, err := h.Write(p); !errors.Is(err, boom) {
			t.Errorf("%s failing: Write err = %v", name, err)
		}
		if _, err := h.Write(p[:10]); !errors.Is(err, boom) {
			t.Errorf("%s failing, small write: err = %v", name, err)
		}
		h.Close()
	}
}

// copyFull ends cleanly only on a bare io.EOF: a body that ends in
// io.ErrUnexpectedEOF (a client that hung up) or any other error is that
// error, with the bytes before it written.
func TestCopyFullEnds(t *testing.T) {
	data := randBytes(200<<10, 9)
	var out bytes.Buffer
	n, err := copyFull(&out, iotest.OneByteReader(bytes.NewReader(data)), make([]byte, 64<<10))
	if err != nil || n != int64(len(data)) || !bytes.Equal(out.Bytes(), data) {
		t.Fatalf("clean body: n=%d err=%v", n, err)
	}
	out.Reset()
	cut := io.MultiReader(bytes.NewReader(data[:1000]), iotest.ErrReader(io.ErrUnexpectedEOF))
	n, err = copyFull(&out, cut, make([]byte, 64<<10))
	if !errors.Is(err, io.ErrUnexpectedEOF) || n != 1000 {
		t.Fatalf("cut body: n=%d err=%v, want 1000 and io.ErrUnexpectedEOF", n, err)
	}
}

// BenchmarkSealBody measures the single-stream path of a PUT without the
// backend: MD5, sealing and a discarded spool, as one stream, with the
// hashing beside the sealing ("aside") and in line ("inline"); compare
// its MB/s with BenchmarkMD5 (the bound).
func BenchmarkSealBody(b *testing.B) {
	data := randBytes(32<<20, 1)
	s := &Store{opt: Options{MaxObjectSize: 5 << 40}}
	defer func(m int) { asideMin = m }(asideMin)
	for _, mode := range []struct {
		name string
		min  int
	}{{"aside", asideMin}, {"inline", 1 << 62}} {
		b.Run(mode.name, func(b *testing.B) {
			asideMin = mode.min
			b.SetBytes(int64(len(data)))
			for b.Loop() {
				dk, _ := crypto.NewDataKey()
				if _, err := s.sealInto(nil, io.Discard, PutInput{Body: bytes.NewReader(data), Size: int64(len(data))}, dk, crypto.Stream{}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkMD5 is the bound of BenchmarkSealBody: MD5 alone over the same
// bytes in the same buffer size.
func BenchmarkMD5(b *testing.B) {
	data := randBytes(32<<20, 1)
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		h := md5.New()
		for rest := data; len(rest) > 0; rest = rest[min(len(rest), bodyBufSize):] {
			h.Write(rest[:min(len(rest), bodyBufSize)])
		}
	}
}
