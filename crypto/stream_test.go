package crypto

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"testing"
	"testing/iotest"
)

const S = SegmentSize

var boundarySizes = []int{0, 1, S - 1, S, S + 1, 2*S - 1, 2 * S, 2*S + 1, 3<<20 + 7}

func TestRoundTrip(t *testing.T) {
	dk := testDataKey(t, "roundtrip")
	chunks := []int{1, 7, 4096, S - 1, S, S + 1, 1 << 20, 0}
	for _, size := range boundarySizes {
		plain := randomPlain(size, fmt.Sprint("plain", size))
		for _, chunk := range chunks {
			if chunk == 1 && size > 4*S {
				continue // covered by the smaller sizes; keeps the test fast
			}
			t.Run(fmt.Sprintf("size=%d/chunk=%d", size, chunk), func(t *testing.T) {
				ct := seal(t, dk, 7, plain, chunk)
				if int64(len(ct)) != CiphertextSize(int64(size)) {
					t.Fatalf("ciphertext is %d bytes, want %d", len(ct), CiphertextSize(int64(size)))
				}
				got, err := openAll(dk, 7, ct, int64(size))
				if err != nil || !bytes.Equal(got, plain) {
					t.Fatalf("read back: %d bytes, %v", len(got), err)
				}
			})
		}
	}
}

// TestReaderSources reads through sources and sinks that deliver few bytes
// at a time, through Read and through WriteTo.
func TestReaderSources(t *testing.T) {
	dk := testDataKey(t, "sources")
	for _, size := range []int{0, 1, S, S + 1, 2*S + 1} {
		plain := randomPlain(size, "src")
		ct := seal(t, dk, 0, plain, 0)
		wrap := map[string]func(io.Reader) io.Reader{
			"plain":   func(r io.Reader) io.Reader { return r },
			"onebyte": iotest.OneByteReader,
			"half":    iotest.HalfReader,
			"dataerr": iotest.DataErrReader,
		}
		for name, f := range wrap {
			r, err := NewReader(f(bytes.NewReader(ct)), dk, Stream{}, int64(size), 0, int64(size))
			if err != nil {
				t.Fatal(err)
			}
			// Read with a small buffer.
			got, err := io.ReadAll(iotest.OneByteReader(r))
			if err != nil || !bytes.Equal(got, plain) {
				t.Errorf("size %d, %s, Read: %d bytes, %v", size, name, len(got), err)
			}
			// WriteTo.
			r, _ = NewReader(f(bytes.NewReader(ct)), dk, Stream{}, int64(size), 0, int64(size))
			var out bytes.Buffer
			n, err := io.Copy(&out, r)
			if err != nil || n != int64(size) || !bytes.Equal(out.Bytes(), plain) {
				t.Errorf("size %d, %s, WriteTo: %d bytes, %v", size, name, n, err)
			}
		}
		// iotest.TestReader checks the io.Reader contract.
		r, _ := NewReader(bytes.NewReader(ct), dk, Stream{}, int64(size), 0, int64(size))
		if err := iotest.TestReader(r, plain); err != nil {
			t.Errorf("size %d: %v", size, err)
		}
	}
}

func TestRangeReads(t *testing.T) {
	dk := testDataKey(t, "ranges")
	const size = 3*S + 1000
	plain := randomPlain(size, "ranges")
	ct := seal(t, dk, 5, plain, 0)
	points := []int64{0, 1, 2, S - 1, S, S + 1, 2*S - 1, 2 * S, 2*S + 1, 3*S - 1, 3 * S, 3*S + 1, size - 1}
	lengths := []int64{1, 2, 100, S - 1, S, S + 1, 2 * S, 2*S + 1}
	n := 0
	check := func(off, l int64) {
		got, err := open(dk, 5, ct, size, off, l)
		if err != nil || !bytes.Equal(got, plain[off:off+l]) {
			t.Errorf("range [%d, +%d): %d bytes, %v", off, l, len(got), err)
		}
		n++
	}
	for _, off := range points {
		for _, l := range lengths {
			if off+l <= size {
				check(off, l)
			}
		}
		check(off, size-off) // to the end
	}
	rnd := newDetRand("range offsets")
	var b [16]byte
	for range 200 {
		rnd.Read(b[:])
		off := int64(uint64(b[0])<<16|uint64(b[1])<<8|uint64(b[2])) % size
		l := 1 + int64(uint64(b[3])<<16|uint64(b[4])<<8|uint64(b[5]))%(size-off)
		check(off, l)
	}
	t.Logf("%d ranges", n)
}

