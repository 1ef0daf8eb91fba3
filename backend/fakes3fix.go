package backend

import (
	"hash/fnv"
	"io"
	"os"
	"path"
	"path/filepath"
	"sort"
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
	// embeddedHandler.
	stdHeaderPrefix = "X-Amz-S3seal-Std-"
	// etagMetaKey holds the S3 ETag of an object assembled from parts
	// ("<md5 of part md5s>-<parts>"), which gofakes3 cannot express (it
	// derives ETags from the body's MD5); embeddedHandler and ListBucket
	// put it in place of gofakes3's.
	etagMetaKey = "X-Amz-S3seal-Etag"
	// privateHeaderPrefix covers every header name s3seal's embedded
	// store uses internally; requests carrying one have it removed.
	privateHeaderPrefix = "X-Amz-S3seal-"
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
	return strings.HasPrefix(k, "X-Amz-Meta-") || strings.HasPrefix(k, stdHeaderPrefix) || k == etagMetaKey
}

// fixedBackend corrects the gofakes3 afero backend where s3seal needs S3's
// behaviour. It keeps the on-disk layout of s3afero.MultiBucket, so a data
// directory stays readable by plain gofakes3.
//
//   - ListBucket: s3afero ignores max-keys, markers and continuation
//     tokens (it returns everything, untruncated), reports empty directories
//     as common prefixes and ignores delimiters other than "/". Here the
//     matching keys are listed in full and paged in S3 order.
//   - PutObject: s3afero writes the body straight over the old object and
//     merges the old object's metadata into the new one; see PutObject.
//   - Keys map onto files as embedded_keys.go says: directory markers
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
type fixedBackend struct {
	*s3afero.MultiBucketBackend
	fs afero.Fs // the Fs given to MultiBucket; buckets live in "buckets/"

	// tree is held shared by writers and exclusively while pruning
	// directories, so a PUT never sees its parent directory vanish.
	tree sync.RWMutex
	// keyLocks serialise PUTs and deletes of the same key (striped by hash) so that
	// unlink-and-write pairs do not interleave.
	keyLocks [64]sync.Mutex
	staging  string // directory for bodies in flight
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
	fs := afero.NewBasePathFs(afero.NewOsFs(), root)
	mb, err := s3afero.MultiBucket(fs)
	if err != nil {
		return nil, err
	}
	return &fixedBackend{MultiBucketBackend: mb, fs: fs, staging: staging}, nil
}

// validKey reports whether key maps onto a file path without aliasing
// (see keyErr).
func validKey(key string) bool { return keyErr(key) == nil }

func (b *fixedBackend) keyLock(bucket, key string) *sync.Mutex {
	h := fnv.New32a()
	io.WriteString(h, bucket+"/"+key)
	return &b.keyLocks[h.Sum32()%uint32(len(b.keyLocks))]
}

// PutObject stages the body in a temporary file first, so that a body cut
// short or failing its Content-MD5 check (gofakes3 reports that only at the
// end) leaves the previous object untouched; s3afero would already have
// truncated it and left a file without metadata that fails every later
// HEAD and listing. The old object is then unlinked (a GET streaming it
// keeps its inode and reads it whole, and its metadata is not merged into
// the new object) and the staged file copied into place.
func (b *fixedBackend) PutObject(bucket, key string, meta map[string]string, input io.Reader, size int64, cond *gofakes3.PutConditions) (gofakes3.PutObjectResult, error) {
	return b.putObject(bucket, key, meta, input, size, cond, nil)
}

// putObject is PutObject with check, when not nil, called under the key's
// lock once the body is staged: an error from it aborts the write. It is
// how a multipart completion decides If-Match and If-None-Match atomically
// with respect to other writes of the key.
func (b *fixedBackend) putObject(bucket, key string, meta map[string]string, input io.Reader, size int64,
	cond *gofakes3.PutConditions, check func() error) (gofakes3.PutObjectResult, error) {
	var none gofakes3.PutObjectResult
	if err := keyErr(key); err != nil {
		return none, err
	}
	fk := fsKey(key)
	if ok, err := b.BucketExists(bucket); err != nil {
		return none, err
	} else if !ok {
		return none, gofakes3.BucketNotFound(bucket)
	}
	kept := make(map[string]string, len(meta))
	for k, v := range meta {
		if keptMeta(k) {
			kept[k] = v
		}
	}

	f, err := os.CreateTemp(b.staging, "put-*")
	if err != nil {
		return none, err
	}
	defer func() {
		f.Close()
		os.Remove(f.Name())
	}()
	n, err := io.Copy(f, input)
	if err != nil {
		return none, err
	}
	if n != size {
		return none, gofakes3.ErrIncompleteBody
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return none, err
	}

	mu := b.keyLock(bucket, key)
	mu.Lock()
	defer mu.Unlock()
	b.tree.RLock()
	defer b.tree.RUnlock()
	if check != nil {
		if err := check(); err != nil {
			return none, err
		}
	}
	if err := b.checkPut(bucket, fk, cond); err != nil {
		return none, err
	}
	if err := b.checkConflict(bucket, key, fk); err != nil {
		return none, err
	}
	if _, err := b.MultiBucketBackend.DeleteObject(bucket, fk); err != nil && !pathClash(err) {
		return none, err
	}
	res, err := b.MultiBucketBackend.PutObject(bucket, fk, kept, f, size, nil)
	if pathClash(err) {
		// A PUT of another key made the path a file or a directory
		// after checkConflict looked.
		return none, keyLimit(key, "another key holds its file-system path (an object cannot also be a prefix of other keys there)")
	}
	return res, err
}

