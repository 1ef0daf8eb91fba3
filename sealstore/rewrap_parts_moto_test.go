package sealstore

import (
	"bytes"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/s3seal/s3seal/backend"
	"github.com/s3seal/s3seal/crypto"
)

// TestRewrapByPartsKeepsTags: an object larger than MaxCopySize (5 GiB in
// production; lowered here) is rewrapped by copyOntoItselfByParts
// (CreateMultipartUpload + UploadPartCopy), and keeps its tags as the
// single CopyObject path does (DESIGN.md, "Rewrap and locks": tags are
// copied); the small object, rewrapped by one copy, is the control.
func TestRewrapByPartsKeepsTags(t *testing.T) {
	be := motoS3(t)
	ctx := t.Context()
	if err := be.CreateBucket(ctx, bucket); err != nil {
		t.Fatal(err)
	}
	k1, k2 := mustKey(t), mustKey(t)
	kr, _ := crypto.NewKeyring("k1", map[string][]byte{"k1": k1, "k2": k2})
	st, err := New(Direct(be), kr, Options{SpoolDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	for key, size := range map[string]int{"small": 1000, "big": 6 << 20} {
		data := randBytes(size, 3)
		if _, err := st.Put(ctx, PutInput{Bucket: bucket, Key: key, Body: bytes.NewReader(data), Size: int64(len(data)),
			Protect: backend.Protection{Tagging: "tier=gold&kind=db"}}); err != nil {
			t.Fatal(err)
		}
	}
	tags := func(key string) string {
		out, err := be.Forward(ctx, backend.RawRequest{Method: http.MethodGet, Bucket: bucket, Key: key, Query: url.Values{"tagging": {""}}})
		if err != nil {
			t.Fatal(err)
		}
		return string(out.Body)
	}
	for _, key := range []string{"small", "big"} {
		if !strings.Contains(tags(key), "tier") {
			t.Fatalf("%s: no tags before the rewrap: %s", key, tags(key))
		}
	}
	var res []RewrapResult
	if err := st.Rewrap(ctx, bucket, RewrapOptions{To: "k2", NoWriters: true, MaxCopySize: 5 << 20}, func(r RewrapResult) { res = append(res, r) }); err != nil {
		t.Fatal(err)
	}
	for _, r := range res {
		if r.Status != RewrapDone {
			t.Fatalf("rewrap %+v", r)
		}
	}
	if !strings.Contains(tags("small"), "tier") {
		t.Errorf("control: the small object lost its tags too: %s", tags("small"))
	}
	if got := tags("big"); !strings.Contains(got, "tier") {
		t.Errorf("EXPECTED the rewrapped large object to keep its tags (DESIGN: \"Tags are copied by the store\"); after the rewrap by parts: %s", got)
	}
}
