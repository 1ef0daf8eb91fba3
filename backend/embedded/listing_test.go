package embedded

import (
	"bytes"
	"crypto/md5"
	"encoding/json"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/johannesboyne/gofakes3"
)

// listModel is S3's listing of keys (sorted), brute force: every key
// after marker under prefix, keys containing delimiter after the prefix
// rolled up into common prefixes (one each, skipped when at or before the
// marker), at most maxKeys of both.
func listModel(keys []string, prefix, delim, marker string, maxKeys int64) (contents, prefixes []string, truncated bool, next string) {
	var n int64
	seen := map[string]bool{}
	for _, k := range keys {
		if k <= marker || !strings.HasPrefix(k, prefix) {
			continue
		}
		item, isPrefix := k, false
		if delim != "" {
			if i := strings.Index(k[len(prefix):], delim); i >= 0 {
				item, isPrefix = k[:len(prefix)+i+len(delim)], true
				if item <= marker || seen[item] {
					continue
				}
			}
		}
		if n >= maxKeys {
			return contents, prefixes, true, next
		}
		n++
		next = item
		if isPrefix {
			seen[item] = true
			prefixes = append(prefixes, item)
		} else {
			contents = append(contents, k)
		}
	}
	return contents, prefixes, false, next
}

// keyAlphabet makes keys that sort near each other: segments of a few
// characters around '/' (0x2f): '!', '-', '.', '0', 'a', '~', and
// multi-byte runes, so that a directory "a" ("a/" among its siblings)
// sorts between files "a-b" and "a0".
var keySegments = []string{"a", "a-", "a.b", "a0", "ab", "b", "-", "!", "~", "é", "日本", "a b", "aé", "z"}

func randomKey(r *rand.Rand) string {
	n := 1 + r.Intn(3)
	segs := make([]string, n)
	for i := range segs {
		segs[i] = keySegments[r.Intn(len(keySegments))]
		if r.Intn(3) == 0 {
			segs[i] += keySegments[r.Intn(len(keySegments))]
		}
	}
	k := strings.Join(segs, "/")
	if r.Intn(8) == 0 {
		k += "/" // a directory marker
	}
	return k
}

func putKey(t testing.TB, b *fixedBackend, bucket, key string) error {
	t.Helper()
	body := []byte(key)
	_, err := b.PutObject(bucket, key, map[string]string{}, bytes.NewReader(body), int64(len(body)), nil)
	return err
}

// bucketWithKeys starts a store on the files under root with the bucket
// "bkt" holding keys (each key's body is its name).
func bucketWithKeys(t testing.TB, root string, keys ...string) *fixedBackend {
	t.Helper()
	b, err := newFixedBackend(root)
	if err != nil {
		t.Fatal(err)
	}
	if err := b.CreateBucket("bkt"); err != nil {
		t.Fatal(err)
	}
	for _, k := range keys {
		if err := putKey(t, b, "bkt", k); err != nil {
			t.Fatal(err)
		}
	}
	return b
}

// pageAll lists bucket page by page as a client does (the next marker:
// NextMarker, or the last key of a page without one) and checks each page
// against the model.
func pageAll(t *testing.T, b *fixedBackend, bucket string, keys []string, prefix, delim, start string, maxKeys int64) {
	t.Helper()
	var p gofakes3.Prefix
	if prefix != "" {
		p.HasPrefix, p.Prefix = true, prefix
	}
	if delim != "" {
		p.HasDelimiter, p.Delimiter = true, delim
	}
	marker, hasMarker := start, start != ""
	for pages := 0; ; pages++ {
		if pages > len(keys)+2 {
			t.Fatalf("prefix %q delimiter %q max-keys %d: listing does not end", prefix, delim, maxKeys)
		}
		got, err := b.ListBucket(bucket, &p, gofakes3.ListBucketPage{HasMarker: hasMarker, Marker: marker, MaxKeys: maxKeys})
		if err != nil {
			t.Fatal(err)
		}
		wantC, wantP, wantT, wantN := listModel(keys, prefix, delim, marker, maxKeys)
		var gotC, gotP []string
		for _, c := range got.Contents {
			gotC = append(gotC, c.Key)
			if c.Size != int64(len(c.Key)) || c.ETag == "" {
				t.Fatalf("%q: size %d, ETag %q", c.Key, c.Size, c.ETag)
			}
		}
		for _, cp := range got.CommonPrefixes {
			gotP = append(gotP, cp.Prefix)
		}
		if !slices.Equal(gotC, wantC) || !slices.Equal(gotP, wantP) || got.IsTruncated != wantT ||
			(wantT && got.NextMarker != wantN) {
			t.Fatalf("prefix %q delimiter %q marker %q max-keys %d:\ngot  %q %q truncated %v next %q\nwant %q %q truncated %v next %q",
				prefix, delim, marker, maxKeys, gotC, gotP, got.IsTruncated, got.NextMarker, wantC, wantP, wantT, wantN)
		}
		if !got.IsTruncated || maxKeys == 0 {
			return
		}
		marker, hasMarker = got.NextMarker, true
	}
}

