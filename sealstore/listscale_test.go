package sealstore

import (
	"bytes"
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/s3seal/s3seal/backend"
	"github.com/s3seal/s3seal/crypto"
)

// listHeapBound is what listing may add to the live heap beyond the cache
// and the store's own page: one page of 1000 entries at 4 KiB each (the
// backend's XML, the resolving HEADs in flight, the page), plus 4 MiB.
const listHeapBound uint64 = 4<<20 + 1000*4<<10

// cacheEntryBound is what one cached listing entry may hold of the heap
// (key, ETags, size: 323 bytes measured with 16-byte keys).
const cacheEntryBound = 512

// TestListManyObjects: a bucket of 10,000 objects (100,000 with
// S3SEAL_SCALE=1), listed in pages of 1000 by ListObjectsV2 and V1, shows
// every object once with its plaintext size; the listing's heap stays
// within a page's bound, and the cache of resolved entries within its
// bound of entries, least recently used dropped.
func TestListManyObjects(t *testing.T) {
	if testing.Short() {
		t.Skip("10,000 objects skipped with -short")
	}
	n := scaleCount(10_000, 100_000)
	const cacheBound = 2000
	f := newFixtureWith(t, Options{CacheEntries: cacheBound})
	body := func(i int) []byte { return bytes.Repeat([]byte{'x'}, i%7) }
	start := time.Now()
	if err := inParallel(n, func(i int) error {
		_, err := f.st.Put(f.ctx, PutInput{Bucket: bucket, Key: listKey(i), Body: bytes.NewReader(body(i)), Size: int64(len(body(i)))})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	t.Logf("%d objects written in %v", n, time.Since(start).Round(time.Millisecond))
	f.st.cache.Purge() // the writes filled it; the listing is what is measured

	// What one page costs the backend and its client in this process:
	// the embedded store lists the whole bucket for each page (unpaged,
	// about 350 bytes an object), which is no part of s3seal's bound.
	stop := peakHeap()
	if _, err := f.be.ListObjects(f.ctx, backend.ListInput{Bucket: bucket, V2: true, MaxKeys: 1000, StartAfter: listKey(n / 2)}); err != nil {
		t.Fatal(err)
	}
	storePage := stop()
	t.Logf("one backend page of 1000 of %d objects: peak heap +%.1f MiB", n, float64(storePage)/(1<<20))

	for _, v2 := range []bool{true, false} {
		stop := peakHeap()
		start := time.Now()
		in := backend.ListInput{Bucket: bucket, V2: v2, MaxKeys: 1000}
		seen, pages := 0, 0
		for {
			page, err := f.st.List(f.ctx, in)
			if err != nil {
				t.Fatal(err)
			}
			pages++
			for _, e := range page.Entries {
				if e.Key != listKey(seen) || e.Size != int64(len(body(seen))) || e.ETag != md5hex(body(seen)) {
					t.Fatalf("entry %d: %s, %d bytes, ETag %s; want %s, %d bytes", seen, e.Key, e.Size, e.ETag, listKey(seen), len(body(seen)))
				}
				seen++
			}
			if !page.IsTruncated {
				break
			}
			in.ContinuationToken, in.Marker = page.NextContinuationToken, page.NextMarker
			if !v2 && in.Marker == "" {
				in.Marker = page.Entries[len(page.Entries)-1].Key
			}
		}
		took, heap := time.Since(start), stop()
		cached := f.st.cache.Len()
		t.Logf("V2=%v: %d objects in %d pages, %v; peak heap +%.1f MiB (the store's page included); cache %d entries (bound %d)",
			v2, seen, pages, took.Round(time.Millisecond), float64(heap)/(1<<20), cached, cacheBound)
		if seen != n || pages != (n+999)/1000 {
			t.Fatalf("V2=%v: %d objects in %d pages, want %d in %d", v2, seen, pages, n, (n+999)/1000)
		}
		if cached > cacheBound {
			t.Errorf("the listing cache holds %d entries, above its bound of %d", cached, cacheBound)
		}
		if limit := listHeapBound + cacheBound*cacheEntryBound + storePage; heap > limit {
			t.Errorf("listing %d objects took %d bytes of heap, above %d (the store's own page: %d)", n, heap, limit, storePage)
		}
	}
}

// TestListCacheEntrySize: what a cached listing entry costs, measured on
// a full cache, stays within cacheEntryBound (the figure in DESIGN.md).
func TestListCacheEntrySize(t *testing.T) {
	const n = 20_000
	st, err := New(Direct(nil), nil, Options{CacheEntries: n})
	if err != nil {
		t.Fatal(err)
	}
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for i := range n + n/2 {
		key := listKey(i)
		st.cache.Add(cacheKey{bucket, key, fmt.Sprintf("%x", i), int64(crypto.CiphertextSize(int64(i)))},
			resolved{size: int64(i), etag: fmt.Sprintf("%032x", i)})
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	per := (after.HeapAlloc - before.HeapAlloc) / uint64(st.cache.Len())
	t.Logf("%d cached entries: %d bytes each", st.cache.Len(), per)
	if st.cache.Len() != n {
		t.Errorf("cache holds %d entries after %d added, want its bound %d", st.cache.Len(), n+n/2, n)
	}
	if per > cacheEntryBound {
		t.Errorf("a cached entry costs %d bytes, above %d", per, cacheEntryBound)
	}
}

func listKey(i int) string { return fmt.Sprintf("objects/%08d", i) }
