package sealstore

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"runtime"
	"testing"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/s3seal/s3seal/backend"
	"github.com/s3seal/s3seal/backend/embedded"
	"github.com/s3seal/s3seal/crypto"
)

// newTinyPartsFixture is newFixture on an embedded store, and a Store,
// that take parts of any size: 10,000 parts of S3's 5 MiB would be 50 GB.
func newTinyPartsFixture(t *testing.T) *fixture {
	t.Helper()
	return newFixtureWith(t, Options{minPartSize: 1}, embedded.WithMinPartSize(1))
}

// peakHeap samples the live heap until stop is called, which returns the
// most it saw above what was live when it started (after a GC).
func peakHeap() (stop func() uint64) {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	base := ms.HeapAlloc
	done, out := make(chan struct{}), make(chan uint64)
	go func() {
		var peak uint64
		for {
			runtime.ReadMemStats(&ms)
			peak = max(peak, ms.HeapAlloc)
			select {
			case <-done:
				out <- peak - min(peak, base)
				return
			case <-time.After(5 * time.Millisecond):
			}
		}
	}()
	return func() uint64 { close(done); return <-out }
}

// inParallel runs f(i) for i in [0, n), 8 at a time, and returns the
// first error.
func inParallel(n int, f func(i int) error) error {
	var g errgroup.Group
	g.SetLimit(8)
	for i := range n {
		g.Go(func() error { return f(i) })
	}
	return g.Wait()
}

// scaleEnv, set to 1, runs the scale tests at full size (10,000 parts,
// 100,000 objects: minutes); else they run at a size the default suite
// affords. docs/TESTING.md (Scale tests) names the command.
const scaleEnv = "S3SEAL_SCALE"

// scaleCount is n, or full when scaleEnv is set.
func scaleCount(n, full int) int {
	if os.Getenv(scaleEnv) == "1" {
		return full
	}
	return n
}

// manyPartsHeapBound is what completing an upload of n parts may add to
// the heap of the test process, which also runs the embedded store: 4 KiB
// of bookkeeping per part (sealstore's part records and manifest, the
// backend's part list and XML; about 2 KiB measured), plus 4 MiB.
func manyPartsHeapBound(n int) uint64 { return 4<<20 + uint64(n)*4<<10 }