// checkPut decides a PUT's conditions against the object as it is now; the
// caller holds the key's lock. As on S3, If-Match on a missing key is
// NoSuchKey, a mismatch or an existing key under If-None-Match: * is
// PreconditionFailed, and If-None-Match other than "*" is NotImplemented.
func (b *fixedBackend) checkPut(bucket, key string, cond *gofakes3.PutConditions) error {
	if cond == nil || (cond.IfMatch == nil && cond.IfNoneMatch == nil) {
		return nil
	}
	if cond.IfNoneMatch != nil && strings.TrimSpace(*cond.IfNoneMatch) != "*" {
		return gofakes3.ErrorMessage(gofakes3.ErrNotImplemented, "If-None-Match on PUT accepts only *")
	}
	info := &gofakes3.ConditionalObjectInfo{}
	obj, err := b.MultiBucketBackend.HeadObject(bucket, key)
	switch {
	case err == nil && obj.Metadata[etagMetaKey] != "":
		// An object assembled from parts: its ETag is not an MD5.
		if cond.IfNoneMatch != nil || !etagMatches(*cond.IfMatch, obj.Metadata[etagMetaKey]) {
			return gofakes3.ErrPreconditionFailed
		}
		return nil
	case err == nil:
		info.Exists, info.Hash = true, obj.Hash
	case !gofakes3.HasErrorCode(err, gofakes3.ErrNoSuchKey):
		return err
	}
	if cond.IfMatch != nil && !info.Exists {
		return gofakes3.KeyNotFound(key)
	}
	return gofakes3.CheckPutConditions(cond, info)
}

// HeadObject and GetObject: a key under an object ("a/b" while "a" is
// one) is missing, as on S3, not a file-system error.
func (b *fixedBackend) HeadObject(bucket, key string) (*gofakes3.Object, error) {
	if !validKey(key) {
		return nil, gofakes3.KeyNotFound(key)
	}
	obj, err := b.MultiBucketBackend.HeadObject(bucket, fsKey(key))
	return b.found(obj, key, err)
}

func (b *fixedBackend) GetObject(bucket, key string, rng *gofakes3.ObjectRangeRequest) (*gofakes3.Object, error) {
	if !validKey(key) {
		return nil, gofakes3.KeyNotFound(key)
	}
	obj, err := b.MultiBucketBackend.GetObject(bucket, fsKey(key), rng)
	return b.found(obj, key, err)
}

func (b *fixedBackend) found(obj *gofakes3.Object, key string, err error) (*gofakes3.Object, error) {
	if pathClash(err) {
		return nil, gofakes3.KeyNotFound(key)
	}
	if err == nil {
		obj.Name = key
		obj.Metadata = cleanMeta(obj.Metadata)
	}
	return obj, err
}

// cleanMeta turns smuggled entries back into headers.
func cleanMeta(m map[string]string) map[string]string {
	out := make(map[string]string, len(m))
	for k, v := range m {
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
	for dir := path.Dir(key); dir != "." && dir != "/"; dir = path.Dir(dir) {
		if err := b.fs.Remove(path.Join("buckets", bucket, dir)); err != nil {
			if !os.IsNotExist(err) {
				return
			}
		}
	}
}

// ListBucket lists in S3 order with prefix, delimiter, marker and max-keys
// applied here. Cost: every key under the prefix is read (with its metadata
// file) for each page.
func (b *fixedBackend) ListBucket(bucket string, prefix *gofakes3.Prefix, page gofakes3.ListBucketPage) (*gofakes3.ObjectList, error) {
	var p gofakes3.Prefix
	if prefix != nil {
		p = *prefix
	}
	all, err := b.listAll(bucket, p.Prefix)
	if err != nil {
		return nil, err
	}
	for _, c := range all.Contents {
		c.Key = s3Key(c.Key)
	}
	sort.Slice(all.Contents, func(i, j int) bool { return all.Contents[i].Key < all.Contents[j].Key })

	out := gofakes3.NewObjectList()
	marker := ""
	if page.HasMarker {
		marker = page.Marker
	}
	n, lastPrefix, last := int64(0), "", ""
	for _, c := range all.Contents {
		if c.Key <= marker || (p.HasPrefix && !strings.HasPrefix(c.Key, p.Prefix)) {
			continue
		}
		item, isPrefix := c.Key, false
		if p.HasDelimiter {
			rest := c.Key[len(p.Prefix):]
			if i := strings.Index(rest, p.Delimiter); i >= 0 {
				item, isPrefix = p.Prefix+rest[:i+len(p.Delimiter)], true
				if item <= marker || item == lastPrefix {
					continue
				}
			}
		}
		if n >= page.MaxKeys {
			out.IsTruncated = true
			out.NextMarker = last
			break
		}
		n++
		last = item
		if isPrefix {
			lastPrefix = item
			out.AddPrefix(item)
		} else {
			out.Add(b.withPartsETag(bucket, c))
		}
	}
	return out, nil
}

// withPartsETag gives a listed object assembled from parts its multipart
// ETag and its storage class (one metadata read per listed object).
func (b *fixedBackend) withPartsETag(bucket string, c *gofakes3.Content) *gofakes3.Content {
	obj, err := b.MultiBucketBackend.HeadObject(bucket, fsKey(c.Key))
	if err != nil {
		return c
	}
	if v := obj.Metadata[etagMetaKey]; v != "" {
		c.ETag = `"` + v + `"`
	}
	if v := obj.Metadata["X-Amz-Storage-Class"]; v != "" {
		c.StorageClass = gofakes3.StorageClass(v)
	}
	return c
}
