package sealstore

import (
	"bytes"
	"context"
	"errors"
	"maps"
	"sync"
	"testing"

	"github.com/s3seal/s3seal/backend"
	"github.com/s3seal/s3seal/crypto"
)

// racingCopy runs before once before the first backend copy of key.
type racingCopy struct {
	backend.Store
	key    string
	before func()
}

func (r *racingCopy) CopyObject(ctx context.Context, in backend.CopyInput) (backend.CopyOutput, error) {
	if in.Key == r.key && r.before != nil {
		r.before()
		r.before = nil
	}
	return r.Store.CopyObject(ctx, in)
}

func TestRewrap(t *testing.T) {
	f := newFixture(t)
	k1, k2 := mustKey(t), mustKey(t)
	both, _ := crypto.NewKeyring("k1", map[string][]byte{"k1": k1, "k2": k2})
	only1, _ := crypto.NewKeyring("k1", map[string][]byte{"k1": k1})
	only2, _ := crypto.NewKeyring("k2", map[string][]byte{"k2": k2})
	race := &racingCopy{Store: f.be, key: "r/race"}
	st, _ := New(Direct(race), both, Options{SpoolDir: t.TempDir(), BackendChecksum: true})
	f.st = st
	data := map[string][]byte{"r/a": randBytes(10, 1), "r/b": randBytes(3*65536+7, 2), "r/race": randBytes(5, 3)}
	for k, d := range data {
		f.put(t, k, d)
	}
	data["r/mp"] = randBytes(1000, 4)
	f.completeSmall(t, "r/mp", data["r/mp"])
	f.putBare(t, "r/plain", []byte("plain"))
	f.put(t, "s/outside", []byte("o"))

	run := func(dry bool) map[string]string {
		t.Helper()
		got := map[string]string{}
		if err := st.Rewrap(f.ctx, bucket, RewrapOptions{Prefix: "r/", To: "k2", DryRun: dry}, func(r RewrapResult) {
			got[r.Key] = r.Status
			if r.Err != nil {
				t.Errorf("%s: %v", r.Key, r.Err)
			}
		}); err != nil {
			t.Fatal(err)
		}
		return got
	}
	kid := func(key string) string {
		bi, err := f.be.HeadObject(f.ctx, bucket, key)
		if err != nil {
			t.Fatal(err)
		}
		return bi.Meta[crypto.MetaKeyID]
	}
	want := map[string]string{"r/a": RewrapWould, "r/b": RewrapWould, "r/race": RewrapWould, "r/mp": RewrapWould, "r/plain": RewrapPlaintext}
	if got := run(true); !maps.Equal(got, want) {
		t.Fatalf("dry run: %v", got)
	}
	if kid("r/a") != "k1" || kid("r/mp") != "k1" {
		t.Fatal("a dry run rewrapped")
	}
	// r/race is overwritten (under k1) between its HEAD and its copy.
	newer := []byte("written meanwhile")
	race.before = func() { data["r/race"] = newer; f.put(t, "r/race", newer) }
	want = map[string]string{"r/a": RewrapDone, "r/b": RewrapDone, "r/race": RewrapChanged, "r/mp": RewrapDone, "r/plain": RewrapPlaintext}
	if got := run(false); !maps.Equal(got, want) {
		t.Fatalf("rewrap: %v", got)
	}
	if kid("r/race") != "k1" || kid("s/outside") != "k1" || kid("r/b") != "k2" {
		t.Fatal("rewrap touched what it should have left alone, or missed an object")
	}
	// Everything rewrapped reads back with only the new key; what was left
	// alone with only the old one.
	for k, d := range data {
		kr := only2
		if k == "r/race" {
			kr = only1
		}
		f.st, _ = New(Direct(f.be), kr, Options{SpoolDir: t.TempDir()})
		info, got, err := f.get(t, k, nil)
		if err != nil || !bytes.Equal(got, d) || info.ETag == "" {
			t.Fatalf("%s after rewrap: %v", k, err)
		}
		if _, got, err := f.get(t, k, &Range{First: 3, Last: 8}); err != nil || !bytes.Equal(got, d[3:min(9, len(d))]) {
			t.Fatalf("%s ranged after rewrap: %v", k, err)
		}
	}
	// A second run (a resumed one) rewraps only what is left.
	want = map[string]string{"r/a": RewrapCurrent, "r/b": RewrapCurrent, "r/race": RewrapDone, "r/mp": RewrapCurrent, "r/plain": RewrapPlaintext}
	if got := run(false); !maps.Equal(got, want) {
		t.Fatalf("second run: %v", got)
	}
	want["r/race"] = RewrapCurrent
	if got := run(false); !maps.Equal(got, want) {
		t.Fatalf("third run: %v", got)
	}
	if err := st.Rewrap(f.ctx, bucket, RewrapOptions{To: "nope"}, func(RewrapResult) {}); err == nil {
		t.Fatal("rewrap to a key not in the keyring")
	}
}