// TestListingPagesMatchModel: random keys (with '/', markers, unicode,
// keys that sort next to each other), changed by PUTs and deletes between
// rounds, listed page by page with every combination of prefix,
// delimiter, start marker and max-keys, each page compared with the
// brute-force model.
func TestListingPagesMatchModel(t *testing.T) {
	seed := int64(1)
	if v := os.Getenv("S3SEAL_LISTING_SEED"); v != "" {
		fmt.Sscan(v, &seed)
	}
	r := rand.New(rand.NewSource(seed))
	b, err := newFixedBackend(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if err := b.CreateBucket("bkt"); err != nil {
		t.Fatal(err)
	}
	stored := map[string]bool{}
	for round := 0; round < 6; round++ {
		for i := 0; i < 60; i++ {
			k := randomKey(r)
			if putKey(t, b, "bkt", k) == nil {
				stored[k] = true // refused: an object beside keys under its name
			}
		}
		var keys []string
		for k := range stored {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys[:len(keys)/5] {
			if r.Intn(2) == 0 {
				if _, err := b.DeleteObject("bkt", k); err != nil {
					t.Fatal(err)
				}
				delete(stored, k)
			}
		}
		keys = keys[:0]
		for k := range stored {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		prefixes := []string{"", "a", "a/", "a-", "a0", "é", "b/", "zz", keys[r.Intn(len(keys))]}
		for _, prefix := range prefixes {
			for _, delim := range []string{"", "/", "-", "a", "é"} {
				for _, start := range []string{"", "a", "a/", "a/a", "a0", keys[r.Intn(len(keys))], "\U0010ffff"} {
					for _, maxKeys := range []int64{0, 1, 2, 3, 7, 1000} {
						pageAll(t, b, "bkt", keys, prefix, delim, start, maxKeys)
					}
				}
			}
		}
	}
}

// TestListingSkipsEmptyDirectories: a directory left empty (a crash
// between a delete and its pruning) holds no key and is no common prefix.
func TestListingSkipsEmptyDirectories(t *testing.T) {
	b := bucketWithKeys(t, t.TempDir(), "a/x", "c")
	if err := b.fs.MkdirAll("buckets/bkt/b/empty/deeper", 0o700); err != nil {
		t.Fatal(err)
	}
	pageAll(t, b, "bkt", []string{"a/x", "c"}, "", "/", "", 1)
	pageAll(t, b, "bkt", []string{"a/x", "c"}, "", "", "", 1)
}

// TestListingWhileWriting: listers page through a bucket while writers
// put and delete keys in it. Every page is sorted and has no key twice,
// and every key no writer touches is listed each time.
func TestListingWhileWriting(t *testing.T) {
	b, err := newFixedBackend(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if err := b.CreateBucket("bkt"); err != nil {
		t.Fatal(err)
	}
	var stable []string
	for i := 0; i < 200; i++ {
		k := fmt.Sprintf("d%02d/s%03d", i%10, i)
		if err := putKey(t, b, "bkt", k); err != nil {
			t.Fatal(err)
		}
		stable = append(stable, k)
	}
	sort.Strings(stable)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for w := 0; w < 3; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				k := fmt.Sprintf("d%02d/w%d-%03d/x", i%12, w, i%40)
				if i%3 == 2 {
					b.DeleteObject("bkt", k)
				} else {
					putKey(t, b, "bkt", k)
				}
			}
		}()
	}
	for round := 0; round < 20; round++ {
		var all []string
		marker, has := "", false
		for {
			got, err := b.ListBucket("bkt", nil, gofakes3.ListBucketPage{HasMarker: has, Marker: marker, MaxKeys: 37})
			if err != nil {
				t.Fatal(err)
			}
			for _, c := range got.Contents {
				all = append(all, c.Key)
			}
			if !got.IsTruncated {
				break
			}
			marker, has = got.NextMarker, true
		}
		if !sort.StringsAreSorted(all) || len(slices.Compact(slices.Clone(all))) != len(all) {
			t.Fatalf("round %d: a listing out of order or with a key twice: %q", round, all)
		}
		var listed []string
		for _, k := range all {
			if strings.Contains(k, "/s") {
				listed = append(listed, k)
			}
		}
		if !slices.Equal(listed, stable) {
			t.Fatalf("round %d: %d of the %d keys no writer touched listed", round, len(listed), len(stable))
		}
	}
	close(stop)
	wg.Wait()
}

// fillBucket writes n objects and their metadata straight into a new
// store's directory, flat or in directories of 100, and opens the store
// on it: its index is built from the disk.
func fillBucket(t testing.TB, n int, nested bool) (*fixedBackend, []string) {
	t.Helper()
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, "metadata", "bkt"), 0o700); err != nil {
		t.Fatal(err)
	}
	var keys []string
	for i := 0; i < n; i++ {
		k := fmt.Sprintf("f%06d", i)
		if nested {
			k = fmt.Sprintf("d%04d/f%06d", i/100, i)
		}
		p := filepath.Join(root, "buckets", "bkt", filepath.FromSlash(k))
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(k), 0o600); err != nil {
			t.Fatal(err)
		}
		st, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		sum := md5.Sum([]byte(k))
		raw, err := json.Marshal(storedMeta{File: "bkt/" + k, ModTime: st.ModTime(), Size: st.Size(), Hash: sum[:], Meta: map[string]string{}})
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, filepath.FromSlash(metaPath("bkt", k))), raw, 0o600); err != nil {
			t.Fatal(err)
		}
		keys = append(keys, k)
	}
	b, err := newFixedBackend(root)
	if err != nil {
		t.Fatal(err)
	}
	return b, keys
}

