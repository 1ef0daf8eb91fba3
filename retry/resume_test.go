package retry

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"syscall"
	"testing"

	"github.com/s3seal/s3seal/backend"
)

// cutSource serves data from any offset; the reader opened at the i-th
// open breaks with cause after cuts[i] bytes (no entry: never breaks).
type cutSource struct {
	data  []byte
	cuts  []int
	cause error
	opens []int64
}

func (s *cutSource) open(_ context.Context, off int64) (io.ReadCloser, error) {
	i := len(s.opens)
	s.opens = append(s.opens, off)
	rest := s.data[off:]
	if i < len(s.cuts) && s.cuts[i] < len(rest) {
		return io.NopCloser(io.MultiReader(bytes.NewReader(rest[:s.cuts[i]]), errReader{s.cause})), nil
	}
	return io.NopCloser(bytes.NewReader(rest)), nil
}

type errReader struct{ err error }

func (r errReader) Read([]byte) (int, error) { return 0, r.err }

func TestResumingReaderExactAfterCuts(t *testing.T) {
	data := make([]byte, 300_000)
	for i := range data {
		data[i] = byte(i * 7 / 3)
	}
	reset := &backend.Error{Op: "GetObject", Err: fmt.Errorf("read: %w", syscall.ECONNRESET)}
	for _, cuts := range [][]int{{0}, {1}, {65536}, {100, 5000, 70000}, {299_999}, {0, 0, 0}} {
		src := &cutSource{data: data, cuts: cuts, cause: reset}
		r := NewResumingReader(context.Background(), fast, Call{Operation: "UploadPartCopy"}, int64(len(data)), src.open)
		got, err := io.ReadAll(r)
		r.Close()
		if err != nil || !bytes.Equal(got, data) {
			t.Fatalf("cuts %v: err=%v, %d bytes, equal=%v", cuts, err, len(got), bytes.Equal(got, data))
		}
		want, off := []int64{0}, int64(0)
		for _, c := range cuts {
			off += int64(c)
			want = append(want, off)
		}
		if fmt.Sprint(src.opens) != fmt.Sprint(want) {
			t.Fatalf("cuts %v: opened at %v, want %v", cuts, src.opens, want)
		}
	}
}

func TestResumingReaderShortSourceResumed(t *testing.T) {
	// A body that ends cleanly but early is a cut too.
	data := []byte(strings.Repeat("abc", 1000))
	src := &cutSource{data: data, cuts: []int{10}, cause: io.EOF}
	r := NewResumingReader(context.Background(), fast, Call{}, int64(len(data)), src.open)
	got, err := io.ReadAll(r)
	if err != nil || !bytes.Equal(got, data) || len(src.opens) != 2 {
		t.Fatalf("err=%v len=%d opens=%v", err, len(got), src.opens)
	}
}

func TestResumingReaderGivesUpAfterBound(t *testing.T) {
	data := []byte(strings.Repeat("x", 1000))
	src := &cutSource{data: data, cuts: []int{500, 0, 0, 0, 0, 0, 0}, cause: io.ErrUnexpectedEOF}
	var buf bytes.Buffer
	r := NewResumingReader(context.Background(), logTo(&buf), Call{Operation: "CopyObject", Bucket: "b", Key: "k"}, int64(len(data)), src.open)
	got, err := io.ReadAll(r)
	if !errors.Is(err, io.ErrUnexpectedEOF) || len(got) != 500 {
		t.Fatalf("err=%v after %d bytes", err, len(got))
	}
	// Attempts tries at offset 500: the read that broke there, then
	// Attempts-1 reopens.
	if fmt.Sprint(src.opens) != "[0 500 500 500]" || fast.Attempts != 4 {
		t.Fatalf("opened at %v, want [0 500 500 500]", src.opens)
	}
	if !strings.Contains(buf.String(), "resuming source read") || !strings.Contains(buf.String(), "source read failed after retries") ||
		!strings.Contains(buf.String(), `"offset":500`) {
		t.Fatalf("events:\n%s", buf.String())
	}
}

func TestResumingReaderPermanentErrorNotRetried(t *testing.T) {
	denied := &backend.Error{Op: "GetObject", Code: "AccessDenied", StatusCode: 403}
	opens := 0
	r := NewResumingReader(context.Background(), fast, Call{}, 10, func(context.Context, int64) (io.ReadCloser, error) {
		opens++
		return nil, denied
	})
	if _, err := io.ReadAll(r); !errors.Is(err, denied) || opens != 1 {
		t.Fatalf("err=%v opens=%d", err, opens)
	}
}

func TestResumingReaderStopsWhenClientGone(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	opens := 0
	r := NewResumingReader(ctx, Policy{Attempts: 100, Backoff: 1, Logger: fast.Logger}, Call{}, 10, func(context.Context, int64) (io.ReadCloser, error) {
		opens++
		cancel()
		return nil, &backend.Error{Op: "GetObject", Code: "SlowDown", StatusCode: 503}
	})
	if _, err := io.ReadAll(r); !errors.Is(err, context.Canceled) || opens != 1 {
		t.Fatalf("err=%v opens=%d", err, opens)
	}
}
