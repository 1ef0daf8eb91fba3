package sealstore

import (
	"bytes"
	"slices"
	"testing"
	"time"

	"github.com/s3seal/s3seal/backend"
)

// TestGC leaves behind what crashes leave (by going around s3seal at the
// backend) and checks that gc finds exactly that, reports it without
// touching it on a dry run, removes it with Delete, and spares everything
// alive and everything young.
func TestGC(t *testing.T) {
	f := newFixture(t)
	// Alive: a multipart object, an upload in progress, a plain object.
	f.completeSmall(t, "alive", randBytes(100, 1))
	live := f.create(t, "inprogress")
	f.part(t, f.st, "inprogress", live, 1, randBytes(10, 2))
	f.put(t, "plain", []byte("x"))

	// A manifest whose object was deleted around s3seal, and one whose
	// object was replaced around s3seal.
	f.completeSmall(t, "deleted", randBytes(100, 3))
	f.completeSmall(t, "replaced", randBytes(100, 4))
	if err := f.be.DeleteObject(f.ctx, bucket, "deleted"); err != nil {
		t.Fatal(err)
	}
	raw, _ := f.be.HeadObject(f.ctx, bucket, "plain")
	obj, _ := f.be.GetObject(f.ctx, backend.GetInput{Bucket: bucket, Key: "plain"})
	body := readAllClose(t, obj)
	if _, err := f.be.PutObject(f.ctx, backend.PutInput{Bucket: bucket, Key: "replaced", Body: bytes.NewReader(body), Size: int64(len(body)), Meta: raw.Meta}); err != nil {
		t.Fatal(err)
	}
	// Upload state whose upload was aborted around s3seal.
	gone := f.create(t, "gone")
	f.part(t, f.st, "gone", gone, 1, randBytes(10, 5))
	if err := f.be.AbortMultipartUpload(f.ctx, bucket, "gone", gone); err != nil {
		t.Fatal(err)
	}
	// A backend upload without state (s3seal stopped after creating it).
	bare, err := f.be.CreateMultipartUpload(f.ctx, backend.CreateMultipartInput{Bucket: bucket, Key: "bare"})
	if err != nil {
		t.Fatal(err)
	}

	later := func() time.Time { return time.Now().Add(48 * time.Hour) }
	before := f.reservedKeys(t, ReservedPrefix)
	found, err := f.st.GC(f.ctx, bucket, GCOptions{MinAge: 24 * time.Hour, Now: later})
	if err != nil {
		t.Fatal(err)
	}
	kinds := map[string]int{}
	for _, g := range found {
		kinds[g.Kind]++
		if g.Removed {
			t.Errorf("dry run removed %+v", g)
		}
	}
	// Two manifests; the gone upload's info and one part record; the bare upload.
	if kinds["manifest"] != 2 || kinds["upload-state"] != 2 || kinds["upload"] != 1 || len(found) != 5 {
		t.Fatalf("found %+v", found)
	}
	if after := f.reservedKeys(t, ReservedPrefix); !slices.Equal(before, after) {
		t.Fatalf("dry run changed the state: %v -> %v", before, after)
	}
	// Young: nothing.
	if young, err := f.st.GC(f.ctx, bucket, GCOptions{MinAge: 24 * time.Hour}); err != nil || len(young) != 0 {
		t.Fatalf("young state found: %+v, %v", young, err)
	}

	if _, err := f.st.GC(f.ctx, bucket, GCOptions{MinAge: 24 * time.Hour, Now: later, Delete: true}); err != nil {
		t.Fatal(err)
	}
	if again, err := f.st.GC(f.ctx, bucket, GCOptions{MinAge: 24 * time.Hour, Now: later}); err != nil || len(again) != 0 {
		t.Fatalf("after delete: %+v, %v", again, err)
	}
	ups, _ := f.be.ListMultipartUploads(f.ctx, backend.ListUploadsInput{Bucket: bucket})
	if len(ups.Uploads) != 1 || ups.Uploads[0].UploadID != live || bare == live {
		t.Fatalf("uploads left: %+v", ups.Uploads)
	}
	// What is alive still works.
	if _, got, err := f.get(t, "alive", nil); err != nil || !bytes.Equal(got, randBytes(100, 1)) {
		t.Fatalf("alive object: %v", err)
	}
	e2 := f.part(t, f.st, "inprogress", live, 2, randBytes(10, 6))
	page, err := f.st.ListParts(f.ctx, bucket, "inprogress", live, 0, 1000)
	if err != nil || len(page.Parts) != 2 || page.Parts[1].ETag != e2.ETag {
		t.Fatalf("live upload after gc: %+v, %v", page, err)
	}
}

func readAllClose(t *testing.T, obj *backend.Object) []byte {
	t.Helper()
	defer obj.Body.Close()
	b := new(bytes.Buffer)
	if _, err := b.ReadFrom(obj.Body); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// TestGCRemovesRewrapProbeLeftovers: a rewrap killed during its probe (or
// whose clean-up failed) leaves a scratch object and an upload under
// probePrefix; gc removes both once older than MinAge, and nothing else
// under the reserved prefix.
func TestGCRemovesRewrapProbeLeftovers(t *testing.T) {
	f := newFixture(t)
	probe := probePrefix + "0123456789abcdef"
	if _, err := f.be.PutObject(f.ctx, backend.PutInput{Bucket: bucket, Key: probe, Body: bytes.NewReader([]byte("p")), Size: 1}); err != nil {
		t.Fatal(err)
	}
	id, err := f.be.CreateMultipartUpload(f.ctx, backend.CreateMultipartInput{Bucket: bucket, Key: probe})
	if err != nil {
		t.Fatal(err)
	}
	live := f.create(t, "inprogress") // a client's upload, with its state
	later := func() time.Time { return time.Now().Add(48 * time.Hour) }
	if young, err := f.st.GC(f.ctx, bucket, GCOptions{MinAge: time.Hour}); err != nil || len(young) != 0 {
		t.Fatalf("young probe leftovers: %+v %v", young, err)
	}
	found, err := f.st.GC(f.ctx, bucket, GCOptions{MinAge: time.Hour, Now: later, Delete: true})
	if err != nil {
		t.Fatal(err)
	}
	kinds := map[string]bool{}
	for _, g := range found {
		if g.Key != probe || !g.Removed {
			t.Errorf("gc found %+v", g)
		}
		kinds[g.Kind] = g.Kind != "upload" || g.UploadID == id
	}
	if !kinds["probe"] || !kinds["upload"] || len(found) != 2 {
		t.Fatalf("gc found %+v", found)
	}
	if keys := f.reservedKeys(t, probePrefix); len(keys) != 0 {
		t.Fatalf("left: %v", keys)
	}
	ups, err := f.be.ListMultipartUploads(f.ctx, backend.ListUploadsInput{Bucket: bucket})
	if err != nil || len(ups.Uploads) != 1 || ups.Uploads[0].UploadID != live {
		t.Fatalf("uploads after gc: %+v %v", ups.Uploads, err)
	}
}
