package sealstore

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"syscall"
	"testing"

	"github.com/s3seal/s3seal/crypto"
)

// fakeDisk is a filesystem of a given size for the spool: free space is
// what the spool files written so far leave (they are counted by the
// fixture's Observer, as the kernel would count their blocks).
type fakeDisk struct {
	mu         sync.Mutex
	size, used int64
	high       int64 // the most ever used
}

func (d *fakeDisk) free(string) (int64, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.size - d.used, nil
}

func (d *fakeDisk) SpoolBytes(delta int64) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.used += delta
	d.high = max(d.high, d.used)
}

func (d *fakeDisk) ListCache(bool)  {}
func (d *fakeDisk) Copy(bool, bool) {}

func (d *fakeDisk) inUse() int64 {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.used
}

// newSpaceFixture is newFixture with the spool on a fake disk of size
// bytes and the given reserve.
func newSpaceFixture(t *testing.T, size, reserve int64) (*fixture, *fakeDisk) {
	t.Helper()
	d := &fakeDisk{size: size}
	return newFixtureWith(t, Options{SpoolReserve: reserve, spoolFree: d.free, Observer: d}), d
}

func wantSlowDown(t *testing.T, what string, err error) {
	t.Helper()
	var e *Error
	if !errors.As(err, &e) || e.Code != "SlowDown" || e.Message != "Please reduce your request rate." {
		t.Fatalf("%s: got %v, want SlowDown \"Please reduce your request rate.\"", what, err)
	}
}

// readCounter counts the bytes a body gave.
type readCounter struct {
	r io.Reader
	n int64
}

func (c *readCounter) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// TestSpoolSpaceRefusesBeforeReading: a declared body that would leave
// less than the reserve free is refused with SlowDown before a byte is
// read; one that fits is stored; nothing of the refused one is published.
func TestSpoolSpaceRefusesBeforeReading(t *testing.T) {
	const mib = 1 << 20
	f, d := newSpaceFixture(t, 10*mib, 2*mib)
	ok := randBytes(7*mib, 1)
	f.put(t, "fits", ok)

	body := &readCounter{r: bytes.NewReader(randBytes(9*mib, 2))}
	_, err := f.st.Put(f.ctx, PutInput{Bucket: bucket, Key: "big", Body: body, Size: 9 * mib})
	wantSlowDown(t, "9 MiB PUT on a 10 MiB disk with 2 MiB reserved", err)
	if body.n != 0 {
		t.Errorf("the refused body was read (%d bytes)", body.n)
	}
	if _, err := f.be.HeadObject(f.ctx, bucket, "big"); err == nil {
		t.Error("the refused body was published")
	}

	// A part is admitted the same way.
	id, err := f.st.CreateMultipart(f.ctx, CreateMultipartInput{Bucket: bucket, Key: "mp"})
	if err != nil {
		t.Fatal(err)
	}
	_, err = f.st.UploadPart(f.ctx, UploadPartInput{Bucket: bucket, Key: "mp", UploadID: id, PartNumber: 1,
		Body: bytes.NewReader(randBytes(9*mib, 3)), Size: 9 * mib})
	wantSlowDown(t, "9 MiB part", err)
	if _, err := f.st.UploadPart(f.ctx, UploadPartInput{Bucket: bucket, Key: "mp", UploadID: id, PartNumber: 1,
		Body: bytes.NewReader(ok), Size: int64(len(ok))}); err != nil {
		t.Fatalf("a 7 MiB part, which fits: %v", err)
	}
	if d.inUse() != 0 || f.st.space.pending != 0 {
		t.Errorf("after the requests: %d bytes spooled, %d pending, want none", d.inUse(), f.st.space.pending)
	}
	if d.high > 10*mib-2*mib {
		t.Errorf("the spool took up to %d bytes, above the %d the reserve leaves", d.high, 10*mib-2*mib)
	}
}

// TestSpoolSpaceConcurrent: bodies admitted at once are counted together,
// written or not: of four 3 MiB bodies held open on an 11 MiB disk with
// 1 MiB reserved, three fit and the fourth is refused; once they are gone
// the fourth fits.
func TestSpoolSpaceConcurrent(t *testing.T) {
	const mib = 1 << 20
	f, _ := newSpaceFixture(t, 11*mib, 1*mib)
	type held struct {
		sp  *spooled
		err error
	}
	var open []*spooled
	defer func() {
		for _, sp := range open {
			sp.close()
		}
	}()
	dk, _ := crypto.NewDataKey()
	// The first body is still arriving: only its admission counts yet.
	pr, pw := io.Pipe()
	first := make(chan held, 1)
	go func() {
		sp, err := f.st.seal(PutInput{Body: pr, Size: 3 * mib}, dk, crypto.Stream{})
		first <- held{sp, err}
	}()
	if _, err := pw.Write(randBytes(mib, 9)); err != nil {
		t.Fatal(err)
	}
	for i := range 2 {
		sp, err := f.st.seal(PutInput{Body: bytes.NewReader(randBytes(3*mib, uint64(i))), Size: 3 * mib}, dk, crypto.Stream{})
		if err != nil {
			t.Fatalf("body %d: %v", i+2, err)
		}
		open = append(open, sp)
	}
	_, err := f.st.seal(PutInput{Body: bytes.NewReader(randBytes(3*mib, 5)), Size: 3 * mib}, dk, crypto.Stream{})
	wantSlowDown(t, "a fourth 3 MiB body", err)
	go func() { pw.Write(randBytes(2*mib, 10)); pw.Close() }()
	h := <-first
	if h.err != nil {
		t.Fatalf("the first body: %v", h.err)
	}
	open = append(open, h.sp)
	for _, sp := range open {
		sp.close()
	}
	open = nil
	sp, err := f.st.seal(PutInput{Body: bytes.NewReader(randBytes(3*mib, 5)), Size: 3 * mib}, dk, crypto.Stream{})
	if err != nil {
		t.Fatalf("the fourth body once the others are gone: %v", err)
	}
	sp.close()
}

