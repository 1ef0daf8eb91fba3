package sealstore

import (
	"testing"
	"time"
)

// TestVerifyListedCounts: Verify tells its ListProgress of each object it
// will report as the listing finds it (s3seal's own keys not counted),
// with their backend bytes, then once that the listing is complete; the
// counts match what it reported.
func TestVerifyListedCounts(t *testing.T) {
	f := verifyFixture(t)
	type call struct {
		n        int
		bytes    int64
		complete bool
	}
	var calls []call
	var reported int
	var reportedBytes int64
	err := f.st.Verify(f.ctx, bucket, VerifyOptions{Prefix: "v/", Concurrency: 1, Listed: func(n int, b int64, complete bool) {
		calls = append(calls, call{n, b, complete})
	}}, func(r VerifyResult) { reported++; reportedBytes += r.Size })
	if err != nil {
		t.Fatal(err)
	}
	if len(calls) != reported+1 {
		t.Fatalf("%d calls for %d objects reported (want one per object and the end): %v", len(calls), reported, calls)
	}
	for i, c := range calls[:len(calls)-1] {
		if c.n != i+1 || c.complete {
			t.Errorf("call %d: %+v, want %d objects, not complete", i, c, i+1)
		}
	}
	if last := calls[len(calls)-1]; last != (call{reported, reportedBytes, true}) {
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
	var last [3]any
	calls := 0
	var reported int
	err := f.st.Rewrap(f.ctx, bucket, RewrapOptions{To: f.kr.Primary(), DryRun: true, Listed: func(n int, b int64, complete bool) {
		calls++
		last = [3]any{n, b, complete}
	}}, func(RewrapResult) { reported++ })
	if err != nil {
		t.Fatal(err)
	}
	if calls != 5 || last[0] != 4 || last[2] != true || reported != 4 {
		t.Errorf("%d calls, the last %v, %d reported: want 5 calls, the last 4 objects complete, 4 reported", calls, last, reported)
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