// TestRangeSourceEndsAtRange: a range that does not reach the final segment
// reads exactly its segments, nothing more, from src.
func TestRangeSourceEndsAtRange(t *testing.T) {
	dk := testDataKey(t, "range src")
	plain := randomPlain(3*S, "p")
	ct := seal(t, dk, 0, plain, 0)
	src := bytes.NewReader(ct) // the whole object, but the range is segment 1 only
	if _, err := src.Seek(sealedSegSize, io.SeekStart); err != nil {
		t.Fatal(err)
	}
	r, _ := NewReader(src, dk, Stream{}, 3*S, S+10, 20)
	got, err := io.ReadAll(r)
	if err != nil || !bytes.Equal(got, plain[S+10:S+30]) {
		t.Fatalf("%d bytes, %v", len(got), err)
	}
	if src.Len() != len(ct)-2*sealedSegSize {
		t.Fatalf("reader consumed %d bytes, want one segment", len(ct)-sealedSegSize-src.Len())
	}
}

func TestEmptyStream(t *testing.T) {
	dk := testDataKey(t, "empty")
	ct := seal(t, dk, 0, nil, 0)
	if len(ct) != SegmentOverhead {
		t.Fatalf("empty stream is %d bytes", len(ct))
	}
	if got, err := openAll(dk, 0, ct, 0); err != nil || len(got) != 0 {
		t.Fatalf("%d bytes, %v", len(got), err)
	}
	// The empty segment is authenticated: nothing, a flipped bit, or an
	// extra byte fail.
	if _, err := openAll(dk, 0, nil, 0); !errors.Is(err, ErrCorrupt) {
		t.Errorf("no ciphertext: %v", err)
	}
	bad := bytes.Clone(ct)
	bad[20] ^= 1
	if _, err := openAll(dk, 0, bad, 0); !errors.Is(err, ErrAuth) {
		t.Errorf("flipped bit: %v", err)
	}
	if _, err := openAll(dk, 0, append(bytes.Clone(ct), 0), 0); !errors.Is(err, ErrCorrupt) {
		t.Errorf("extra byte: %v", err)
	}
	// Close without Write, and Write(nil) then Close, give the same size.
	var buf bytes.Buffer
	w := NewWriter(&buf, dk, Stream{})
	if n, err := w.Write(nil); n != 0 || err != nil {
		t.Fatal(n, err)
	}
	if err := w.Close(); err != nil || buf.Len() != SegmentOverhead {
		t.Fatal(buf.Len(), err)
	}
}

func TestZeroLengthRange(t *testing.T) {
	dk := testDataKey(t, "zero")
	src := iotest.ErrReader(errors.New("must not be read"))
	r, err := NewReader(src, dk, Stream{}, 100, 50, 0)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := io.ReadAll(r); err != nil || len(got) != 0 {
		t.Fatalf("%d bytes, %v", len(got), err)
	}
}

func TestNewReaderInvalid(t *testing.T) {
	dk := testDataKey(t, "invalid")
	for _, a := range [][3]int64{{-1, 0, 0}, {10, -1, 1}, {10, 0, 11}, {10, 5, 6}, {10, 11, 0}, {0, 0, 1}, {10, 1, -1}, {MaxPlainSize + 1, 0, 0}} {
		if _, err := NewReader(bytes.NewReader(nil), dk, Stream{}, a[0], a[1], a[2]); err == nil {
			t.Errorf("NewReader(%v) accepted", a)
		}
	}
	if _, err := NewReader(bytes.NewReader(nil), nil, Stream{}, 0, 0, 0); err == nil {
		t.Error("nil DataKey accepted")
	}
	w := NewWriter(io.Discard, nil, Stream{})
	if _, err := w.Write([]byte("x")); err == nil {
		t.Error("Writer with nil DataKey accepted a Write")
	}
	if err := w.Close(); err == nil {
		t.Error("Writer with nil DataKey closed without error")
	}
}

