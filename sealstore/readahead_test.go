package sealstore

import (
	"bytes"
	"errors"
	"io"
	"runtime"
	"testing"
	"testing/iotest"
	"time"
)

// WriteTo hands on exactly the Reader's Len bytes, in order, at every
// size around its buffer boundaries, whatever sizes the source reads in.
// (A Reader's source holds its Len bytes: one that goes on past them is
// an error, TestReaderWriteToReadsTheSourceToItsEnd.)
func TestReaderWriteToCopiesExactly(t *testing.T) {
	data := randBytes(5*aheadBufSize+17, 3)
	for _, n := range []int{0, 1, aheadBufSize - 1, aheadBufSize, aheadBufSize + 1, 3 * aheadBufSize, 3*aheadBufSize + 1, len(data)} {
		for name, src := range map[string]io.Reader{
			"whole":    bytes.NewReader(data[:n]),
			"one byte": iotest.OneByteReader(bytes.NewReader(data[:n])),
			"halves":   iotest.HalfReader(bytes.NewReader(data[:n])),
		} {
			r := &Reader{Reader: src, Len: int64(n), body: io.NopCloser(nil)}
			var out bytes.Buffer
			got, err := r.WriteTo(&out)
			if err != nil || got != int64(n) || !bytes.Equal(out.Bytes(), data[:n]) {
				t.Fatalf("%s, Len %d: wrote %d, err %v, bytes equal %v", name, n, got, err, bytes.Equal(out.Bytes(), data[:n]))
			}
		}
	}
}

// A read error (a segment that fails authentication, a cut backend
// answer) reaches the caller after every byte before it, and no byte
// after it.
func TestReaderWriteToStopsAtReadError(t *testing.T) {
	data := randBytes(4*aheadBufSize, 4)
	bad := errors.New("segment 3 failed authentication")
	at := 2*aheadBufSize + 100
	src := io.MultiReader(bytes.NewReader(data[:at]), iotest.ErrReader(bad), bytes.NewReader(data[at:]))
	r := &Reader{Reader: src, Len: int64(len(data)), body: io.NopCloser(nil)}
	var out bytes.Buffer
	n, err := r.WriteTo(&out)
	if !errors.Is(err, bad) || n != int64(at) || !bytes.Equal(out.Bytes(), data[:at]) {
		t.Fatalf("wrote %d, err %v; want %d bytes then the read error", n, err, at)
	}
	// A body that ends early is short, not an error of WriteTo's making:
	// the caller sees fewer bytes than Len, as io.Copy would give.
	r = &Reader{Reader: bytes.NewReader(data[:aheadBufSize*2]), Len: int64(len(data)), body: io.NopCloser(nil)}
	out.Reset()
	if n, err := r.WriteTo(&out); err != nil || n != int64(aheadBufSize*2) {
		t.Fatalf("short body: wrote %d, err %v", n, err)
	}
}

type failAfter struct {
	n   int
	err error
}

func (w *failAfter) Write(p []byte) (int, error) {
	if w.n <= 0 {
		return 0, w.err
	}
	w.n -= len(p)
	return len(p), nil
}

// blockingReader serves data, then blocks like a stalled store until it
// is closed.
type blockingReader struct {
	data   []byte
	closed chan struct{}
}

func (b *blockingReader) Read(p []byte) (int, error) {
	if len(b.data) > 0 {
		n := copy(p, b.data)
		b.data = b.data[n:]
		return n, nil
	}
	<-b.closed
	return 0, errors.New("closed")
}

func (b *blockingReader) Close() error { close(b.closed); return nil }

// A client that goes away ends WriteTo at once with its error, even while
// the read-ahead goroutine waits on a stalled store; Close ends that
// goroutine, which leaves nothing running.
func TestReaderWriteToClientGoneLeavesNoGoroutine(t *testing.T) {
	before := runtime.NumGoroutine()
	gone := errors.New("client went away")
	for range 20 {
		src := &blockingReader{data: randBytes(2*aheadBufSize, 5), closed: make(chan struct{})}
		r := &Reader{Reader: src, Len: 10 * aheadBufSize, body: src}
		done := make(chan error, 1)
		go func() { _, err := r.WriteTo(&failAfter{n: aheadBufSize, err: gone}); done <- err }()
		select {
		case err := <-done:
			if !errors.Is(err, gone) {
				t.Fatalf("WriteTo err = %v, want the writer's", err)
			}
		case <-time.After(5 * time.Second):
			t.Fatal("WriteTo waited for the stalled store after its client was gone")
		}
		r.Close()
	}
	deadline := time.Now().Add(5 * time.Second)
	for runtime.NumGoroutine() > before && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if g := runtime.NumGoroutine(); g > before {
		t.Fatalf("%d goroutines left running, %d before", g, before)
	}
}

// After its Len bytes WriteTo reads the source to its end, so that what
// the source checks there is checked before the copy reports success (a
// multipart object's empty last part is authenticated then); a source
// that goes on past Len is an integrity error, not a clean end.
func TestReaderWriteToReadsTheSourceToItsEnd(t *testing.T) {
	for _, n := range []int{0, 10, 3*aheadBufSize + 5} {
		data := randBytes(n, 6)
		bad := errors.New("the empty last part failed authentication")
		r := &Reader{Reader: io.MultiReader(bytes.NewReader(data), iotest.ErrReader(bad)), Len: int64(n), body: io.NopCloser(nil)}
		var out bytes.Buffer
		if got, err := r.WriteTo(&out); !errors.Is(err, bad) || got != int64(n) || !bytes.Equal(out.Bytes(), data) {
			t.Fatalf("Len %d: wrote %d, err %v; want the %d bytes, then the error at the end", n, got, err, n)
		}
		r = &Reader{Reader: bytes.NewReader(append(data, 1)), Len: int64(n), body: io.NopCloser(nil)}
		out.Reset()
		if got, err := r.WriteTo(&out); !errors.Is(err, ErrIntegrity) || got != int64(n) {
			t.Fatalf("Len %d, a byte more: wrote %d, err %v; want %d bytes and an integrity error", n, got, err, n)
		}
	}
}
