package embedded

import (
	"crypto/md5"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/johannesboyne/gofakes3"
)

// PutObject stages the body in a temporary file first, so that a body cut
// short or failing its Content-MD5 check (gofakes3 reports that only at the
// end) leaves the previous object untouched. The staged body and its
// metadata then take the object's place by rename (see commit): the old
// object is never missing in between, a GET streaming it keeps its inode
// and reads it whole, and its metadata is not merged into the new object
// (s3afero's own PutObject would truncate it in place and merge).
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
		os.Remove(f.Name()) // gone already once committed
	}()
	hash := md5.New()
	n, err := io.Copy(io.MultiWriter(f, hash), input)
	if err != nil {
		return none, err
	}
	if n != size {
		return none, gofakes3.ErrIncompleteBody
	}
	// Close before Stat: some file systems set the mtime on close.
	if err := f.Close(); err != nil {
		return none, err
	}
	st, err := os.Stat(f.Name())
	if err != nil {
		return none, err
	}
	mu := b.keyLock(bucket, key)
	mu.Lock()
	defer mu.Unlock()
	if check != nil {
		if err := check(); err != nil {
			return none, err
		}
	}
	if err := b.checkPut(bucket, fk, cond); err != nil {
		return none, err
	}
	// The version is decided under the key's lock: the versioning
	// status, and what the write replaces (versions.go).
	status := b.versioning(bucket)
	if status != "" {
		id := nullID
		if status == string(gofakes3.VersioningEnabled) {
			id = newVersionID()
			if want := meta[wantVersionKey]; want != nullID && validVersionID(want) {
				id = want
			}
		}
		kept[verMetaID] = id
		kept[verMetaSeq] = strconv.FormatInt(b.nextSeq(), 10)
	}
	metaFile, err := b.stageMeta(storedMeta{File: path.Join(bucket, fk), ModTime: st.ModTime(),
		Size: st.Size(), Hash: hash.Sum(nil), Meta: kept})
	if err != nil {
		return none, err
	}
	defer os.Remove(filepath.Join(b.staging, path.Base(metaFile)))

	err = b.commit(bucket, key, fk, path.Join("staging", filepath.Base(f.Name())), metaFile, func() error {
		if status == "" {
			return nil
		}
		return b.beforeVersionedWrite(bucket, key, status)
	})
	if err != nil {
		return none, err
	}
	return gofakes3.PutObjectResult{VersionID: gofakes3.VersionID(kept[verMetaID])}, nil
}

// stageMeta writes m as s3afero's metadata file into the staging
// directory and returns its path relative to the store's root.
func (b *fixedBackend) stageMeta(m storedMeta) (string, error) {
	raw, err := json.Marshal(m)
	if err != nil {
		return "", err
	}
	f, err := os.CreateTemp(b.staging, "meta-*")
	if err != nil {
		return "", err
	}
	name := path.Join("staging", filepath.Base(f.Name()))
	_, err = f.Write(raw)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(f.Name())
		return "", err
	}
	return name, nil
}

// commit moves the staged body (data) and metadata (meta) of key into
// place: a new key's metadata first (see below), an existing key's body
// first. It holds the tree lock exclusively from the conflict check to the
// renames, so no PUT of another key can make a path of key a file or a
// directory in between (the check and the creation are one step), and no
// reader sees the new body with the old metadata. A refused or failed
// commit leaves no directory behind. If an existing key's metadata rename
// fails after the body's (an I/O error, a crash), the object has the new
// body beside the old metadata, whose size and time do not match it:
// s3afero recomputes the hash on the next read (of the metadata file, not
// the body: the ETag is then not the body's MD5). A new key's
// metadata rename comes first, so that step leaves no body behind.
func (b *fixedBackend) commit(bucket, key, fk, data, meta string, before func() error) error {
	b.tree.Lock()
	defer b.tree.Unlock()
	root := path.Join("buckets", bucket)
	if st, err := b.fs.Stat(root); err != nil || !st.IsDir() {
		return gofakes3.BucketNotFound(bucket)
	}
	if err := b.checkConflict(bucket, key, fk); err != nil {
		return err
	}
	if err := before(); err != nil {
		return err
	}
	dst := path.Join(root, fk)
	mp := metaPath(bucket, fk)
	_, serr := b.fs.Stat(dst)
	isNew := errors.Is(serr, fs.ErrNotExist)
	err := b.fs.MkdirAll(path.Dir(dst), 0o700)
	if err == nil {
		err = b.fs.MkdirAll(path.Dir(mp), 0o700)
	}
	if err == nil && isNew {
		// A new key's metadata goes first: a body without metadata
		// cannot be read (s3afero recomputes a missing hash from the
		// metadata's own path, and fails), so HEAD, GET and every
		// listing through it would fail, while metadata without a body
		// is no object at all.
		if err = b.fs.Rename(meta, mp); err == nil {
			if err = b.fs.Rename(data, dst); err != nil {
				b.fs.Remove(mp)
			}
		}
	} else if err == nil {
		err = b.fs.Rename(data, dst)
		if err == nil {
			return b.fs.Rename(meta, mp)
		}
	}
	if err != nil {
		b.pruneLocked(bucket, fk)
		if pathClash(err) {
			return keyLimit(key, "another key holds its file-system path (an object cannot also be a prefix of other keys there)")
		}
		return err
	}
	return nil
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