type closeTracker struct {
	bytes.Buffer
	closed bool
}

func (c *closeTracker) Close() error { c.closed = true; return nil }

func TestWriterClose(t *testing.T) {
	dk := testDataKey(t, "close")
	var dst closeTracker
	w := NewWriter(&dst, dk, Stream{})
	w.Write([]byte("hello"))
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	n := dst.Len()
	if err := w.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	if dst.Len() != n || n != 5+SegmentOverhead {
		t.Fatalf("dst has %d bytes after two Closes", dst.Len())
	}
	if dst.closed {
		t.Fatal("Close closed dst")
	}
	if _, err := w.Write([]byte("x")); err == nil {
		t.Fatal("Write after Close succeeded")
	}
}

// failWriter accepts limit bytes, then fails.
type failWriter struct {
	limit int
	err   error
}

func (f *failWriter) Write(p []byte) (int, error) {
	if len(p) > f.limit {
		n := f.limit
		f.limit = 0
		return n, f.err
	}
	f.limit -= len(p)
	return len(p), nil
}

func TestWriterStickyError(t *testing.T) {
	dk := testDataKey(t, "sticky")
	boom := errors.New("boom")
	w := NewWriter(&failWriter{limit: sealedSegSize + 10, err: boom}, dk, Stream{})
	plain := make([]byte, 4*S)
	_, err := w.Write(plain)
	if !errors.Is(err, boom) {
		t.Fatalf("Write: %v, want boom", err)
	}
	if _, err2 := w.Write(plain[:1]); err2 != err {
		t.Fatalf("second Write: %v, want the first error", err2)
	}
	if err2 := w.Close(); err2 != err {
		t.Fatalf("Close: %v, want the first error", err2)
	}
	if err2 := w.Close(); err2 != err {
		t.Fatalf("second Close: %v", err2)
	}

	// A failing random source.
	dk2, _ := Config{Rand: iotest.ErrReader(boom)}.DataKeyFrom(make([]byte, 32), [16]byte{})
	w = NewWriter(io.Discard, dk2, Stream{})
	if err := w.Close(); !errors.Is(err, boom) {
		t.Fatalf("Close with a failing Rand: %v", err)
	}

	// A dst that writes short without an error.
	w = NewWriter(shortWriter{}, dk, Stream{})
	if err := w.Close(); !errors.Is(err, io.ErrShortWrite) {
		t.Fatalf("short write: %v", err)
	}
}

type shortWriter struct{}

func (shortWriter) Write(p []byte) (int, error) { return len(p) / 2, nil }

// TestReaderSourceError: an error of src is passed on (wrapped), is not
// reported as corruption, and is sticky.
func TestReaderSourceError(t *testing.T) {
	dk := testDataKey(t, "srcerr")
	plain := randomPlain(3*S, "p")
	ct := seal(t, dk, 0, plain, 0)
	boom := errors.New("connection reset")
	src := io.MultiReader(bytes.NewReader(ct[:sealedSegSize+100]), iotest.ErrReader(boom))
	r, _ := NewReader(src, dk, Stream{}, 3*S, 0, 3*S)
	got, err := io.ReadAll(r)
	if !errors.Is(err, boom) || errors.Is(err, ErrCorrupt) {
		t.Fatalf("error %v: want the source's error, not corruption", err)
	}
	if !bytes.Equal(got, plain[:S]) {
		t.Fatalf("got %d bytes, want the first segment", len(got))
	}
	if _, err2 := r.Read(make([]byte, 10)); err2 != err {
		t.Fatalf("error not sticky: %v", err2)
	}
	// An error while checking the end of src after the final segment.
	src = io.MultiReader(bytes.NewReader(ct), iotest.ErrReader(boom))
	r, _ = NewReader(src, dk, Stream{}, 3*S, 0, 3*S)
	if _, err := io.ReadAll(r); !errors.Is(err, boom) {
		t.Fatalf("end check: %v", err)
	}
}

