package sealstore

import (
	"bytes"
	"context"
	"maps"
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
	st, _ := New(race, both, Options{SpoolDir: t.TempDir(), BackendContentMD5: true})
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
		f.st, _ = New(f.be, kr, Options{SpoolDir: t.TempDir()})
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

func mustKey(t *testing.T) []byte {
	k, err := crypto.GenerateKey()
	if err != nil {
		t.Fatal(err)
	}
	return k
}