// TestRewrapUploadsInProgress: an upload started under the old key is
// reported as in progress (its object will carry the old key: a backend
// upload's metadata cannot change), so the operator completes or aborts it
// and runs again before removing the old key; once completed, the next run
// rewraps its object; none is silently skipped.
func TestRewrapUploadsInProgress(t *testing.T) {
	f := newFixture(t)
	k1, _ := crypto.GenerateKey()
	k2, _ := crypto.GenerateKey()
	both, _ := crypto.NewKeyring("k1", map[string][]byte{"k1": k1, "k2": k2})
	only2, _ := crypto.NewKeyring("k2", map[string][]byte{"k2": k2})
	f.st, _ = New(Direct(f.be), both, Options{SpoolDir: t.TempDir()})
	data := randBytes(5000, 3)
	id := f.create(t, "up/obj")
	e := f.part(t, f.st, "up/obj", id, 1, data)
	run := func(prefix string) []RewrapResult {
		var got []RewrapResult
		if err := f.st.Rewrap(f.ctx, bucket, RewrapOptions{Prefix: prefix, To: "k2"}, func(r RewrapResult) { got = append(got, r) }); err != nil {
			t.Fatal(err)
		}
		return got
	}
	if got := run(""); len(got) != 1 || got[0].Status != RewrapInProgress || got[0].Key != "up/obj" || got[0].From != "k1" {
		t.Fatalf("rewrap with an upload in progress: %+v", got)
	}
	if got := run("other/"); len(got) != 0 {
		t.Fatalf("prefix elsewhere: %+v", got)
	}
	if _, err := f.st.CompleteMultipart(f.ctx, CompleteInput{ExpectSize: -1, Bucket: bucket, Key: "up/obj", UploadID: id,
		Parts: completeParts([]int{1}, []string{e.ETag})}); err != nil {
		t.Fatal(err)
	}
	if got := run(""); len(got) != 1 || got[0].Status != RewrapDone {
		t.Fatalf("rewrap after the completion: %+v", got)
	}
	f.st, _ = New(Direct(f.be), only2, Options{SpoolDir: t.TempDir()})
	if _, b, err := f.get(t, "up/obj", nil); err != nil || !bytes.Equal(b, data) {
		t.Fatalf("read back with only the new key: %v", err)
	}
}

// completingCopier completes a client's upload (through another Store
// on the same backend) just before rewrap's first copy of "a", so that
// the object listing has already passed the upload's key "z".
type completingCopier struct {
	backend.Store
	once     sync.Once
	complete func()
}

func (c *completingCopier) CopyObject(ctx context.Context, in backend.CopyInput) (backend.CopyOutput, error) {
	if in.Key == "a" {
		c.once.Do(c.complete)
	}
	return c.Store.CopyObject(ctx, in)
}

