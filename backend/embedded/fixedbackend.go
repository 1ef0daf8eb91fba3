package embedded

import (
	"hash/fnv"
	"io"
	"os"
	"path"
	"path/filepath"
	"strings"
	"sync"

	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3afero"
	"github.com/spf13/afero"
)

// Metadata entries of the embedded store, as gofakes3 keeps them: canonical
// HTTP header names.
const (
	// stdHeaderPrefix smuggles the standard headers gofakes3 does not keep
	// (Cache-Control, Content-Language, Expires) through its metadata; see
	// newHandler.
	stdHeaderPrefix = "X-Amz-S3seal-Std-"
	// etagMetaKey holds the S3 ETag of an object assembled from parts
	// ("<md5 of part md5s>-<parts>"), which gofakes3 cannot express (it
	// derives ETags from the body's MD5); newHandler and ListBucket
	// put it in place of gofakes3's.
	etagMetaKey = "X-Amz-S3seal-Etag"
	// privateHeaderPrefix covers every header name s3seal's embedded
	// store uses internally; requests carrying one have it removed.
	privateHeaderPrefix = "X-Amz-S3seal-"
	// wantVersionKey is the version id the sidecar chose for a write and
	// recorded its tags and lock under before the write (a request header,
	// so among the metadata putObject gets; never stored). Only the
	// handler sets it: incoming requests lose privateHeaderPrefix headers.
	wantVersionKey = "X-Amz-S3seal-Want-Version"
)

// smuggledHeaders are restored from stdHeaderPrefix entries on HEAD and GET.
var smuggledHeaders = []string{"Cache-Control", "Content-Language", "Expires"}

// keptMeta reports whether a metadata entry gofakes3 collected from a PUT is
// worth storing. gofakes3 keeps every X-Amz-* request header (date,
// content-sha256, checksums...) and would echo them on HEAD.
func keptMeta(k string) bool {
	switch k {
	case "Content-Type", "Content-Disposition", "Content-Encoding", "Last-Modified",
		"X-Amz-Storage-Class", "X-Amz-Website-Redirect-Location":
		return true
	}
	return strings.HasPrefix(k, "X-Amz-Meta-") || strings.HasPrefix(k, stdHeaderPrefix) || k == etagMetaKey ||
		sseHeader(k)
}

// sseHeader reports whether the embedded store keeps a request
// header of server-side encryption with the object (and so reports it on
// GET and HEAD). It has no KMS: it keeps SSE-S3 and SSE-KMS requests as a
// development stand-in for a store that does (docs/DESIGN.md).
func sseHeader(k string) bool {
	switch k {
	case "X-Amz-Server-Side-Encryption", "X-Amz-Server-Side-Encryption-Aws-Kms-Key-Id",
		"X-Amz-Server-Side-Encryption-Bucket-Key-Enabled":
		return true
	}
	return false
}

// fixedBackend corrects the gofakes3 afero backend where s3seal needs S3's
// behaviour. It keeps the on-disk layout of s3afero.MultiBucket, so a data
// directory stays readable by plain gofakes3.
//
//   - ListBucket: s3afero ignores max-keys, markers and continuation
//     tokens (it returns everything, untruncated), reports empty directories
//     as common prefixes and ignores delimiters other than "/". Here a page
//     seeks to its marker in a sorted index of the bucket tree's
//     directories and reads its own entries only (listing.go, dirindex.go).
//   - PutObject: s3afero writes the body straight over the old object and
//     merges the old object's metadata into the new one; here a staged
//     body and its metadata replace it by rename (put.go).
//   - Metadata files: s3afero names them after the whole key, too long a
//     name for keys over 222 bytes; metaNameFs (meta.go) gives
//     those a hashed name, so every key up to 1024 bytes can be stored.
//   - Keys map onto files as keys.go says: directory markers
//     (a trailing "/") are kept in a marker file; keys the file system
//     cannot hold faithfully (empty, ".", ".." or over-long segments, an
//     object beside keys under its name) are refused on PUT with a 4xx
//     naming the limit and reported missing on read and delete.
//   - Conditional PUTs (If-Match, If-None-Match: *) are decided here under
//     the key's lock, so that no other PUT or delete of the key through
//     this store comes between the check and the write; s3afero would
//     merge the old object's metadata into the new one on that path.
//   - DeleteObject: empty parent directories are pruned, so that "a/b"
//     followed by deleting it does not block a later PUT of "a".
//   - Versions: a write in a bucket with versioning keeps what it
//     replaces (versions.go); the version requests themselves
//     are answered by serveVersions and serveRead.
type fixedBackend struct {
	*s3afero.MultiBucketBackend
	fs afero.Fs  // the Fs given to MultiBucket (an indexFs); buckets live in "buckets/"
	ix *dirIndex // the bucket tree's sorted directory listings (dirindex.go)

	// tree is held exclusively while a PUT checks its path and renames
	// its body and metadata into place (commit), while pruning directories
	// and while deleting a bucket, and shared by reads: a key's path cannot
	// change shape between its check and its creation, and a reader never
	// sees a body with another version's metadata.
	tree sync.RWMutex
	// keyLocks serialise PUTs and deletes of the same key (striped by
	// hash), so that a conditional write's check and its commit are one
	// step for that key.
	keyLocks [64]sync.Mutex
	staging  string   // directory for bodies in flight
	vs       verState // versioning (versions.go)
}

