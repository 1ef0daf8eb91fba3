package sealstore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/s3seal/s3seal/backend"
	"github.com/s3seal/s3seal/crypto"
	"github.com/s3seal/s3seal/kms"
)

// restarted is a new Store over f's backend (HEADs counted as before) with
// the keyring kr and opt: the process started again on the same data dir.
func (f *fixture) restarted(t *testing.T, kr *crypto.Keyring, opt Options) *Store {
	t.Helper()
	if opt.SpoolDir == "" {
		opt.SpoolDir = t.TempDir()
	}
	opt.OwnerPendingAge = time.Nanosecond
	st, err := New(Direct(f.be), kr, opt)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// listAll lists the bucket in one page (every test here has fewer than
// 1000 objects), each entry by its key.
func listAll(t *testing.T, f *fixture, st *Store) map[string]ListedObject {
	t.Helper()
	page, err := st.List(f.ctx, backend.ListInput{Bucket: bucket, V2: true, MaxKeys: 1000})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]ListedObject{}
	for _, e := range page.Entries {
		out[e.Key] = e
	}
	return out
}

// headsOf is how many HEADs the listing of st took, and what it listed.
func headsOf(t *testing.T, f *fixture, st *Store) (int64, map[string]ListedObject) {
	t.Helper()
	before := f.be.heads.Load()
	got := listAll(t, f, st)
	return f.be.heads.Load() - before, got
}

// sameListing fails unless got lists what want lists: the same keys, each
// with the same plaintext size, ETag and kept checksums.
func sameListing(t *testing.T, what string, got, want map[string]ListedObject) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d entries, want %d", what, len(got), len(want))
	}
	for k, w := range want {
		g := got[k]
		if g.Size != w.Size || g.ETag != w.ETag || !maps.Equal(g.Checksums, w.Checksums) {
			t.Errorf("%s: %s listed as %d bytes, ETag %s, checksums %v; want %d, %s, %v", what, k, g.Size, g.ETag, g.Checksums, w.Size, w.ETag, w.Checksums)
		}
	}
}

// TestListAfterRestartNeedsNoHeads: what a Store resolved, by its own
// writes (a PUT, a multipart completion) or by a listing's HEADs (objects
// another process wrote), a Store started again on the same listing cache
// file lists with no HEAD at all, with the same sizes, ETags and kept
// checksums.
func TestListAfterRestartNeedsNoHeads(t *testing.T) {
	f := newFixture(t)
	file := filepath.Join(t.TempDir(), "list-cache")
	opt := Options{ListCacheFile: file, ListCacheScope: "store-1"}
	writer := f.restarted(t, f.kr, Options{}) // another process, whose cache is its own
	for i := range 20 {
		if _, err := writer.Put(f.ctx, PutInput{Bucket: bucket, Key: fmt.Sprintf("theirs/%02d", i), Body: bytes.NewReader(randBytes(i*100, uint64(i))), Size: int64(i * 100)}); err != nil {
			t.Fatal(err)
		}
	}
	first := f.restarted(t, f.kr, opt)
	f.st = first
	mine := randBytes(70_000, 1)
	if _, err := first.Put(f.ctx, PutInput{Bucket: bucket, Key: "mine", Body: bytes.NewReader(mine), Size: int64(len(mine)),
		Finalize: func() (map[string]string, error) {
			return map[string]string{"crc32": "AAAAAA==", "sha1": "AAAAAAAAAAAAAAAAAAAAAAAAAAA="}, nil
		}}); err != nil {
		t.Fatal(err)
	}
	f.completeSmall(t, "multipart", randBytes(5000, 2))
	heads, want := headsOf(t, f, first)
	if heads != 20 {
		t.Fatalf("the first listing took %d HEADs, want 20 (one per object written elsewhere)", heads)
	}
	if err := first.SaveListCache(); err != nil {
		t.Fatal(err)
	}

	second := f.restarted(t, f.kr, opt)
	heads, got := headsOf(t, f, second)
	if heads != 0 {
		t.Errorf("the listing after the restart took %d HEADs, want none", heads)
	}
	sameListing(t, "after the restart", got, want)
	if got["multipart"].ETag != want["multipart"].ETag || !strings.HasSuffix(got["multipart"].ETag, "-1") || len(got["mine"].Checksums) != 2 {
		t.Errorf("the multipart object lists as %q, the single one with checksums %v", got["multipart"].ETag, got["mine"].Checksums)
	}

	// A store that added nothing leaves the file as it is; KeepListCache
	// writes what was added since.
	st0, _ := os.Stat(file)
	if err := second.SaveListCache(); err != nil {
		t.Fatal(err)
	}
	if st1, _ := os.Stat(file); !st1.ModTime().Equal(st0.ModTime()) {
		t.Error("a save with nothing added rewrote the file")
	}
	f.st = second
	f.put(t, "later", []byte("later"))
	ctx, cancel := context.WithCancel(f.ctx)
	done := make(chan struct{})
	go func() { second.KeepListCache(ctx, 10*time.Millisecond); close(done) }()
	deadline := time.Now().Add(10 * time.Second)
	for {
		third := f.restarted(t, f.kr, opt)
		if _, ok := third.cache.Peek(cacheKey{bucket, "later", f.backendETag(t, "later"), int64(crypto.CiphertextSize(5))}); ok {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("KeepListCache did not save the entry added")
		}
		time.Sleep(20 * time.Millisecond)
	}
	cancel()
	<-done
}

