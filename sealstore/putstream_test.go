package sealstore

import (
	"bytes"
	"context"
	"crypto/md5"
	"encoding/base64"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"sync/atomic"
	"testing"
	"time"

	"github.com/s3seal/s3seal/backend"
	"github.com/s3seal/s3seal/crypto"
	"github.com/s3seal/s3seal/retry"
)

// streamSize spans 17 segments, the last one short.
const streamSize = 16*crypto.SegmentSize + 777

// streamedInput is a PUT of data as a client that declares its length,
// Content-MD5 and CRC32C (in a header) sends it: one s3seal streams.
// The CRC32C is checked as s3api's checks do, by Finalize.
func streamedInput(key string, data []byte) PutInput {
	sum := md5.Sum(data)
	crc := crc32.New(castagnoli)
	want := crc32Base64(data)
	return PutInput{Bucket: bucket, Key: key, Body: bytes.NewReader(data), Size: int64(len(data)),
		ContentMD5: sum[:], Declared: map[string]string{"crc32c": want}, Observe: crc,
		Finalize: func() (map[string]string, error) {
			got := base64.StdEncoding.EncodeToString(crc.Sum(nil))
			if got != want {
				return nil, errorf("BadDigest", "The CRC32C you specified did not match the calculated checksum.")
			}
			return map[string]string{"CRC32C": got}, nil
		}}
}

func crc32Base64(b []byte) string {
	h := crc32.New(castagnoli)
	h.Write(b)
	return base64.StdEncoding.EncodeToString(h.Sum(nil))
}

// onceCounter counts the backend PUTs whose body was sent once (streamed)
// and all PUTs.
type onceCounter struct {
	backend.Store
	once, all atomic.Int64
}

func (c *onceCounter) PutObject(ctx context.Context, in backend.PutInput) (backend.PutOutput, error) {
	c.all.Add(1)
	if backend.SentOnce(in.Body) {
		c.once.Add(1)
	}
	return c.Store.PutObject(ctx, in)
}

// onStores runs fn on a Store over the embedded store and over moto.
func onStores(t *testing.T, fn func(t *testing.T, f *fixture, c *onceCounter)) {
	for name, mk := range map[string]func(*testing.T) *fixture{"embedded": func(t *testing.T) *fixture { return newFixture(t) }, "moto": motoFixture} {
		t.Run(name, func(t *testing.T) {
			f := mk(t)
			c := &onceCounter{Store: f.be}
			st, err := New(Direct(c), f.kr, Options{SpoolDir: t.TempDir(), OwnerPendingAge: time.Nanosecond})
			if err != nil {
				t.Fatal(err)
			}
			f.st = st
			fn(t, f, c)
		})
	}
}

// TestStreamedPutReadsBack: a PUT that declares its length, Content-MD5
// and a checksum is sent to the store without a spool, and reads back
// byte for byte with its ETag and checksum; one that declares no checksum
// in a header is spooled.
func TestStreamedPutReadsBack(t *testing.T) {
	onStores(t, func(t *testing.T, f *fixture, c *onceCounter) {
		data := randBytes(streamSize, 7)
		in := streamedInput("streamed", data)
		info, err := f.st.Put(f.ctx, in)
		if err != nil {
			t.Fatal(err)
		}
		if c.once.Load() != 1 {
			t.Fatalf("%d of %d backend PUTs streamed, want the one", c.once.Load(), c.all.Load())
		}
		if info.ETag != md5hex(data) || info.Size != streamSize || info.Checksums["crc32c"] != in.Declared["crc32c"] {
			t.Errorf("answer: ETag %s size %d checksums %v", info.ETag, info.Size, info.Checksums)
		}
		got, body, err := f.get(t, "streamed", nil)
		if err != nil || !bytes.Equal(body, data) {
			t.Fatalf("read back: %v, %d bytes equal %v", err, len(body), bytes.Equal(body, data))
		}
		if got.ETag != md5hex(data) || got.Checksums["crc32c"] != in.Declared["crc32c"] {
			t.Errorf("read back: ETag %s checksums %v", got.ETag, got.Checksums)
		}
		_, part, err := f.get(t, "streamed", &Range{First: 5*crypto.SegmentSize - 3, Last: 9 * crypto.SegmentSize})
		if err != nil || !bytes.Equal(part, data[5*crypto.SegmentSize-3:9*crypto.SegmentSize+1]) {
			t.Fatalf("range: %v", err)
		}

		plain := streamedInput("spooled", data)
		plain.Declared = nil
		if _, err := f.st.Put(f.ctx, plain); err != nil {
			t.Fatal(err)
		}
		if c.once.Load() != 1 {
			t.Errorf("a PUT without a declared checksum was streamed")
		}
	})
}

