package sealstore

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/s3seal/s3seal/backend"
	"github.com/s3seal/s3seal/crypto"
)

// testRewrapByParts: with a single-copy limit of 6 MiB, a 7 MiB object
// (one PUT) and a two-part multipart object above the limit are rewrapped
// by a multipart copy onto themselves (their backend ETags become
// multipart ones), a small one by one copy; all read back with only the
// new key, the multipart object's manifest is under its new ETag, and a
// second run does nothing.
func testRewrapByParts(t *testing.T, f *fixture) {
	k1, k2 := mustKey(t), mustKey(t)
	both, _ := crypto.NewKeyring("k1", map[string][]byte{"k1": k1, "k2": k2})
	only2, _ := crypto.NewKeyring("k2", map[string][]byte{"k2": k2})
	f.st, _ = New(Direct(f.be), both, Options{SpoolDir: t.TempDir(), BackendChecksum: true})
	data := map[string][]byte{"big": randBytes(7<<20+100, 1), "small": randBytes(1000, 2)}
	for k, d := range data {
		f.put(t, k, d)
	}
	p1, p2 := randBytes(5<<20+10, 3), randBytes(2<<20, 4)
	data["mpbig"] = append(append([]byte{}, p1...), p2...)
	id := f.create(t, "mpbig")
	e1, e2 := f.part(t, f.st, "mpbig", id, 1, p1), f.part(t, f.st, "mpbig", id, 2, p2)
	if _, err := f.st.CompleteMultipart(f.ctx, CompleteInput{ExpectSize: -1, Bucket: bucket, Key: "mpbig", UploadID: id,
		Parts: completeParts([]int{1, 2}, []string{e1.ETag, e2.ETag})}); err != nil {
		t.Fatal(err)
	}
	mpBefore, _ := f.be.HeadObject(f.ctx, bucket, "mpbig")

	rewrap := func() map[string]string {
		t.Helper()
		got := map[string]string{}
		if err := f.st.Rewrap(f.ctx, bucket, RewrapOptions{To: "k2", MaxCopySize: 6 << 20, NoWriters: true}, func(r RewrapResult) { // run on moto too, which ignores the copy condition
			got[r.Key] = r.Status
			if r.Err != nil {
				t.Errorf("%s: %v", r.Key, r.Err)
			}
		}); err != nil {
			t.Fatal(err)
		}
		return got
	}
	if got := rewrap(); got["big"] != RewrapDone || got["mpbig"] != RewrapDone || got["small"] != RewrapDone || len(got) != 3 {
		t.Fatalf("first run: %v", got)
	}
	for k, parts := range map[string]bool{"big": true, "mpbig": true, "small": false} {
		bi, err := f.be.HeadObject(f.ctx, bucket, k)
		if err != nil {
			t.Fatal(err)
		}
		env, _, _ := crypto.ParseMetadata(bi.Meta)
		info, err := f.st.Stat(f.ctx, ReadInput{Bucket: bucket, Key: k})
		if err != nil {
			t.Fatal(err)
		}
		if env.KeyID != "k2" || strings.Contains(bi.ETag, "-") != parts || info.Meta["color"] != "blue" && k != "mpbig" {
			t.Errorf("%s after rewrap: etag %s, key %s, meta %v", k, bi.ETag, env.KeyID, info.Meta)
		}
		if k == "mpbig" {
			if bi.ETag == mpBefore.ETag || info.Headers.ContentType != "text/x-mp" || info.Meta["color"] != "red" {
				t.Errorf("mpbig: etag %s (was %s), headers %+v, meta %v", bi.ETag, mpBefore.ETag, info.Headers, info.Meta)
			}
			if _, err := f.be.HeadObject(f.ctx, bucket, manifestKey(env.OID, strings.Trim(bi.ETag, `"`))); err != nil {
				t.Errorf("no manifest under the new ETag: %v", err)
			}
		}
	}
	ups, err := f.be.ListMultipartUploads(f.ctx, backend.ListUploadsInput{Bucket: bucket})
	if err != nil || len(ups.Uploads) != 0 {
		t.Fatalf("uploads left: %+v %v", ups.Uploads, err)
	}
	reader, _ := New(Direct(f.be), only2, Options{SpoolDir: t.TempDir()})
	for k, d := range data {
		info, rd, err := reader.Get(f.ctx, bucket, k, nil)
		if err != nil {
			t.Fatalf("%s with only the new key: %v", k, err)
		}
		var buf bytes.Buffer
		buf.ReadFrom(rd)
		rd.Close()
		if !bytes.Equal(buf.Bytes(), d) || info.Size != int64(len(d)) {
			t.Fatalf("%s reads back %d bytes, want %d", k, buf.Len(), len(d))
		}
	}
	if got := rewrap(); got["big"] != RewrapCurrent || got["mpbig"] != RewrapCurrent || got["small"] != RewrapCurrent {
		t.Fatalf("second run: %v", got)
	}
}

func TestRewrapByParts(t *testing.T) { testRewrapByParts(t, newFixture(t)) }

func TestRewrapByPartsMoto(t *testing.T) { testRewrapByParts(t, motoFixture(t)) }

// racingPartCopy runs before ahead of the first part copy of a key outside
// ReservedPrefix (rewrap's probe copies under it).
type racingPartCopy struct {
	backend.Store
	before func()
}

func (r *racingPartCopy) UploadPartCopy(ctx context.Context, in backend.UploadPartCopyInput) (string, error) {
	if r.before != nil && !strings.HasPrefix(in.Key, ReservedPrefix) {
		r.before()
		r.before = nil
	}
	return r.Store.UploadPartCopy(ctx, in)
}

// TestRewrapByPartsRace: an object written between rewrap's HEAD and its
// part copies is left alone (the part copy's source condition fails), the
// copy's upload is aborted, and the new object stays as written.
func TestRewrapByPartsRace(t *testing.T) {
	f := newFixture(t)
	k2 := mustKey(t)
	kr, _ := crypto.NewKeyring("k1", map[string][]byte{"k1": mustKey(t), "k2": k2})
	race := &racingPartCopy{Store: f.be}
	f.st, _ = New(Direct(race), kr, Options{SpoolDir: t.TempDir(), BackendChecksum: true})
	f.put(t, "big", randBytes(7<<20, 1))
	newer := randBytes(7<<20, 2)
	race.before = func() { f.put(t, "big", newer) }
	var got []RewrapResult
	if err := f.st.Rewrap(f.ctx, bucket, RewrapOptions{To: "k2", MaxCopySize: 6 << 20}, func(r RewrapResult) { got = append(got, r) }); err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].Status != RewrapChanged {
		t.Fatalf("rewrap: %+v", got)
	}
	if ups, err := f.be.ListMultipartUploads(f.ctx, backend.ListUploadsInput{Bucket: bucket}); err != nil || len(ups.Uploads) != 0 {
		t.Fatalf("uploads left: %+v %v", ups.Uploads, err)
	}
	if _, rd, err := f.get(t, "big", nil); err != nil || !bytes.Equal(rd, newer) {
		t.Fatalf("the newer object: %v", err)
	}
}
