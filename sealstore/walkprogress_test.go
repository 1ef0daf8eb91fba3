package sealstore

import (
	"testing"
	"time"
)

// told is one call of a ListProgress.
type told struct {
	n        int
	bytes    int64
	complete bool
}

// TestCountObjects: the count beside a run tells each object the run
// takes (s3seal's own keys are not, its bucket documents are), with the
// bytes, then the total.
func TestCountObjects(t *testing.T) {
	f := newFixture(t)
	f.put(t, "a", randBytes(70000, 1))
	f.put(t, "b", randBytes(10, 2))
	f.completeSmall(t, "mp", randBytes(100, 3)) // its manifest is under .s3seal/
	if err := f.st.PutBucketDoc(f.ctx, bucket, "owner", []byte("x")); err != nil {
		t.Fatal(err)
	}
	var calls []told
	f.st.countObjects(f.ctx, bucket, "", func(n int, b int64, complete bool) { calls = append(calls, told{n, b, complete}) })
	var want []told
	var bytes int64
	for _, k := range []string{BucketDocPrefix + "owner", "a", "b", "mp"} { // in the listing's order
		bi, err := f.be.HeadObject(f.ctx, bucket, k)
		if err != nil {
			t.Fatal(err)
		}
		bytes += bi.Size
		want = append(want, told{len(want) + 1, bytes, false})
	}
	want = append(want, told{4, bytes, true})
	if len(calls) != len(want) {
		t.Fatalf("told %v, want %v", calls, want)
	}
	for i := range want {
		if calls[i] != want[i] {
			t.Errorf("call %d: %+v, want %+v", i, calls[i], want[i])
		}
	}
}

// TestVerifyListedCounts: Verify tells its ListProgress the count (never
// more than it takes) and last, once its listing has ended, the exact
// total of what it reported.
func TestVerifyListedCounts(t *testing.T) {
	f := verifyFixture(t)
	var calls []told
	var reported int
	var reportedBytes int64
	err := f.st.Verify(f.ctx, bucket, VerifyOptions{Prefix: "v/", Concurrency: 1, Listed: func(n int, b int64, complete bool) {
		calls = append(calls, told{n, b, complete})
	}}, func(r VerifyResult) { reported++; reportedBytes += r.Size })
	if err != nil {
		t.Fatal(err)
	}
	if len(calls) < 2 {
		t.Fatalf("told %v", calls)
	}
	for _, c := range calls {
		if c.n > reported {
			t.Errorf("told %+v: more than the %d objects reported", c, reported)
		}
	}
	if last := calls[len(calls)-1]; last != (told{reported, reportedBytes, true}) {
		t.Errorf("last call %+v, want %d objects, %d bytes, complete", last, reported, reportedBytes)
	}
}

// TestRewrapListedCounts: the same of Rewrap (a dry run).
func TestRewrapListedCounts(t *testing.T) {
	f := newFixture(t)
	for _, k := range []string{"a", "b", "c"} {
		f.put(t, k, randBytes(70000, 1))
	}
	f.completeSmall(t, "mp", randBytes(100, 2)) // its manifest under .s3seal/ is not counted
	var last told
	var reported int
	err := f.st.Rewrap(f.ctx, bucket, RewrapOptions{To: f.kr.Primary(), DryRun: true, Listed: func(n int, b int64, complete bool) {
		last = told{n, b, complete}
	}}, func(RewrapResult) { reported++ })
	if err != nil {
		t.Fatal(err)
	}
	if last.n != 4 || !last.complete || reported != 4 {
		t.Errorf("the last call %+v, %d reported: want 4 objects, complete, 4 reported", last, reported)
	}
}

// TestGCExaminedCounts: GC tells Examined of each entry it looked at:
// here an upload's state (info and a part's record) and the backend
// upload.
func TestGCExaminedCounts(t *testing.T) {
	f := newFixture(t)
	id := f.create(t, "inprogress")
	f.part(t, f.st, "inprogress", id, 1, randBytes(10, 2))
	n := 0
	if _, err := f.st.GC(f.ctx, bucket, GCOptions{Now: func() time.Time { return time.Now().Add(time.Hour) }, Examined: func() { n++ }}); err != nil {
		t.Fatal(err)
	}
	state := len(f.reservedKeys(t, uploadsPrefix))
	// gcUploadState and gcUploads each list the state; then the upload.
	if want := 2*state + 1; n != want {
		t.Errorf("Examined called %d times, want %d (%d state objects listed twice, one upload)", n, want, state)
	}
}
