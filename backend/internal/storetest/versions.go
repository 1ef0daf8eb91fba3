package storetest

import (
	"context"
	"io"
	"testing"

	"github.com/s3seal/s3seal/backend"
)

// Versions is the versions contract every store s3seal runs on keeps.
func Versions(t *testing.T, st backend.Store) {
	t.Helper()
	ctx := context.Background()
	const b = "versions"
	Must(t, st.CreateBucket(ctx, b))
	if s, err := st.GetBucketVersioning(ctx, b); err != nil || s != "" {
		t.Fatalf("new bucket versioning = %q, %v", s, err)
	}
	Must(t, st.PutBucketVersioning(ctx, b, "Enabled"))
	if s, err := st.GetBucketVersioning(ctx, b); err != nil || s != "Enabled" {
		t.Fatalf("versioning = %q, %v", s, err)
	}
	v1 := Put(ctx, t, st, b, "k", []byte("one"), nil, backend.Headers{})
	v2 := Put(ctx, t, st, b, "k", []byte("two"), nil, backend.Headers{})
	if v1.VersionID == "" || v1.VersionID == v2.VersionID {
		t.Fatalf("version ids %q %q", v1.VersionID, v2.VersionID)
	}
	obj, err := st.GetObject(ctx, backend.GetInput{Bucket: b, Key: "k", VersionID: v1.VersionID})
	Must(t, err)
	body, _ := io.ReadAll(obj.Body)
	obj.Body.Close()
	if string(body) != "one" || obj.Info.VersionID != v1.VersionID {
		t.Fatalf("GET v1 = %q (version %q)", body, obj.Info.VersionID)
	}
	if hi, err := st.HeadObjectVersion(ctx, b, "k", v1.VersionID); err != nil || hi.ETag != v1.ETag || hi.VersionID != v1.VersionID {
		t.Fatalf("HEAD v1 = %+v, %v", hi, err)
	}
	cp, err := st.CopyObject(ctx, backend.CopyInput{SrcBucket: b, SrcKey: "k", SrcVersionID: v1.VersionID, Bucket: b, Key: "c"})
	Must(t, err)
	if cp.VersionID == "" || cp.ETag != v1.ETag {
		t.Fatalf("copy of v1 = %+v", cp)
	}

	// Conditional delete: the backend decides If-Match itself.
	if _, err := st.DeleteObjectVersion(ctx, backend.DeleteInput{Bucket: b, Key: "k", IfMatch: v1.ETag}); backend.ErrorCode(err) != "PreconditionFailed" {
		t.Fatalf("delete with a stale If-Match: %v", err)
	}
	del, err := st.DeleteObjectVersion(ctx, backend.DeleteInput{Bucket: b, Key: "k", IfMatch: v2.ETag})
	if err != nil || !del.DeleteMarker || del.VersionID == "" {
		t.Fatalf("delete = %+v, %v; want a marker", del, err)
	}
	// (moto says so on HEAD only; AWS on GET too.)
	_, err = st.HeadObject(ctx, b, "k")
	if e, ok := err.(*backend.Error); !ok || !e.DeleteMarker || e.VersionID != del.VersionID || !backend.IsNotFound(err) {
		t.Fatalf("HEAD of a delete marker: %#v", err)
	}
	_, err = st.HeadObjectVersion(ctx, b, "k", del.VersionID)
	if e, ok := err.(*backend.Error); !ok || !e.DeleteMarker || e.StatusCode != 405 {
		t.Fatalf("HEAD of a delete marker by id: %#v", err)
	}

	// Listing: marker first, then newest first; one entry per page.
	var got []backend.VersionEntry
	in := backend.ListVersionsInput{Bucket: b, Prefix: "k", MaxKeys: 1}
	for i := 0; i < 10; i++ {
		out, err := st.ListObjectVersions(ctx, in)
		Must(t, err)
		got = append(got, out.Entries...)
		if !out.IsTruncated {
			break
		}
		in.KeyMarker, in.VersionIDMarker = out.NextKeyMarker, out.NextVersionIDMarker
	}
	want := []struct {
		id     string
		marker bool
	}{{del.VersionID, true}, {v2.VersionID, false}, {v1.VersionID, false}}
	if len(got) != len(want) {
		t.Fatalf("listing = %+v", got)
	}
	for i, w := range want {
		if got[i].VersionID != w.id || got[i].DeleteMarker != w.marker || got[i].IsLatest != (i == 0) {
			t.Errorf("entry %d = %+v, want %+v", i, got[i], w)
		}
	}

	// DeleteVersions: a version by id, and a marker for a key.
	res, err := st.DeleteVersions(ctx, b, []backend.ObjectID{{Key: "k", VersionID: v1.VersionID}, {Key: "c"}})
	Must(t, err)
	if len(res) != 2 || res[0].Code != "" || res[0].VersionID != v1.VersionID || res[1].Code != "" || !res[1].DeleteMarker || res[1].DeleteMarkerVersionID == "" {
		t.Fatalf("DeleteVersions = %+v", res)
	}
	if _, err := st.HeadObjectVersion(ctx, b, "k", v1.VersionID); err == nil {
		t.Fatal("v1 still there")
	}
}