// TestSpoolSpaceUnknownLength: a body of unknown length is admitted as it
// grows, and refused with SlowDown when the next step would not fit;
// nothing is published and its room is given back.
func TestSpoolSpaceUnknownLength(t *testing.T) {
	const mib = 1 << 20
	f, d := newSpaceFixture(t, 16*mib, 2*mib)
	small := randBytes(5*mib, 4)
	if _, err := f.st.Put(f.ctx, PutInput{Bucket: bucket, Key: "small", Body: bytes.NewReader(small), Size: -1}); err != nil {
		t.Fatalf("5 MiB of unknown length: %v", err)
	}
	_, err := f.st.Put(f.ctx, PutInput{Bucket: bucket, Key: "large", Body: bytes.NewReader(randBytes(20*mib, 5)), Size: -1})
	wantSlowDown(t, "20 MiB of unknown length on a 16 MiB disk", err)
	if _, err := f.be.HeadObject(f.ctx, bucket, "large"); err == nil {
		t.Error("the refused body was published")
	}
	if d.inUse() != 0 || f.st.space.pending != 0 {
		t.Errorf("after the requests: %d bytes spooled, %d pending, want none", d.inUse(), f.st.space.pending)
	}
	if d.high > 14*mib {
		t.Errorf("the spool took up to %d bytes, above the %d the reserve leaves", d.high, 14*mib)
	}
	_, got, err := f.get(t, "small", nil)
	if err != nil || !bytes.Equal(got, small) {
		t.Errorf("read back the 5 MiB object: %v (equal %v)", err, bytes.Equal(got, small))
	}
}

// fullFile fails every write past limit bytes with ENOSPC, as a full
// filesystem does.
type fullFile struct {
	w     io.Writer
	limit int64
}

func (f *fullFile) Write(p []byte) (int, error) {
	if int64(len(p)) > f.limit {
		n, _ := f.w.Write(p[:f.limit])
		f.limit = 0
		return n, &os.PathError{Op: "write", Path: "spool", Err: syscall.ENOSPC}
	}
	f.limit -= int64(len(p))
	return f.w.Write(p)
}

// TestSpoolSpaceDiskFull: a disk that fills anyway (another writer) is
// SlowDown too, and the room admitted is given back.
func TestSpoolSpaceDiskFull(t *testing.T) {
	space := newSpoolSpace(t.TempDir(), -1, func(string) (int64, error) { return 1 << 30, nil })
	w := &spaceWriter{w: &fullFile{w: io.Discard, limit: 100}, space: space}
	if _, err := w.Write(make([]byte, 64)); err != nil {
		t.Fatal(err)
	}
	_, err := w.Write(make([]byte, 64))
	wantSlowDown(t, "a write past the end of the disk", err)
	if !errors.Is(err, syscall.ENOSPC) {
		t.Errorf("the SlowDown does not carry the ENOSPC: %v", err)
	}
	w.release()
	if space.pending != 0 {
		t.Errorf("%d bytes still pending after release", space.pending)
	}
}

// TestSpoolSpaceStatfs: the default free space is the filesystem's.
func TestSpoolSpaceStatfs(t *testing.T) {
	free, err := freeSpace(t.TempDir())
	if err != nil || free <= 0 {
		t.Fatalf("freeSpace = %d, %v", free, err)
	}
	if _, err := freeSpace(t.TempDir() + "/missing"); err == nil {
		t.Error("freeSpace of a missing directory succeeded")
	}
	st, err := New(Direct(nil), nil, Options{SpoolDir: t.TempDir(), SpoolReserve: free * 2, MemoryBodies: -1})
	if err != nil {
		t.Fatal(err)
	}
	dk, _ := crypto.NewDataKey()
	_, err = st.seal(PutInput{Body: bytes.NewReader([]byte("x")), Size: 1}, dk, crypto.Stream{})
	wantSlowDown(t, fmt.Sprintf("a reserve of %d on a disk with %d free", free*2, free), err)
}
