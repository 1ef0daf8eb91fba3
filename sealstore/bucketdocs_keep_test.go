package sealstore

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/s3seal/s3seal/backend"
)

// onRequest marks the context of a request's BucketDocs, so that
// docListings tells the listings a request waited for from those made in
// the background.
type onRequest struct{}

// docListings counts the listings of bucket documents (and the
// documents opened), made on a request's behalf or in the background.
type docListings struct {
	backend.Store
	onRequest, background, gets atomic.Int64
}

func (d *docListings) ListObjects(ctx context.Context, in backend.ListInput) (backend.ListOutput, error) {
	if in.Prefix == BucketDocPrefix {
		if ctx.Value(onRequest{}) != nil {
			d.onRequest.Add(1)
		} else {
			d.background.Add(1)
		}
	}
	return d.Store.ListObjects(ctx, in)
}

func (d *docListings) GetObject(ctx context.Context, in backend.GetInput) (*backend.Object, error) {
	d.gets.Add(1)
	return d.Store.GetObject(ctx, in)
}

// A bucket in use has its documents read in the background: its requests
// do not wait for a listing, and a change made through another process
// is seen within the TTL. Documents that did not change are not opened
// again. Once the bucket is unused, the background readings stop.
func TestBucketDocsKeptFresh(t *testing.T) {
	f := newFixture(t)
	ttl, warm := time.Second, 1500*time.Millisecond
	lists := &docListings{Store: f.be}
	st, err := New(Direct(lists), f.kr, Options{SpoolDir: t.TempDir(), BucketDocTTL: ttl, bucketDocWarm: warm})
	if err != nil {
		t.Fatal(err)
	}
	if err := st.PutBucketDoc(f.ctx, bucket, "owner", []byte(`{"id":"o"}`)); err != nil {
		t.Fatal(err)
	}
	ctx := context.WithValue(f.ctx, onRequest{}, true)
	read := func(name string) string {
		t.Helper()
		d, _, err := st.BucketDoc(ctx, bucket, name)
		if err != nil {
			t.Fatal(err)
		}
		return string(d)
	}
	read("owner")
	gets := lists.gets.Load()
	// Three TTLs of requests every 20 ms.
	for end := time.Now().Add(3 * ttl); time.Now().Before(end); time.Sleep(20 * time.Millisecond) {
		read("owner")
	}
	if n := lists.onRequest.Load(); n != 1 {
		t.Errorf("%d listings on requests' behalf over three TTLs of use, want the first only", n)
	}
	if n := lists.background.Load(); n < 3 {
		t.Errorf("%d listings in the background over three TTLs, want one each half TTL", n)
	}
	if n := lists.gets.Load() - gets; n != 0 {
		t.Errorf("%d documents opened again, none changed", n)
	}
	other, err := New(Direct(f.be), f.kr, Options{SpoolDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if err := other.PutBucketDoc(f.ctx, bucket, "acl", []byte("changed")); err != nil {
		t.Fatal(err)
	}
	for end := time.Now().Add(ttl); time.Now().Before(end); time.Sleep(20 * time.Millisecond) {
		read("acl")
	}
	if got := read("acl"); got != "changed" {
		t.Errorf("a TTL after another process's change: %q, want it seen", got)
	}
	// Unused past warm, the bucket is no longer kept.
	time.Sleep(warm + ttl)
	before := lists.background.Load()
	time.Sleep(2 * ttl)
	if n := lists.background.Load() - before; n != 0 {
		t.Errorf("%d background listings of an unused bucket", n)
	}
}