// errorAfter is a client body that gives its first n bytes of data, then
// fails with err (io.EOF: a body that just ends).
type errorAfter struct {
	r   io.Reader
	err error
}

func cutAfter(data []byte, n int, err error) io.Reader {
	return &errorAfter{r: bytes.NewReader(data[:n]), err: err}
}

func (e *errorAfter) Read(p []byte) (int, error) {
	n, err := e.r.Read(p)
	if err == io.EOF {
		err = e.err
	}
	return n, err
}

// TestStreamedPutFailingBodyLeavesNothing: a streamed PUT whose body fails
// a check (wrong Content-MD5, wrong checksum, short, long, or cut by an
// error at any segment boundary, inside a segment, or after its last
// byte) fails with the body's error, and the store keeps the object that
// was there before, untouched: the backend PUT never got its last
// segment.
func TestStreamedPutFailingBodyLeavesNothing(t *testing.T) {
	onStores(t, func(t *testing.T, f *fixture, c *onceCounter) {
		data := randBytes(streamSize, 8)
		before := randBytes(1000, 9)
		f.put(t, "k", before)
		cut := errors.New("chunk signature mismatch")
		type tc struct {
			name string
			in   func(PutInput) PutInput
			code string
		}
		cases := []tc{
			{"wrong Content-MD5", func(in PutInput) PutInput { in.ContentMD5 = bytes.Repeat([]byte{1}, 16); return in }, "BadDigest"},
			{"wrong checksum", func(in PutInput) PutInput {
				in.Body = bytes.NewReader(append(data[:len(data)-1:len(data)-1], data[len(data)-1]^1))
				md := md5.Sum(append(data[:len(data)-1:len(data)-1], data[len(data)-1]^1))
				in.ContentMD5 = md[:]
				return in
			}, "BadDigest"},
			{"short body", func(in PutInput) PutInput { in.Body = cutAfter(data, len(data)-1, io.EOF); return in }, "IncompleteBody"},
			{"long body", func(in PutInput) PutInput {
				in.Body = io.MultiReader(bytes.NewReader(data), bytes.NewReader([]byte("x")))
				return in
			}, "IncompleteBody"},
			{"error after the last byte", func(in PutInput) PutInput { in.Body = cutAfter(data, len(data), cut); return in }, ""},
			{"error inside a segment", func(in PutInput) PutInput { in.Body = cutAfter(data, 3*crypto.SegmentSize+100, cut); return in }, ""},
		}
		for i := 0; i <= streamSize/crypto.SegmentSize; i++ {
			n := i * crypto.SegmentSize
			cases = append(cases, tc{fmt.Sprintf("error at segment boundary %d", i), func(in PutInput) PutInput { in.Body = cutAfter(data, n, cut); return in }, ""})
		}
		for _, k := range cases {
			in := k.in(streamedInput("k", data))
			streamed := c.once.Load()
			_, err := f.st.Put(f.ctx, in)
			if c.once.Load() != streamed+1 {
				t.Fatalf("%s: not streamed", k.name)
			}
			switch {
			case k.code == "" && !errors.Is(err, cut):
				t.Errorf("%s: %v, want the body's error", k.name, err)
			case k.code != "" && errorCode(err) != k.code:
				t.Errorf("%s: %v, want %s", k.name, err, k.code)
			}
			_, got, err := f.get(t, "k", nil)
			if err != nil || !bytes.Equal(got, before) {
				t.Fatalf("%s: the object before: %v, %d bytes (want %d)", k.name, err, len(got), len(before))
			}
		}
		if _, err := f.st.Head(f.ctx, bucket, "never"); errorCode(err) != "NoSuchKey" && errorCode(err) != "NotFound" {
			t.Errorf("HEAD of a key never written: %v", err)
		}
	})
}