// TestNonceUniqueness seals the same part twice under one data key: every
// segment nonce differs, and so do the ciphertexts.
func TestNonceUniqueness(t *testing.T) {
	dk, err := NewDataKey()
	if err != nil {
		t.Fatal(err)
	}
	plain := randomPlain(20*S+5, "nonces")
	seen := map[[nonceSize]byte]bool{}
	var cts [][]byte
	for range 2 {
		ct := seal(t, dk, 3, plain, 0)
		for off := 0; off < len(ct); off += sealedSegSize {
			n := [nonceSize]byte(ct[off : off+nonceSize])
			if seen[n] {
				t.Fatalf("nonce %x repeated", n)
			}
			seen[n] = true
		}
		cts = append(cts, ct)
	}
	if len(seen) != 2*21 {
		t.Fatalf("%d nonces, want 42", len(seen))
	}
	if bytes.Equal(cts[0], cts[1]) {
		t.Fatal("two seals of the same part are identical")
	}
	for _, ct := range cts {
		if got, err := openAll(dk, 3, ct, int64(len(plain))); err != nil || !bytes.Equal(got, plain) {
			t.Fatalf("read back: %v", err)
		}
	}
	// Fresh data keys have fresh DEKs and oids.
	dk2, _ := NewDataKey()
	if dk2.OID() == dk.OID() || dk2.dek == dk.dek {
		t.Fatal("two NewDataKey calls returned the same key or oid")
	}
}

// TestConstantAllocs: allocations per stream do not grow with the number
// of segments (the buffers are pooled and reused).
func TestConstantAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("sync.Pool drops items at random under -race; scripts/test.sh runs this without it")
	}
	dk, err := NewDataKey() // crypto/rand: detRand allocates
	if err != nil {
		t.Fatal(err)
	}
	small, big := randomPlain(S/2, "s"), randomPlain(32*S, "b")
	writeAllocs := func(plain []byte) float64 {
		return testing.AllocsPerRun(20, func() {
			w := NewWriter(io.Discard, dk, Stream{})
			w.Write(plain)
			w.Close()
		})
	}
	ws, wb := writeAllocs(small), writeAllocs(big)
	ctSmall, ctBig := seal(t, dk, 0, small, 0), seal(t, dk, 0, big, 0)
	readAllocs := func(ct []byte, size int64) float64 {
		src := bytes.NewReader(ct)
		return testing.AllocsPerRun(20, func() {
			src.Reset(ct)
			r, _ := NewReader(src, dk, Stream{}, size, 0, size)
			if n, err := io.Copy(io.Discard, r); err != nil || n != size {
				t.Fatal(n, err)
			}
		})
	}
	rs, rb := readAllocs(ctSmall, int64(len(small))), readAllocs(ctBig, int64(len(big)))
	t.Logf("allocs per stream: writer %v (1 segment) %v (32 segments); reader %v, %v", ws, wb, rs, rb)
	if wb > ws || rb > rs || wb > 3 || rb > 3 {
		t.Errorf("allocations grow with the stream: writer %v -> %v, reader %v -> %v", ws, wb, rs, rb)
	}
}

// TestConcurrentDataKey: writers and readers of several parts share one
// data key at once (run with -race).
func TestConcurrentDataKey(t *testing.T) {
	dk, err := NewDataKey()
	if err != nil {
		t.Fatal(err)
	}
	plain := randomPlain(3*S+11, "concurrent")
	errs := make(chan error, 8)
	for part := uint32(1); part <= 8; part++ {
		go func() {
			var buf bytes.Buffer
			w := NewWriter(&buf, dk, Stream{Part: part})
			w.Write(plain)
			if err := w.Close(); err != nil {
				errs <- err
				return
			}
			got, err := openAll(dk, part, buf.Bytes(), int64(len(plain)))
			if err == nil && !bytes.Equal(got, plain) {
				err = fmt.Errorf("part %d: wrong plaintext", part)
			}
			errs <- err
		}()
	}
	for range 8 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
}