// backendETag is the store's ETag of key, without quotes.
func (f *fixture) backendETag(t *testing.T, key string) string {
	t.Helper()
	bi, err := f.be.Store.HeadObject(f.ctx, bucket, key)
	if err != nil {
		t.Fatal(err)
	}
	return strings.Trim(bi.ETag, `"`)
}

// TestListCacheFileOverwrittenObject: an object overwritten after the
// file was saved (by another process: nothing told this one) is listed
// as it is now, through a HEAD, never with what the file says of the
// version it replaced.
func TestListCacheFileOverwrittenObject(t *testing.T) {
	f := newFixture(t)
	opt := Options{ListCacheFile: filepath.Join(t.TempDir(), "list-cache")}
	first := f.restarted(t, f.kr, opt)
	f.st = first
	f.put(t, "a", []byte("before"))
	f.put(t, "b", []byte("kept"))
	if err := first.SaveListCache(); err != nil {
		t.Fatal(err)
	}
	other := f.restarted(t, f.kr, Options{})
	// The same size, so that only the backend ETag tells the versions apart.
	after := []byte("AFTER!")
	if _, err := other.Put(f.ctx, PutInput{Bucket: bucket, Key: "a", Body: bytes.NewReader(after), Size: int64(len(after))}); err != nil {
		t.Fatal(err)
	}
	second := f.restarted(t, f.kr, opt)
	heads, got := headsOf(t, f, second)
	if heads != 1 {
		t.Errorf("the listing took %d HEADs, want 1 (the overwritten object)", heads)
	}
	if got["a"].ETag != md5hex(after) || got["b"].ETag != md5hex([]byte("kept")) {
		t.Errorf("listed a as %s, b as %s; want %s and %s", got["a"].ETag, got["b"].ETag, md5hex(after), md5hex([]byte("kept")))
	}
}