// flakyStore breaks streamed PUTs the ways a flaky store does: the
// connection drops after the store read some of the body (drop), or the
// store stores the object and its answer is lost (lose).
type flakyStore struct {
	backend.Store
	drop, lose atomic.Int64 // PUTs left to break
	calls      atomic.Int64
}

func (s *flakyStore) PutObject(ctx context.Context, in backend.PutInput) (backend.PutOutput, error) {
	s.calls.Add(1)
	if s.drop.Add(-1) >= 0 {
		io.CopyN(io.Discard, in.Body, 3*crypto.SegmentSize)
		return backend.PutOutput{}, &backend.Error{Op: "PutObject", Code: "InternalError", Message: "We encountered an internal error. Please try again.", StatusCode: 500}
	}
	out, err := s.Store.PutObject(ctx, in)
	if err == nil && s.lose.Add(-1) >= 0 {
		return backend.PutOutput{}, &backend.Error{Op: "PutObject", Err: io.ErrUnexpectedEOF}
	}
	return out, err
}

// TestStreamedPutOnFlakyStore: through the retry layer, a streamed PUT
// is sent once: a store that fails it leaves the client a transient
// error (its own client sends the PUT again) and the object before
// intact; a store that took it and lost its answer holds the new object
// whole. Either way the next PUT stores it, and what reads back is always
// one whole object, never a mix.
func TestStreamedPutOnFlakyStore(t *testing.T) {
	onStores(t, func(t *testing.T, f *fixture, _ *onceCounter) {
		fl := &flakyStore{Store: f.be}
		st, err := New(retry.Store(fl, retry.Policy{Attempts: 4, Backoff: time.Millisecond, MaxBackoff: time.Millisecond}), f.kr,
			Options{SpoolDir: t.TempDir(), OwnerPendingAge: time.Nanosecond})
		if err != nil {
			t.Fatal(err)
		}
		before, data := randBytes(500, 10), randBytes(streamSize, 11)
		f.put(t, "k", before)

		fl.drop.Store(1)
		_, err = st.Put(f.ctx, streamedInput("k", data))
		if !retry.Retryable(err) || fl.calls.Load() != 1 {
			t.Fatalf("dropped PUT: %v after %d calls, want a transient error after one", err, fl.calls.Load())
		}
		if _, got, err := f.get(t, "k", nil); err != nil || !bytes.Equal(got, before) {
			t.Fatalf("after a dropped PUT: %v, want the object before", err)
		}

		fl.lose.Store(1)
		if _, err := st.Put(f.ctx, streamedInput("k", data)); err == nil {
			t.Fatal("a lost answer reported success")
		}
		if _, got, err := f.get(t, "k", nil); err != nil || !bytes.Equal(got, data) {
			t.Fatalf("after a lost answer: %v, want the new object whole", err)
		}

		again := randBytes(streamSize, 12)
		if _, err := st.Put(f.ctx, streamedInput("k", again)); err != nil {
			t.Fatal(err)
		}
		if _, got, err := f.get(t, "k", nil); err != nil || !bytes.Equal(got, again) {
			t.Fatalf("the client's retry: %v", err)
		}
	})
}