// TestRewrapUploadCompletedDuringRun: an upload under the old key that a
// client completes while rewrap runs, after the listing passed its key,
// is rewrapped at the end of the run, not left unreported (a run that
// exits 0 must leave nothing under the old key).
func TestRewrapUploadCompletedDuringRun(t *testing.T) {
	f := newFixture(t)
	k1, k2 := mustKey(t), mustKey(t)
	both, _ := crypto.NewKeyring("k1", map[string][]byte{"k1": k1, "k2": k2})
	only2, _ := crypto.NewKeyring("k2", map[string][]byte{"k2": k2})
	client, _ := New(Direct(f.be), both, Options{SpoolDir: t.TempDir()})
	f.st = client
	f.put(t, "a", []byte("first"))
	data := randBytes(5000, 4)
	id := f.create(t, "z")
	e := f.part(t, client, "z", id, 1, data)
	hook := &completingCopier{Store: f.be, complete: func() {
		if _, err := client.CompleteMultipart(f.ctx, CompleteInput{ExpectSize: -1, Bucket: bucket, Key: "z", UploadID: id,
			Parts: completeParts([]int{1}, []string{e.ETag})}); err != nil {
			t.Error(err)
		}
	}}
	rw, _ := New(Direct(hook), both, Options{SpoolDir: t.TempDir()})
	got := map[string]string{}
	if err := rw.Rewrap(f.ctx, bucket, RewrapOptions{To: "k2", Concurrency: 1}, func(r RewrapResult) { got[r.Key] = r.Status }); err != nil {
		t.Fatal(err)
	}
	if got["a"] != RewrapDone || got["z"] != RewrapDone {
		t.Fatalf("rewrap: %v", got)
	}
	f.st, _ = New(Direct(f.be), only2, Options{SpoolDir: t.TempDir()})
	if _, b, err := f.get(t, "z", nil); err != nil || !bytes.Equal(b, data) {
		t.Fatalf("the upload completed during the run, with only the new key: %v", err)
	}
}

// lax drops the conditions of the multipart copy requests named by its
// flags, as a store that ignores them would.
type lax struct {
	backend.Store
	partCopy, complete bool
}

func (l *lax) UploadPartCopy(ctx context.Context, in backend.UploadPartCopyInput) (string, error) {
	if l.partCopy {
		in.SrcIfMatch = ""
	}
	return l.Store.UploadPartCopy(ctx, in)
}

func (l *lax) CompleteMultipartUpload(ctx context.Context, in backend.CompleteMultipartInput) (backend.CompleteMultipartOutput, error) {
	if l.complete {
		in.IfMatch = ""
	}
	return l.Store.CompleteMultipartUpload(ctx, in)
}

// TestRewrapProbesTheMultipartCopy: a store that honours the condition of
// a CopyObject but ignores that of UploadPartCopy, or the If-Match of the
// completion, would let a by-parts rewrap lose an object written
// meanwhile; rewrap refuses it and changes nothing.
func TestRewrapProbesTheMultipartCopy(t *testing.T) {
	for _, c := range []lax{{partCopy: true}, {complete: true}} {
		f := newFixture(t)
		kr := rotationKeyring(t)
		f.st, _ = New(Direct(f.be), kr, Options{SpoolDir: t.TempDir(), BackendChecksum: true})
		f.put(t, "obj", []byte("data"))
		c.Store = f.be
		st, _ := New(Direct(&c), kr, Options{SpoolDir: t.TempDir()})
		err := st.Rewrap(f.ctx, bucket, RewrapOptions{To: "k2"}, func(r RewrapResult) { t.Errorf("reported %+v", r) })
		if !errors.Is(err, ErrCopyConditionIgnored) {
			t.Fatalf("%+v: %v, want ErrCopyConditionIgnored", c, err)
		}
		if keys := f.reservedKeys(t, ReservedPrefix); len(keys) != 0 {
			t.Fatalf("probe left %v", keys)
		}
		if ups, err := f.be.ListMultipartUploads(f.ctx, backend.ListUploadsInput{Bucket: bucket}); err != nil || len(ups.Uploads) != 0 {
			t.Fatalf("probe left uploads: %+v %v", ups.Uploads, err)
		}
	}
}
