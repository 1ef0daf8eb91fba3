package sealstore

import (
	"bytes"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/s3seal/s3seal/backend"
	"github.com/s3seal/s3seal/crypto"
)

// TestRewrapLeavesOlderVersionsOnMoto: in a versioned bucket rewrap makes
// a new current version of each object under the new key and leaves the
// older versions (a single PUT and a multipart one, whose manifest is
// named by its own ETag) under the key they were written with. While the
// old key stays in the keyring they list with their plaintext sizes and
// ETags and read by version id (after a gc too), and with only the new
// key the current versions read while an
// older one is refused as sealed under a key not in the keyring (what
// docs/OPERATIONS.md says: keep the old key while older versions must stay
// readable).
func TestRewrapLeavesOlderVersionsOnMoto(t *testing.T) {
	f := motoFixture(t)
	f.enableVersioning(t)
	k1, k2 := mustKey(t), mustKey(t)
	only1, _ := crypto.NewKeyring("k1", map[string][]byte{"k1": k1})
	both, _ := crypto.NewKeyring("k1", map[string][]byte{"k1": k1, "k2": k2})
	only2, _ := crypto.NewKeyring("k2", map[string][]byte{"k2": k2})
	f.st, _ = New(Direct(f.be), only1, Options{SpoolDir: t.TempDir()})
	d1, d2, d3 := []byte("first, single PUT"), randBytes(70000, 61), []byte("current")
	i1 := f.put(t, "obj", d1)
	f.completeSmall(t, "obj", d2)
	f.completeSmall(t, "mp", d2)
	i3 := f.put(t, "plain", d3)

	f.st, _ = New(Direct(f.be), both, Options{SpoolDir: t.TempDir()})
	var got []RewrapResult
	if err := f.st.Rewrap(f.ctx, bucket, RewrapOptions{To: "k2", NoWriters: true}, func(r RewrapResult) { got = append(got, r) }); err != nil {
		t.Fatal(err)
	}
	if len(got) != 3 {
		t.Fatalf("rewrap: %+v", got)
	}
	for _, r := range got {
		if r.Status != RewrapDone {
			t.Fatalf("rewrap: %+v", r)
		}
	}
	later := func() time.Time { return time.Now().Add(time.Hour) }
	if found, err := f.st.GC(f.ctx, bucket, GCOptions{Delete: true, Now: later}); err != nil {
		t.Fatalf("gc: %+v %v", found, err)
	}

	// Every version, listed and read through a store with both keys.
	want := map[string][]byte{"obj": d2, "mp": d2, "plain": d3}
	olds := map[string][]byte{}
	page, err := f.st.ListVersions(f.ctx, backend.ListVersionsInput{Bucket: bucket})
	if err != nil {
		t.Fatal(err)
	}
	f.st, _ = New(Direct(f.be), both, Options{SpoolDir: t.TempDir()}) // nothing cached
	count := map[string]int{}
	for _, e := range page.Entries {
		count[e.Key]++
		data := want[e.Key]
		if e.Key == "obj" && e.VersionID == i1.VersionID {
			data = d1
		}
		if !e.IsLatest {
			olds[e.Key+"@"+e.VersionID] = data
		}
		single := e.Key == "plain" || e.VersionID == i1.VersionID // else multipart: an S3 multipart ETag
		if e.Size != int64(len(data)) || single && e.ETag != md5hex(data) {
			t.Errorf("listed %s@%s: size %d etag %s, want %d", e.Key, e.VersionID, e.Size, e.ETag, len(data))
		}
		if r, err := f.readVersion(t, e.Key, e.VersionID); err != nil || !bytes.Equal(r, data) {
			t.Errorf("version %s@%s with both keys: %d bytes, %v", e.Key, e.VersionID, len(r), err)
		}
	}
	if fmt.Sprint(count) != "map[mp:2 obj:3 plain:2]" {
		t.Fatalf("versions: %v", count)
	}
	if i3.VersionID == "" || olds["plain@"+i3.VersionID] == nil {
		t.Fatalf("plain's first version is not among the older ones: %v", olds)
	}

	// Only the new key: current versions read, older ones are refused.
	f.st, _ = New(Direct(f.be), only2, Options{SpoolDir: t.TempDir()})
	for k, data := range want {
		if _, r, err := f.get(t, k, nil); err != nil || !bytes.Equal(r, data) {
			t.Errorf("current %s with only the new key: %v", k, err)
		}
	}
	for id := range olds {
		key, vid, _ := bytes.Cut([]byte(id), []byte("@"))
		_, err := f.readVersion(t, string(key), string(vid))
		if !errors.Is(err, crypto.ErrUnknownKey) {
			t.Errorf("older version %s with only the new key: %v, want ErrUnknownKey", id, err)
		}
	}
}