// TestTenThousandParts: an upload of S3's 10,000 parts (tiny ones; 1,500
// unless S3SEAL_SCALE=1) lists them in pages of 1000 that follow
// part-number-marker, refuses part 10,001 with InvalidArgument, completes
// within a bounded heap, and reads back whole.
func TestTenThousandParts(t *testing.T) {
	if testing.Short() {
		t.Skip("10,000 parts skipped with -short")
	}
	f := newTinyPartsFixture(t)
	n := scaleCount(1500, crypto.MaxParts)
	id, err := f.st.CreateMultipart(f.ctx, CreateMultipartInput{Bucket: bucket, Key: "many"})
	if err != nil {
		t.Fatal(err)
	}
	body := func(i int) []byte { return fmt.Appendf(nil, "part %05d\n", i) }
	_, err = f.st.UploadPart(f.ctx, UploadPartInput{Bucket: bucket, Key: "many", UploadID: id, PartNumber: crypto.MaxParts + 1,
		Body: bytes.NewReader(body(0)), Size: int64(len(body(0)))})
	var e *Error
	if !errors.As(err, &e) || e.Code != "InvalidArgument" {
		t.Fatalf("part %d: %v, want InvalidArgument", crypto.MaxParts+1, err)
	}

	start := time.Now()
	etags := make([]string, n)
	err = inParallel(n, func(i int) error {
		b := body(i + 1)
		p, err := f.st.UploadPart(f.ctx, UploadPartInput{Bucket: bucket, Key: "many", UploadID: id, PartNumber: i + 1,
			Body: bytes.NewReader(b), Size: int64(len(b))})
		etags[i] = p.ETag
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d parts uploaded in %v", n, time.Since(start).Round(time.Millisecond))

	start = time.Now()
	marker, pages := 0, 0
	for {
		page, err := f.st.ListParts(f.ctx, bucket, "many", id, marker, 5000)
		if err != nil {
			t.Fatal(err)
		}
		pages++
		if want := min(1000, n-marker); len(page.Parts) != want {
			t.Fatalf("page %d after marker %d: %d parts, want %d (max-parts is capped at 1000)", pages, marker, len(page.Parts), want)
		}
		for j, p := range page.Parts {
			if p.PartNumber != marker+j+1 || p.ETag != etags[p.PartNumber-1] || p.Size != int64(len(body(p.PartNumber))) {
				t.Fatalf("page %d, entry %d: part %d %s %d bytes, want part %d %s", pages, j, p.PartNumber, p.ETag, p.Size, marker+j+1, etags[marker+j])
			}
		}
		if want := marker + len(page.Parts); page.NextMarker != want {
			t.Fatalf("page %d: NextPartNumberMarker %d, want %d", pages, page.NextMarker, want)
		}
		marker = page.NextMarker
		if want := marker < n; page.IsTruncated != want {
			t.Fatalf("page %d: IsTruncated %v, want %v", pages, page.IsTruncated, want)
		}
		if !page.IsTruncated {
			break
		}
	}
	if want := (n + 999) / 1000; pages != want {
		t.Fatalf("%d pages, want %d", pages, want)
	}
	t.Logf("ListParts: %d pages of up to 1000 in %v", pages, time.Since(start).Round(time.Millisecond))

	parts := make([]CompletePart, n)
	var want bytes.Buffer
	for i := range parts {
		parts[i] = CompletePart{PartNumber: i + 1, ETag: etags[i]}
		want.Write(body(i + 1))
	}
	stop := peakHeap()
	start = time.Now()
	info, err := f.st.CompleteMultipart(f.ctx, CompleteInput{Bucket: bucket, Key: "many", UploadID: id, Parts: parts, ExpectSize: -1})
	took, heap := time.Since(start), stop()
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("CompleteMultipart of %d parts: %v, peak heap +%.1f MiB (bound %.1f MiB)", n, took.Round(time.Millisecond), float64(heap)/(1<<20), float64(manyPartsHeapBound(n))/(1<<20))
	if heap > manyPartsHeapBound(n) {
		t.Errorf("completing %d parts took %d bytes of heap, above the bound of %d", n, heap, manyPartsHeapBound(n))
	}
	if info.Size != int64(want.Len()) {
		t.Errorf("completed object: %d bytes, want %d", info.Size, want.Len())
	}
	_, got, err := f.get(t, "many", nil)
	if err != nil || !bytes.Equal(got, want.Bytes()) {
		t.Fatalf("read back %d bytes (%v), want %d equal", len(got), err, want.Len())
	}
}

// TestManyUploadsListing: 2,500 uploads in progress in one bucket list in
// pages of max-uploads that follow key-marker and upload-id-marker, each
// upload exactly once, several uploads of one key included.
func TestManyUploadsListing(t *testing.T) {
	if testing.Short() {
		t.Skip("2,500 uploads skipped with -short")
	}
	f := newFixture(t)
	const n = 2500
	ids := make([]string, n)
	err := inParallel(n, func(i int) error {
		// Five uploads per key: a page may end inside a key's uploads.
		id, err := f.st.CreateMultipart(f.ctx, CreateMultipartInput{Bucket: bucket, Key: fmt.Sprintf("k/%04d", i/5)})
		ids[i] = id
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]bool{}
	for i, id := range ids {
		want[fmt.Sprintf("k/%04d", i/5)+" "+id] = true
	}
	seen := map[string]bool{}
	in := backend.ListUploadsInput{Bucket: bucket, MaxUploads: 333}
	pages := 0
	for {
		out, err := f.st.ListUploads(f.ctx, in)
		if err != nil {
			t.Fatal(err)
		}
		pages++
		if len(out.Uploads) > 333 {
			t.Fatalf("page %d: %d uploads, above max-uploads 333", pages, len(out.Uploads))
		}
		for _, u := range out.Uploads {
			k := u.Key + " " + u.UploadID
			if seen[k] || !want[k] {
				t.Fatalf("page %d: upload %s listed again or unknown", pages, k)
			}
			seen[k] = true
		}
		if !out.IsTruncated {
			break
		}
		if out.NextKeyMarker == "" || pages > n {
			t.Fatalf("page %d: truncated without a next marker (%q, %q)", pages, out.NextKeyMarker, out.NextUploadIDMarker)
		}
		in.KeyMarker, in.UploadIDMarker = out.NextKeyMarker, out.NextUploadIDMarker
	}
	if len(seen) != n || pages != (n+332)/333 {
		t.Fatalf("%d uploads in %d pages, want %d in %d", len(seen), pages, n, (n+332)/333)
	}
}