// pageWork is what listing one page cost the store: directory entries
// read from disk, index entries stepped through, objects read.
type pageWork struct{ read, visited, objects int64 }

func listPageWork(t testing.TB, b *fixedBackend, prefix *gofakes3.Prefix, marker string, maxKeys int64) (pageWork, *gofakes3.ObjectList) {
	t.Helper()
	r0, v0, o0 := b.ix.entriesRead.Load(), b.ix.entriesVisited.Load(), b.ix.objectsRead.Load()
	got, err := b.ListBucket("bkt", prefix, gofakes3.ListBucketPage{HasMarker: marker != "", Marker: marker, MaxKeys: maxKeys})
	if err != nil {
		t.Fatal(err)
	}
	return pageWork{b.ix.entriesRead.Load() - r0, b.ix.entriesVisited.Load() - v0, b.ix.objectsRead.Load() - o0}, got
}

// TestListingPageCost: a page of 100 steps through its own entries (one
// a level of the path for each key) and reads its objects and at most
// the directories it enters, the first page as the last, in a bucket of
// 1000 keys as in one of 10,000, flat or in directories of 100 (counted
// work, not time).
func TestListingPageCost(t *testing.T) {
	for _, nested := range []bool{false, true} {
		var costs []pageWork
		for _, n := range []int{1000, 10000} {
			b, keys := fillBucket(t, n, nested)
			listPageWork(t, b, nil, "", 1) // builds the index along the first path
			for _, marker := range []string{"", keys[len(keys)/2], keys[len(keys)-101]} {
				w, got := listPageWork(t, b, nil, marker, 100)
				if len(got.Contents) != 100 {
					t.Fatalf("%d keys, marker %q: %d listed", n, marker, len(got.Contents))
				}
				if w.objects != 100 && !(w.objects == 101 && got.IsTruncated) {
					t.Errorf("%d keys (nested %v), marker %q: %d objects read for a page of 100", n, nested, marker, w.objects)
				}
				costs = append(costs, w)
			}
		}
		t.Logf("nested %v: pages of 100 (1000 keys: first, middle, last; 10,000 keys: the same): %+v", nested, costs)
		levels := int64(1)
		if nested {
			levels = 2
		}
		for _, w := range costs {
			// A nested page may read the (at most 2) directories of 100 it
			// enters; the index holds the rest.
			if w.read > 200 || w.visited > levels*101+2 || w.visited < costs[0].visited-2 {
				t.Errorf("nested %v: a page of 100 cost %+v (all: %+v)", nested, w, costs)
			}
		}
	}
}

// TestListingPageCostDelimiter: a page of common prefixes (rclone's
// listing of a directory's subdirectories) costs its prefixes, not the
// keys under them.
func TestListingPageCostDelimiter(t *testing.T) {
	b, _ := fillBucket(t, 3000, true)
	p := &gofakes3.Prefix{HasDelimiter: true, Delimiter: "/"}
	listPageWork(t, b, p, "", 1000)
	w, got := listPageWork(t, b, p, "d0009/", 20)
	if len(got.CommonPrefixes) != 20 || got.CommonPrefixes[0].Prefix != "d0010/" {
		t.Fatalf("common prefixes: %+v", got.CommonPrefixes)
	}
	if w.objects != 0 || w.read > 0 || w.visited > 3*21 {
		t.Errorf("a page of 20 common prefixes over 100 keys each cost %+v", w)
	}
}

// BenchmarkListPage lists page N of a 15,000-key bucket (pages of 1000,
// nested in directories of 100, its index built): the first page and the
// last should cost the same.
func BenchmarkListPage(b *testing.B) {
	fb, keys := fillBucket(b, 15000, true)
	listPageWork(b, fb, nil, "", 1)
	for _, c := range []struct{ name, marker string }{{"first", ""}, {"last", keys[len(keys)-1001]}} {
		b.Run(c.name, func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				got, err := fb.ListBucket("bkt", nil, gofakes3.ListBucketPage{HasMarker: c.marker != "", Marker: c.marker, MaxKeys: 1000})
				if err != nil || len(got.Contents) != 1000 {
					b.Fatal(err, len(got.Contents))
				}
			}
		})
	}
}
