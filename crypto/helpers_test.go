package crypto

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"io"
	"testing"
)

// detRand is a deterministic random source for tests: SHA-256(seed ||
// u64be(counter)) blocks, concatenated.
type detRand struct {
	seed string
	ctr  uint64
	buf  []byte
}

func newDetRand(seed string) *detRand { return &detRand{seed: seed} }

func (d *detRand) Read(p []byte) (int, error) {
	n := 0
	for n < len(p) {
		if len(d.buf) == 0 {
			h := sha256.New()
			h.Write([]byte(d.seed))
			h.Write(binary.BigEndian.AppendUint64(nil, d.ctr))
			d.ctr++
			d.buf = h.Sum(nil)
		}
		c := copy(p[n:], d.buf)
		d.buf = d.buf[c:]
		n += c
	}
	return n, nil
}

// pattern returns n bytes with byte i = i mod 251 (the test vectors'
// plaintext).
func pattern(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i % 251)
	}
	return b
}

// randomPlain returns n pseudo-random bytes.
func randomPlain(n int, seed string) []byte {
	b := make([]byte, n)
	newDetRand(seed).Read(b)
	return b
}

func testDataKey(t testing.TB, seed string) *DataKey {
	t.Helper()
	dk, err := Config{Rand: newDetRand(seed)}.NewDataKey()
	if err != nil {
		t.Fatal(err)
	}
	return dk
}

// seal seals plain in chunks of chunk bytes (all at once if chunk <= 0).
func seal(t testing.TB, dk *DataKey, part uint32, plain []byte, chunk int) []byte {
	t.Helper()
	var buf bytes.Buffer
	w := NewWriter(&buf, dk, Stream{Part: part})
	if chunk <= 0 {
		chunk = len(plain) + 1
	}
	for p := plain; len(p) > 0; {
		c := min(chunk, len(p))
		n, err := w.Write(p[:c])
		if err != nil || n != c {
			t.Fatalf("Write: %d, %v", n, err)
		}
		p = p[c:]
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// open reads the range [off, off+length) of a stream of plainSize bytes
// from its full ciphertext ct, handing the reader exactly the ciphertext
// range it needs (and, when that reaches the final segment, the rest of
// ct, so that trailing bytes are seen).
func open(dk *DataKey, part uint32, ct []byte, plainSize, off, length int64) ([]byte, error) {
	cOff, cLen := CipherRange(plainSize, off, length)
	var src []byte
	switch {
	case cOff > int64(len(ct)):
		src = nil
	case cOff+cLen >= CiphertextSize(plainSize) || cOff+cLen > int64(len(ct)):
		src = ct[cOff:]
	default:
		src = ct[cOff : cOff+cLen]
	}
	r, err := NewReader(bytes.NewReader(src), dk, Stream{Part: part}, plainSize, off, length)
	if err != nil {
		return nil, err
	}
	return io.ReadAll(r)
}

func openAll(dk *DataKey, part uint32, ct []byte, plainSize int64) ([]byte, error) {
	return open(dk, part, ct, plainSize, 0, plainSize)
}

// mustFailAuthentic checks a failed read: err matches ErrCorrupt, and the
// bytes returned before it are a prefix of the authentic plaintext want
// that ends at or before byte limit.
func mustFailAuthentic(t *testing.T, what string, got []byte, err error, want []byte, limit int) {
	t.Helper()
	if err == nil {
		t.Fatalf("%s: read succeeded (%d bytes), want an error", what, len(got))
	}
	if !errors.Is(err, ErrCorrupt) {
		t.Fatalf("%s: error %v does not match ErrCorrupt", what, err)
	}
	if len(got) > limit || !bytes.Equal(got, want[:len(got)]) {
		t.Fatalf("%s: returned %d bytes before the error, not an authentic prefix of at most %d", what, len(got), limit)
	}
}

// testName is the object name the envelope tests bind.
var testName = Name{Bucket: "bucket", Key: "dir/object"}

// withObjectMeta returns env with an empty sealed object metadata of dk's
// object, as a format 2 writer stores it beside the envelope.
func withObjectMeta(t testing.TB, dk *DataKey, env Envelope) Envelope {
	t.Helper()
	v, err := SealObjectMeta(dk, ObjectMeta{})
	if err != nil {
		t.Fatal(err)
	}
	env.SealedMeta = v
	return env
}