// TestListCacheFileIgnored: a file that is damaged, cut short, empty, of
// another format, sealed under another master key (one an attacker who
// can write the data dir but not read the keys would make) or saved for
// another store is ignored whole: New succeeds, the cache starts empty,
// and the listing resolves every object afresh, right.
func TestListCacheFileIgnored(t *testing.T) {
	f := newFixture(t)
	dir := t.TempDir()
	good := filepath.Join(dir, "good")
	opt := Options{ListCacheFile: good, ListCacheScope: "store-1"}
	first := f.restarted(t, f.kr, opt)
	f.st = first
	for i := range 30 {
		f.put(t, fmt.Sprintf("k%02d", i), randBytes(i*1000, uint64(i)))
	}
	_, want := headsOf(t, f, first)
	// Entries enough for two segments, so that a file cut short or
	// damaged at its end fails after the first segment's entries were read.
	for i := range 1000 {
		first.remember(cacheKey{bucket, fmt.Sprintf("filler/%0100d", i), "e", 1}, resolved{size: 1, etag: "x"})
	}
	if err := first.SaveListCache(); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(good)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(raw, []byte(want["k05"].ETag)) || bytes.Contains(raw, []byte("k05")) {
		t.Error("the file shows an ETag or a key in the clear")
	}
	body := len(listCacheMagic) + 2 + len("k1") + crypto.OIDSize + 8

	// A file of another keyring, whose key has the same id.
	otherKey, _ := crypto.GenerateKey()
	otherKR, _ := crypto.NewKeyring("k1", map[string][]byte{"k1": otherKey})
	foreign := filepath.Join(dir, "foreign")
	plant := f.restarted(t, otherKR, Options{ListCacheFile: foreign, ListCacheScope: "store-1"})
	for k, e := range want {
		plant.remember(cacheKey{bucket, k, f.backendETag(t, k), int64(crypto.CiphertextSize(e.Size))},
			resolved{size: 1, etag: md5hex([]byte("planted"))})
	}
	if err := plant.SaveListCache(); err != nil {
		t.Fatal(err)
	}
	foreignRaw, _ := os.ReadFile(foreign)

	flip := func(at int) []byte { b := bytes.Clone(raw); b[at] ^= 1; return b }
	cases := []struct {
		name  string
		bytes []byte
		scope string
	}{
		{"a bit flipped in the entries", flip(body + 40), "store-1"},
		{"a bit flipped in the last segment", flip(len(raw) - 3), "store-1"},
		{"a bit flipped in the oid", flip(body - 9), "store-1"},
		{"the entries' size changed", flip(body - 1), "store-1"},
		{"cut short", raw[:len(raw)-20], "store-1"},
		{"cut in the header", raw[:body-4], "store-1"},
		{"longer", append(bytes.Clone(raw), 0), "store-1"},
		{"empty", nil, "store-1"},
		{"another format", []byte("bkt k01 etag 12 34\n"), "store-1"},
		{"another version", flip(len(listCacheMagic)), "store-1"},
		{"a key id not in the keyring", bytes.Replace(raw, []byte("\x02k1"), []byte("\x02k9"), 1), "store-1"},
		{"sealed under another master key", foreignRaw, "store-1"},
		{"saved for another store", raw, "store-2"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "list-cache")
			if err := os.WriteFile(path, c.bytes, 0o600); err != nil {
				t.Fatal(err)
			}
			var logs bytes.Buffer
			st := f.restarted(t, f.kr, Options{ListCacheFile: path, ListCacheScope: c.scope,
				Logger: slog.New(slog.NewTextHandler(&logs, nil))})
			if n := st.cache.Len(); n != 0 {
				t.Errorf("%d entries loaded", n)
			}
			if c.bytes != nil && !strings.Contains(logs.String(), "file ignored") {
				t.Errorf("nothing logged of the file ignored: %q", logs.String())
			}
			heads, got := headsOf(t, f, st)
			if heads != int64(len(want)) {
				t.Errorf("the listing took %d HEADs, want %d", heads, len(want))
			}
			sameListing(t, c.name, got, want)
		})
	}
}

// TestListCacheFileBound: a file holding more entries than the cache's
// bound fills it with the most recently used ones, as the cache that saved
// it would have kept them; the saved file then holds no more than the bound.
func TestListCacheFileBound(t *testing.T) {
	f := newFixture(t)
	file := filepath.Join(t.TempDir(), "list-cache")
	first := f.restarted(t, f.kr, Options{ListCacheFile: file})
	f.st = first
	for i := range 10 {
		f.put(t, fmt.Sprintf("k%d", i), []byte{byte(i)})
	}
	listAll(t, f, first) // every entry used, in key order: k9 the most recent
	if err := first.SaveListCache(); err != nil {
		t.Fatal(err)
	}
	small := f.restarted(t, f.kr, Options{ListCacheFile: file, CacheEntries: 4})
	var kept []string
	for _, k := range small.cache.Keys() {
		kept = append(kept, k.key)
	}
	if strings.Join(kept, " ") != "k6 k7 k8 k9" {
		t.Errorf("a cache of 4 loaded %v, want the 4 most recently used, k6 to k9", kept)
	}
	small.remember(cacheKey{bucket, "x", "e", 1}, resolved{})
	if err := small.SaveListCache(); err != nil {
		t.Fatal(err)
	}
	again := f.restarted(t, f.kr, Options{ListCacheFile: file})
	if n := again.cache.Len(); n != 4 {
		t.Errorf("the file saved by a cache of 4 holds %d entries", n)
	}
}

// TestListCacheFileNoLocalKey: a keyring whose master keys are all held
// by a KMS has nothing local to seal the file with: none is written or
// read, and the cache works in memory as before.
func TestListCacheFileNoLocalKey(t *testing.T) {
	f := newFixture(t)
	svc, err := kms.NewService(kms.Options{}, &generateLiar{keys: map[string][]byte{}})
	if err != nil {
		t.Fatal(err)
	}
	var local *crypto.Keyring // none
	kr, err := local.WithService(svc, "liar:k", nil)
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "list-cache")
	st := f.restarted(t, kr, Options{ListCacheFile: file, KMS: svc})
	st.remember(cacheKey{bucket, "k", "e", 1}, resolved{size: 1, etag: "x"})
	if err := st.SaveListCache(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(file); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a file was written without a local master key: %v", err)
	}
	if _, ok := st.cache.Get(cacheKey{bucket, "k", "e", 1}); !ok {
		t.Error("the entry is not cached in memory")
	}
}
