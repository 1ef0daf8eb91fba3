package embedded

import (
	"errors"
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strings"

	"github.com/johannesboyne/gofakes3"
)

// Listings on the embedded store are paged: a page seeks to its marker
// in the directory index (dirindex.go) and reads what it returns, so its
// cost is that of its own entries (at most max-keys objects and common
// prefixes, each found by a binary search at each level of the path),
// whatever the page and however large the bucket.
//
// An object "a/b/c" is the file a/b/c of the bucket's directory, a
// directory marker "a/" the marker file in a/ (keys.go). A directory "a"
// holds exactly the keys that start with "a/", and sorts among its
// siblings as "a/" (dirEnt), so a depth-first walk of the sorted
// directories meets the keys in S3's order, and the smallest key at or
// after any string is found by descending from the bucket's root.

// ListBucket answers one page of ListObjects (V1 and V2: gofakes3 turns
// marker, continuation-token and start-after into page.Marker, and a
// NextMarker into the next continuation token) with S3's prefix,
// delimiter, marker and max-keys. The backend pages itself: gofakes3
// sends the page and takes the answer as it is.
func (b *fixedBackend) ListBucket(bucket string, prefix *gofakes3.Prefix, page gofakes3.ListBucketPage) (*gofakes3.ObjectList, error) {
	var p gofakes3.Prefix
	if prefix != nil {
		p = *prefix
	}
	if !p.HasPrefix {
		p.Prefix = ""
	}
	delim := ""
	if p.HasDelimiter {
		delim = p.Delimiter
	}
	b.tree.RLock()
	defer b.tree.RUnlock()
	if !b.bucketDir(bucket) {
		return nil, gofakes3.BucketNotFound(bucket)
	}
	marker := ""
	if page.HasMarker {
		marker = page.Marker
	}
	lo := p.Prefix
	if marker >= lo {
		lo = marker + "\x00" // the smallest string after the marker
	}
	out := gofakes3.NewObjectList()
	n, last := int64(0), ""
	for {
		key, ok, err := b.firstKey(bucket, lo)
		if err != nil {
			return nil, err
		}
		if !ok || !strings.HasPrefix(key, p.Prefix) {
			break
		}
		next, more := key+"\x00", true
		if delim != "" {
			if i := strings.Index(key[len(p.Prefix):], delim); i >= 0 {
				cp := key[:len(p.Prefix)+i+len(delim)]
				next, more = prefixEnd(cp)
				if cp > marker {
					if n >= page.MaxKeys {
						out.IsTruncated, out.NextMarker = true, last
						break
					}
					n++
					last = cp
					out.AddPrefix(cp)
				}
				if !more {
					break
				}
				lo = next
				continue
			}
		}
		c, err := b.listedObject(bucket, key)
		if err != nil {
			return nil, err
		}
		if c != nil {
			if n >= page.MaxKeys {
				out.IsTruncated, out.NextMarker = true, last
				break
			}
			n++
			last = key
			out.Add(c)
		}
		lo = next
	}
	return out, nil
}

// bucketDir reports whether bucket's directory exists.
func (b *fixedBackend) bucketDir(bucket string) bool {
	st, err := b.fs.Stat(path.Join("buckets", bucket))
	return err == nil && st.IsDir()
}

// prefixEnd is the smallest string after every string that starts with
// p, if there is one.
func prefixEnd(p string) (string, bool) {
	for i := len(p) - 1; i >= 0; i-- {
		if p[i] < 0xff {
			return p[:i] + string([]byte{p[i] + 1}), true
		}
	}
	return "", false
}

// firstKey is the smallest key of bucket at or after lo, if any. The
// caller holds the tree lock (shared).
func (b *fixedBackend) firstKey(bucket, lo string) (string, bool, error) {
	return b.firstIn(path.Join("buckets", bucket), "", lo)
}

// firstIn is the smallest key at or after lo among the keys of dir, whose
// keys all start with p; lo starts with p, or is "" (no bound).
func (b *fixedBackend) firstIn(dir, p, lo string) (string, bool, error) {
	ents, err := b.ix.list(dir)
	if err != nil {
		return "", false, err
	}
	rel := ""
	if len(lo) > len(p) {
		rel = lo[len(p):]
	}
	// The first entry at or after rel; an entry before it can still hold
	// keys after lo only when it is a directory whose prefix lo starts
	// with (no other entry sorts between the two).
	i := sort.Search(len(ents), func(i int) bool { return ents[i].rel >= rel })
	if i > 0 && ents[i-1].dir && strings.HasPrefix(rel, ents[i-1].rel) {
		i--
	}
	for ; i < len(ents); i++ {
		e := ents[i]
		b.ix.entriesVisited.Add(1)
		if !e.dir {
			if p == "" && e.rel == "" {
				continue // a marker file at the bucket's root holds no key
			}
			return p + e.rel, true, nil
		}
		sub, sublo := p+e.rel, ""
		if strings.HasPrefix(lo, sub) {
			sublo = lo
		}
		if k, ok, err := b.firstIn(path.Join(dir, e.rel), sub, sublo); ok || err != nil {
			return k, ok, err
		}
	}
	return "", false, nil
}

// listedObject is key as a listing shows it, or nil when it is gone
// (deleted since the index was read): size and time of its file, its S3
// ETag (a multipart object's is kept in its metadata) and storage class.
// An object that is there but cannot be read (its metadata file missing
// after a crash between commit's two renames, or unreadable) is an error:
// left out, a listing would tell clients it was deleted (rclone sync and
// backup tools then delete their copy), where an error makes them retry
// or stop.
func (b *fixedBackend) listedObject(bucket, key string) (*gofakes3.Content, error) {
	b.ix.objectsRead.Add(1)
	fk := fsKey(key)
	st, err := b.fs.Stat(path.Join("buckets", bucket, fk))
	if errors.Is(err, fs.ErrNotExist) || pathClash(err) || (err == nil && st.IsDir()) {
		return nil, nil
	} else if err != nil {
		return nil, err
	}
	obj, err := b.MultiBucketBackend.HeadObject(bucket, fk)
	if gofakes3.HasErrorCode(err, gofakes3.ErrNoSuchKey) {
		return nil, nil
	} else if err != nil {
		if _, serr := b.fs.Stat(path.Join("buckets", bucket, fk)); errors.Is(serr, fs.ErrNotExist) {
			return nil, nil // deleted between the two reads
		}
		return nil, fmt.Errorf("listing %s/%s: %w", bucket, key, err)
	}
	c := &gofakes3.Content{Key: key, LastModified: gofakes3.NewContentTime(st.ModTime()),
		ETag: gofakes3.FormatETag(obj.Hash), Size: st.Size()}
	if v := obj.Metadata[etagMetaKey]; v != "" {
		c.ETag = `"` + v + `"`
	}
	if v := obj.Metadata["X-Amz-Storage-Class"]; v != "" {
		c.StorageClass = gofakes3.StorageClass(v)
	}
	return c, nil
}

// eachKey calls fn with every key of bucket that starts with prefix, in
// S3's order, until fn returns false; it fails when a directory cannot be
// read. The caller holds the tree lock (shared).
func (b *fixedBackend) eachKey(bucket, prefix string, fn func(key string) bool) error {
	for lo := prefix; ; {
		key, ok, err := b.firstKey(bucket, lo)
		if err != nil || !ok || !strings.HasPrefix(key, prefix) || !fn(key) {
			return err
		}
		lo = key + "\x00"
	}
}
