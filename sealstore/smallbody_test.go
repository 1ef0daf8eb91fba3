package sealstore

import (
	"bytes"
	"crypto/md5"
	"errors"
	"io"
	"path/filepath"
	"strings"
	"testing"

	"github.com/s3seal/s3seal/backend"
	"github.com/s3seal/s3seal/crypto"
)

// noSpoolFixture is a Store whose spool directory does not exist: any
// body that goes to a spool file fails the write.
func noSpoolFixture(t *testing.T, memory int64) *fixture {
	return newFixtureWith(t, Options{BackendChecksum: true, MemoryBodies: memory,
		SpoolDir: filepath.Join(t.TempDir(), "missing")})
}

// A body of declared length up to smallBodyMax is sealed and sent from
// memory: it needs no spool file. A larger one, or one of unknown length,
// still goes to the spool.
func TestSmallBodyNeedsNoSpool(t *testing.T) {
	f := noSpoolFixture(t, 0)
	small := bytes.Repeat([]byte("s"), 4096)
	for _, data := range [][]byte{small, bytes.Repeat([]byte("m"), smallBodyMax), nil} {
		f.put(t, "small", data)
		if _, got, err := f.get(t, "small", nil); err != nil || !bytes.Equal(got, data) {
			t.Fatalf("%d bytes read back: %d bytes, %v", len(data), len(got), err)
		}
	}
	for name, in := range map[string]PutInput{
		"over smallBodyMax": {Body: bytes.NewReader(make([]byte, smallBodyMax+1)), Size: smallBodyMax + 1},
		"unknown length":    {Body: bytes.NewReader(small), Size: -1},
	} {
		in.Bucket, in.Key = bucket, "big"
		if _, err := f.st.Put(f.ctx, in); err == nil {
			t.Errorf("%s: written without the spool directory", name)
		}
	}
	if n := f.st.memory.used.Load(); n != 0 {
		t.Errorf("%d bytes of the memory budget still held", n)
	}
}

// A small body that finds the memory budget spent goes to the spool.
func TestSmallBodyOverBudgetSpools(t *testing.T) {
	data := bytes.Repeat([]byte("b"), 4096)
	f := noSpoolFixture(t, crypto.CiphertextSize(int64(len(data)))-1)
	if _, err := f.st.Put(f.ctx, PutInput{Bucket: bucket, Key: "k", Body: bytes.NewReader(data), Size: int64(len(data))}); err == nil {
		t.Error("a body over the memory budget was written without the spool directory")
	}
	if !f.st.memory.take(crypto.CiphertextSize(int64(len(data))) - 1) {
		t.Error("the refused body kept some of the budget")
	}
	// With the budget spent by others, a body that fits the limit spools.
	f = noSpoolFixture(t, 1<<20)
	f.st.memory.take(1 << 20)
	if _, err := f.st.Put(f.ctx, PutInput{Bucket: bucket, Key: "k", Body: bytes.NewReader(data), Size: int64(len(data))}); err == nil {
		t.Error("a body was held in memory past the budget")
	}
}

// A small body is checked whole before anything is sent, as a spooled one:
// a body that fails a check leaves nothing on the store and gives its
// memory back.
func TestSmallBodyCheckedBeforeSend(t *testing.T) {
	f := noSpoolFixture(t, 0)
	data := []byte("a small body")
	sum := md5.Sum(data)
	bad := errors.New("the checksum trailer did not match")
	cases := map[string]struct {
		in   PutInput
		code string
	}{
		"BadDigest":      {PutInput{Body: bytes.NewReader(data), Size: int64(len(data)), ContentMD5: make([]byte, 16)}, "BadDigest"},
		"short body":     {PutInput{Body: bytes.NewReader(data[:4]), Size: int64(len(data))}, "IncompleteBody"},
		"long body":      {PutInput{Body: bytes.NewReader(append(data, 'x')), Size: int64(len(data))}, "IncompleteBody"},
		"Finalize fails": {PutInput{Body: bytes.NewReader(data), Size: int64(len(data)), Finalize: func() (map[string]string, error) { return nil, bad }}, ""},
		"body fails":     {PutInput{Body: io.MultiReader(bytes.NewReader(data[:4]), iotestErr{bad}), Size: int64(len(data))}, ""},
	}
	for name, c := range cases {
		c.in.Bucket, c.in.Key = bucket, "k-"+strings.ReplaceAll(name, " ", "-")
		_, err := f.st.Put(f.ctx, c.in)
		var e *Error
		switch {
		case c.code != "" && (!errors.As(err, &e) || e.Code != c.code):
			t.Errorf("%s: %v, want %s", name, err, c.code)
		case c.code == "" && !errors.Is(err, bad):
			t.Errorf("%s: %v, want %v", name, err, bad)
		}
		if _, err := f.be.HeadObject(f.ctx, bucket, c.in.Key); !backend.IsNotFound(err) {
			t.Errorf("%s: the store has the key: %v", name, err)
		}
	}
	if _, err := f.st.Put(f.ctx, PutInput{Bucket: bucket, Key: "good", Body: bytes.NewReader(data), Size: int64(len(data)), ContentMD5: sum[:]}); err != nil {
		t.Errorf("the right Content-MD5: %v", err)
	}
	if n := f.st.memory.used.Load(); n != 0 {
		t.Errorf("%d bytes of the memory budget still held", n)
	}
}

// iotestErr is a reader that fails.
type iotestErr struct{ err error }

func (r iotestErr) Read([]byte) (int, error) { return 0, r.err }