// newFixedBackend serves the directory root; bodies in flight are staged in
// root/staging, which is emptied first (leftovers of a crash).
func newFixedBackend(root string) (*fixedBackend, error) {
	staging := filepath.Join(root, "staging")
	if err := os.RemoveAll(staging); err != nil {
		return nil, err
	}
	if err := os.Mkdir(staging, 0o700); err != nil {
		return nil, err
	}
	ix := newDirIndex(root)
	fs := indexFs{afero.NewBasePathFs(afero.NewOsFs(), root), ix}
	if err := fs.MkdirAll("metadata", 0o700); err != nil {
		return nil, err
	}
	mb, err := s3afero.MultiBucket(fs, s3afero.MultiWithMetaFs(metaNameFs{afero.NewBasePathFs(fs, "metadata")}))
	if err != nil {
		return nil, err
	}
	return &fixedBackend{MultiBucketBackend: mb, fs: fs, ix: ix, staging: staging}, nil
}

// validKey reports whether key maps onto a file path without aliasing
// (see keyErr).
func validKey(key string) bool { return keyErr(key) == nil }

func (b *fixedBackend) keyLock(bucket, key string) *sync.Mutex {
	h := fnv.New32a()
	io.WriteString(h, bucket+"/"+key)
	return &b.keyLocks[h.Sum32()%uint32(len(b.keyLocks))]
}

// HeadObject and GetObject: a key under an object ("a/b" while "a" is
// one) is missing, as on S3, not a file-system error.
func (b *fixedBackend) HeadObject(bucket, key string) (*gofakes3.Object, error) {
	if !validKey(key) {
		return nil, gofakes3.KeyNotFound(key)
	}
	b.tree.RLock()
	defer b.tree.RUnlock()
	obj, err := b.MultiBucketBackend.HeadObject(bucket, fsKey(key))
	return b.found(bucket, obj, key, err)
}

func (b *fixedBackend) GetObject(bucket, key string, rng *gofakes3.ObjectRangeRequest) (*gofakes3.Object, error) {
	if !validKey(key) {
		return nil, gofakes3.KeyNotFound(key)
	}
	b.tree.RLock()
	defer b.tree.RUnlock()
	obj, err := b.MultiBucketBackend.GetObject(bucket, fsKey(key), rng)
	return b.found(bucket, obj, key, err)
}

func (b *fixedBackend) found(bucket string, obj *gofakes3.Object, key string, err error) (*gofakes3.Object, error) {
	if pathClash(err) {
		return nil, gofakes3.KeyNotFound(key)
	}
	if err == nil {
		obj.Name = key
		if id := obj.Metadata[verMetaID]; id != "" {
			obj.VersionID = gofakes3.VersionID(id)
		} else if b.versioning(bucket) != "" {
			obj.VersionID = nullID
		}
		obj.Metadata = cleanMeta(obj.Metadata)
	}
	return obj, err
}

// cleanMeta turns smuggled entries back into headers.
func cleanMeta(m map[string]string) map[string]string {
	out := make(map[string]string, len(m))
	for k, v := range m {
		if k == verMetaID || k == verMetaSeq {
			continue
		}
		if std, ok := strings.CutPrefix(k, stdHeaderPrefix); ok {
			k = std
		}
		out[k] = v
	}
	return out
}

func (b *fixedBackend) DeleteObject(bucket, key string) (gofakes3.ObjectDeleteResult, error) {
	if !validKey(key) {
		// Nothing can be stored under such a key; deleting it must not
		// reach the aliased path.
		if ok, err := b.BucketExists(bucket); err != nil || !ok {
			return gofakes3.ObjectDeleteResult{}, gofakes3.BucketNotFound(bucket)
		}
		return gofakes3.ObjectDeleteResult{}, nil
	}
	mu := b.keyLock(bucket, key)
	mu.Lock()
	if b.notAFile(bucket, fsKey(key)) {
		mu.Unlock()
		return gofakes3.ObjectDeleteResult{}, nil
	}
	res, err := b.MultiBucketBackend.DeleteObject(bucket, fsKey(key))
	mu.Unlock()
	if err == nil {
		b.prune(bucket, fsKey(key))
	}
	return res, err
}

func (b *fixedBackend) DeleteMulti(bucket string, keys ...string) (gofakes3.MultiDeleteResult, error) {
	var valid []string
	var res gofakes3.MultiDeleteResult
	for _, k := range keys {
		if validKey(k) {
			valid = append(valid, k)
		} else {
			res.Deleted = append(res.Deleted, gofakes3.ObjectID{Key: k})
		}
	}
	var inner gofakes3.MultiDeleteResult
	for _, k := range valid {
		mu := b.keyLock(bucket, k)
		mu.Lock()
		if b.notAFile(bucket, fsKey(k)) {
			mu.Unlock()
			inner.Deleted = append(inner.Deleted, gofakes3.ObjectID{Key: k})
			continue
		}
		one, err := b.MultiBucketBackend.DeleteMulti(bucket, fsKey(k))
		mu.Unlock()
		if err != nil {
			return one, err
		}
		for _, d := range one.Deleted {
			b.prune(bucket, d.Key)
			inner.Deleted = append(inner.Deleted, gofakes3.ObjectID{Key: s3Key(d.Key), VersionID: d.VersionID})
		}
		for _, e := range one.Error {
			e.Key = s3Key(e.Key)
			inner.Error = append(inner.Error, e)
		}
	}
	res.Deleted = append(res.Deleted, inner.Deleted...)
	res.Error = inner.Error
	return res, nil
}

// prune removes the now empty directories above key, bottom up. Errors are
// ignored: a non-empty directory simply stops the walk.
func (b *fixedBackend) prune(bucket, key string) {
	b.tree.Lock()
	defer b.tree.Unlock()
	b.pruneLocked(bucket, key)
}

func (b *fixedBackend) pruneLocked(bucket, key string) {
	for dir := path.Dir(key); dir != "." && dir != "/"; dir = path.Dir(dir) {
		if err := b.fs.Remove(path.Join("buckets", bucket, dir)); err != nil {
			if !os.IsNotExist(err) {
				return
			}
		}
	}
}
