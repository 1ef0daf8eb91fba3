package sealstore

import (
	"bytes"
	"crypto/md5"
	"errors"
	"io"
	"testing"
	"testing/iotest"

	"github.com/s3seal/s3seal/crypto"
)

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
// backend: MD5, sealing and a discarded spool, as one stream; compare its
// MB/s with BenchmarkMD5 (the bound). Hashing on a goroutine beside the
// sealing was measured slower here (DESIGN.md, "Performance").
func BenchmarkSealBody(b *testing.B) {
	data := randBytes(32<<20, 1)
	s := &Store{opt: Options{MaxObjectSize: 5 << 40}}
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		dk, _ := crypto.NewDataKey()
		if _, err := s.sealInto(nil, io.Discard, PutInput{Body: bytes.NewReader(data), Size: int64(len(data))}, dk, crypto.Stream{}); err != nil {
			b.Fatal(err)
		}
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
