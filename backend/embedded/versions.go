package embedded

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"path"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/johannesboyne/gofakes3"
	"github.com/spf13/afero"

	"github.com/s3seal/s3seal/backend"
)

// Versions on the embedded store (layout in docs/DESIGN.md, "Embedded
// store"):
//
//   - A bucket's versioning state is the file versions/<bucket>/.status
//     ("Enabled" or "Suspended"); none means never enabled, and such a
//     bucket is stored exactly as before versions existed.
//   - The latest version of a key, unless it is a delete marker, is the
//     object where s3afero keeps it (buckets/<bucket>/<key> and its
//     metadata file), with its version id and order in the metadata
//     entries verMetaID and verMetaSeq (absent: version "null", ordered by
//     its modification time).
//   - Every other version and every delete marker lives in
//     versions/<bucket>/<sha256 of key>/: <id>.json (verEntry) and, for a
//     version, its body <id>.data.
//
// Every change runs under the key's lock and moves files by rename under
// the tree lock, so readers (which hold the tree lock shared while they
// resolve and open a version) never see a version in neither place.
const (
	verMetaID  = "X-Amz-S3seal-Version-Id"
	verMetaSeq = "X-Amz-S3seal-Version-Seq"
	verStatus  = ".status"
	nullID     = "null"
)

// verEntry is a non-current version or a delete marker on disk.
type verEntry struct {
	Key          string
	VersionID    string
	Seq          int64 // order: the newest has the largest
	DeleteMarker bool  `json:",omitempty"`
	ModTime      time.Time
	Size         int64
	Hash         []byte
	Meta         map[string]string
}

// ETag is the entry's S3 ETag, unquoted.
func (e *verEntry) ETag() string {
	if v := e.Meta[etagMetaKey]; v != "" {
		return v
	}
	return hex.EncodeToString(e.Hash)
}

// verState is the versioning state cache of a fixedBackend.
type verState struct {
	mu      sync.Mutex
	status  map[string]string // bucket -> status, as on disk
	lastSeq int64
}

func (b *fixedBackend) versionsRoot(bucket string) string { return path.Join("versions", bucket) }

func (b *fixedBackend) keyVersionsDir(bucket, key string) string {
	sum := sha256.Sum256([]byte(key))
	return path.Join("versions", bucket, hex.EncodeToString(sum[:]))
}

// versioning is the bucket's versioning status: "Enabled", "Suspended" or
// "" (never enabled).
func (b *fixedBackend) versioning(bucket string) string {
	b.vs.mu.Lock()
	defer b.vs.mu.Unlock()
	if s, ok := b.vs.status[bucket]; ok {
		return s
	}
	raw, _ := afero.ReadFile(b.fs, path.Join(b.versionsRoot(bucket), verStatus))
	s := strings.TrimSpace(string(raw))
	if b.vs.status == nil {
		b.vs.status = map[string]string{}
	}
	b.vs.status[bucket] = s
	return s
}

// setVersioning records status ("Enabled" or "Suspended") for bucket.
func (b *fixedBackend) setVersioning(bucket, status string) error {
	b.tree.Lock()
	defer b.tree.Unlock()
	if st, err := b.fs.Stat(path.Join("buckets", bucket)); err != nil || !st.IsDir() {
		return gofakes3.BucketNotFound(bucket)
	}
	b.vs.mu.Lock()
	defer b.vs.mu.Unlock()
	dir := b.versionsRoot(bucket)
	if err := b.fs.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	if err := afero.WriteFile(b.fs, path.Join(dir, verStatus+".tmp"), []byte(status), 0o600); err != nil {
		return err
	}
	if err := b.fs.Rename(path.Join(dir, verStatus+".tmp"), path.Join(dir, verStatus)); err != nil {
		return err
	}
	if b.vs.status == nil {
		b.vs.status = map[string]string{}
	}
	b.vs.status[bucket] = status
	return nil
}

// forgetVersions drops a deleted bucket's versioning state; the caller
// holds the tree lock.
func (b *fixedBackend) forgetVersions(bucket string) {
	b.fs.RemoveAll(b.versionsRoot(bucket))
	b.vs.mu.Lock()
	delete(b.vs.status, bucket)
	b.vs.mu.Unlock()
}

// hasVersions reports whether any non-current version or delete marker of
// bucket is kept.
func (b *fixedBackend) hasVersions(bucket string) bool {
	dirs, _ := afero.ReadDir(b.fs, b.versionsRoot(bucket))
	for _, d := range dirs {
		if d.IsDir() {
			if es, _ := afero.ReadDir(b.fs, path.Join(b.versionsRoot(bucket), d.Name())); len(es) > 0 {
				return true
			}
		}
	}
	return false
}

// nextSeq is a number larger than any handed out before, in this process
// and (being the clock's nanoseconds where that is larger) before it.
func (b *fixedBackend) nextSeq() int64 {
	b.vs.mu.Lock()
	defer b.vs.mu.Unlock()
	n := time.Now().UnixNano()
	if n <= b.vs.lastSeq {
		n = b.vs.lastSeq + 1
	}
	b.vs.lastSeq = n
	return n
}

// newVersionID is a fresh version id: 32 hex digits.
func newVersionID() string {
	var r [16]byte
	if _, err := rand.Read(r[:]); err != nil {
		panic(err)
	}
	return hex.EncodeToString(r[:])
}

// validVersionID reports whether id can name a version of this store
// ("null" or 32 lower-case hex digits). Others are InvalidArgument when
// malformed (WellFormedVersionID), else versions this store has not.
func validVersionID(id string) bool {
	if id == nullID {
		return true
	}
	if len(id) != 32 {
		return false
	}
	for _, c := range id {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

func errInvalidVersion() error {
	return &mpError{http.StatusBadRequest, "InvalidArgument", "Invalid version id specified"}
}

func errNoSuchVersion() error {
	return &mpError{http.StatusNotFound, "NoSuchVersion", "The specified version does not exist."}
}

// current describes the object at the key's place, if any.
type current struct {
	exists bool
	meta   storedMeta
	id     string
	seq    int64
}

// currentOf reads the metadata of the object at key's place.
func (b *fixedBackend) currentOf(bucket, key string) (current, error) {
	fk := fsKey(key)
	st, err := b.fs.Stat(path.Join("buckets", bucket, fk))
	if err != nil || st.IsDir() {
		if err == nil || os.IsNotExist(err) || pathClash(err) {
			return current{}, nil
		}
		return current{}, err
	}
	c := current{exists: true, id: nullID}
	raw, err := afero.ReadFile(b.fs, metaPath(bucket, fk))
	if err == nil {
		err = json.Unmarshal(raw, &c.meta)
	}
	if err != nil {
		// Written without metadata: s3afero derives it on read.
		obj, herr := b.MultiBucketBackend.HeadObject(bucket, fk)
		if herr != nil {
			return current{}, herr
		}
		c.meta = storedMeta{File: path.Join(bucket, fk), ModTime: st.ModTime(), Size: st.Size(), Hash: obj.Hash, Meta: obj.Metadata}
	}
	if v := c.meta.Meta[verMetaID]; v != "" {
		c.id = v
	}
	c.seq = c.meta.ModTime.UnixNano()
	if v, err := strconv.ParseInt(c.meta.Meta[verMetaSeq], 10, 64); err == nil {
		c.seq = v
	}
	return c, nil
}

// entries lists the key's non-current versions and markers, newest first
// (a leftover record of the current object, see archiveLocked, is none).
func (b *fixedBackend) entries(bucket, key string) ([]*verEntry, error) {
	c, err := b.currentOf(bucket, key)
	if err != nil {
		return nil, err
	}
	dir := b.keyVersionsDir(bucket, key)
	fis, err := afero.ReadDir(b.fs, dir)
	if err != nil {
		if os.IsNotExist(err) {
			return nil, nil
		}
		return nil, err
	}
	var out []*verEntry
	for _, fi := range fis {
		if !strings.HasSuffix(fi.Name(), ".json") {
			continue
		}
		e, err := b.readEntry(path.Join(dir, fi.Name()))
		if err != nil || c.exists && e.VersionID == c.id {
			continue // removed meanwhile, or a leftover
		}
		out = append(out, e)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Seq > out[j].Seq })
	return out, nil
}

func (b *fixedBackend) readEntry(name string) (*verEntry, error) {
	raw, err := afero.ReadFile(b.fs, name)
	if err != nil {
		return nil, err
	}
	var e verEntry
	if err := json.Unmarshal(raw, &e); err != nil {
		return nil, err
	}
	return &e, nil
}

func (b *fixedBackend) entryPath(bucket, key, id, ext string) string {
	return path.Join(b.keyVersionsDir(bucket, key), id+ext)
}

// writeEntry writes e's record (its body, if any, is in place already).
func (b *fixedBackend) writeEntry(bucket string, e *verEntry) error {
	raw, err := json.Marshal(e)
	if err != nil {
		return err
	}
	dst := b.entryPath(bucket, e.Key, e.VersionID, ".json")
	if err := b.fs.MkdirAll(path.Dir(dst), 0o700); err != nil {
		return err
	}
	if err := afero.WriteFile(b.fs, dst+".tmp", raw, 0o600); err != nil {
		return err
	}
	return b.fs.Rename(dst+".tmp", dst)
}

// removeEntry deletes an entry's record and body, and the key's directory
// once empty.
func (b *fixedBackend) removeEntry(bucket, key, id string) error {
	if err := b.fs.Remove(b.entryPath(bucket, key, id, ".json")); err != nil && !os.IsNotExist(err) {
		return err
	}
	if err := b.fs.Remove(b.entryPath(bucket, key, id, ".data")); err != nil && !os.IsNotExist(err) {
		return err
	}
	b.fs.Remove(b.keyVersionsDir(bucket, key)) // fails while not empty
	return nil
}

// archiveLocked moves the current object of key (c) among the non-current
// versions. The caller holds the key's lock and the tree lock.
//
// The record goes first, the body second: at every point the version is
// either still current (a record whose id is the current object's is a
// leftover of a failed or interrupted archive and is ignored: entries,
// allVersions, getVersion read the current object) or fully archived
// (record and body). A metadata file left without its body is no current
// object (currentOf). The leftover record is rewritten by the next
// archive of the version, or dropped with it (versionedDelete).
func (b *fixedBackend) archiveLocked(bucket, key string, c current) error {
	fk := fsKey(key)
	meta := make(map[string]string, len(c.meta.Meta))
	for k, v := range c.meta.Meta {
		if k != verMetaID && k != verMetaSeq {
			meta[k] = v
		}
	}
	e := &verEntry{Key: key, VersionID: c.id, Seq: c.seq, ModTime: c.meta.ModTime, Size: c.meta.Size, Hash: c.meta.Hash, Meta: meta}
	data := b.entryPath(bucket, key, c.id, ".data")
	if err := b.fs.MkdirAll(path.Dir(data), 0o700); err != nil {
		return err
	}
	if err := b.writeEntry(bucket, e); err != nil {
		return err
	}
	if err := b.fs.Rename(path.Join("buckets", bucket, fk), data); err != nil {
		b.fs.Remove(b.entryPath(bucket, key, c.id, ".json")) // still current: the record is a leftover
		return err
	}
	if err := b.fs.Remove(metaPath(bucket, fk)); err != nil && !os.IsNotExist(err) {
		return err
	}
	return nil
}

// dropCurrentLocked deletes the current object of key for good.
func (b *fixedBackend) dropCurrentLocked(bucket, key string) error {
	fk := fsKey(key)
	if err := b.fs.Remove(path.Join("buckets", bucket, fk)); err != nil && !os.IsNotExist(err) {
		return err
	}
	if err := b.fs.Remove(metaPath(bucket, fk)); err != nil && !os.IsNotExist(err) {
		return err
	}
	b.pruneLocked(bucket, fk)
	return nil
}

// promoteLocked makes the newest non-current version current again when
// the key has no current object and its newest entry is not a delete
// marker (after the latest version or marker was deleted by id).
func (b *fixedBackend) promoteLocked(bucket, key string) error {
	c, err := b.currentOf(bucket, key)
	if err != nil || c.exists {
		return err
	}
	es, err := b.entries(bucket, key)
	if err != nil || len(es) == 0 || es[0].DeleteMarker {
		return err
	}
	e := es[0]
	fk := fsKey(key)
	meta := make(map[string]string, len(e.Meta)+2)
	for k, v := range e.Meta {
		meta[k] = v
	}
	meta[verMetaID] = e.VersionID
	meta[verMetaSeq] = strconv.FormatInt(e.Seq, 10)
	raw, err := json.Marshal(storedMeta{File: path.Join(bucket, fk), ModTime: e.ModTime, Size: e.Size, Hash: e.Hash, Meta: meta})
	if err != nil {
		return err
	}
	if b.checkConflict(bucket, key, fk) != nil {
		// Keys under the key's name were written meanwhile (a file tree
		// cannot hold both): the version stays among the non-current ones,
		// readable by id, and the delete that got here stands.
		return nil
	}
	dst := path.Join("buckets", bucket, fk)
	mp := metaPath(bucket, fk)
	if err := b.fs.MkdirAll(path.Dir(dst), 0o700); err != nil {
		return err
	}
	if err := b.fs.MkdirAll(path.Dir(mp), 0o700); err != nil {
		return err
	}
	if err := afero.WriteFile(b.fs, mp, raw, 0o600); err != nil {
		return err
	}
	if err := b.fs.Rename(b.entryPath(bucket, key, e.VersionID, ".data"), dst); err != nil {
		b.fs.Remove(mp)
		return err
	}
	return b.removeEntry(bucket, key, e.VersionID)
}

// beforeVersionedWrite makes room for a new current version of key in a
// bucket whose versioning is status: with versioning enabled the current
// object becomes a non-current version; suspended, the new version is
// "null", so a current "null" is simply replaced, another current version
// is kept, and a non-current "null" (version or marker) goes. The caller
// holds the key's lock and the tree lock.
func (b *fixedBackend) beforeVersionedWrite(bucket, key, status string) error {
	c, err := b.currentOf(bucket, key)
	if err != nil {
		return err
	}
	if c.exists && (status == string(gofakes3.VersioningEnabled) || c.id != nullID) {
		if err := b.archiveLocked(bucket, key, c); err != nil {
			return err
		}
	}
	if status != string(gofakes3.VersioningEnabled) {
		return b.removeEntry(bucket, key, nullID)
	}
	return nil
}

// versionedDelete is a DELETE of key in a bucket with versioning (id "")
// or of one version (id set, in any bucket). With ifMatch set the version
// deleted must have that ETag. It answers the version removed or the
// delete marker made.
func (b *fixedBackend) versionedDelete(bucket, key, id, ifMatch string) (gofakes3.ObjectDeleteResult, error) {
	var res gofakes3.ObjectDeleteResult
	if ok, err := b.BucketExists(bucket); err != nil || !ok {
		return res, gofakes3.BucketNotFound(bucket)
	}
	if id != "" && !backend.WellFormedVersionID(id) {
		return res, errInvalidVersion()
	}
	if id != "" && !validVersionID(id) {
		// Another store's id: a version this one never had.
		if ifMatch != "" {
			return res, gofakes3.KeyNotFound(key)
		}
		return gofakes3.ObjectDeleteResult{VersionID: gofakes3.VersionID(id)}, nil
	}
	if !validKey(key) {
		return gofakes3.ObjectDeleteResult{VersionID: gofakes3.VersionID(id)}, nil
	}
	mu := b.keyLock(bucket, key)
	mu.Lock()
	defer mu.Unlock()
	b.tree.Lock()
	defer b.tree.Unlock()
	c, err := b.currentOf(bucket, key)
	if err != nil {
		return res, err
	}
	if id == "" && b.versioning(bucket) == "" {
		// A bucket never versioned: the object goes, no marker stays.
		if ifMatch != "" && c.exists && !etagMatches(ifMatch, storedETag(c.meta)) {
			return res, gofakes3.ErrPreconditionFailed
		}
		if ifMatch != "" && !c.exists {
			return res, gofakes3.KeyNotFound(key)
		}
		return res, b.dropCurrentLocked(bucket, key)
	}
	if id == "" {
		status := b.versioning(bucket)
		newID := nullID
		if status == string(gofakes3.VersioningEnabled) {
			newID = newVersionID()
		}
		if ifMatch != "" && (!c.exists || !etagMatches(ifMatch, storedETag(c.meta))) {
			if !c.exists {
				return res, gofakes3.KeyNotFound(key)
			}
			return res, gofakes3.ErrPreconditionFailed
		}
		if c.exists {
			if status != string(gofakes3.VersioningEnabled) && c.id == nullID {
				err = b.dropCurrentLocked(bucket, key)
			} else if err = b.archiveLocked(bucket, key, c); err == nil {
				b.pruneLocked(bucket, fsKey(key))
			}
			if err != nil {
				return res, err
			}
		}
		if status != string(gofakes3.VersioningEnabled) {
			if err := b.removeEntry(bucket, key, nullID); err != nil {
				return res, err
			}
		}
		m := &verEntry{Key: key, VersionID: newID, Seq: b.nextSeq(), DeleteMarker: true, ModTime: time.Now().UTC()}
		if err := b.writeEntry(bucket, m); err != nil {
			return res, err
		}
		return gofakes3.ObjectDeleteResult{IsDeleteMarker: true, VersionID: gofakes3.VersionID(newID)}, nil
	}
	res.VersionID = gofakes3.VersionID(id)
	if c.exists && c.id == id {
		if ifMatch != "" && !etagMatches(ifMatch, storedETag(c.meta)) {
			return res, gofakes3.ErrPreconditionFailed
		}
		if err := b.dropCurrentLocked(bucket, key); err != nil {
			return res, err
		}
		if err := b.removeEntry(bucket, key, id); err != nil { // an archive's leftover
			return res, err
		}
		return res, b.promoteLocked(bucket, key)
	}
	e, err := b.readEntry(b.entryPath(bucket, key, id, ".json"))
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			if ifMatch != "" {
				return res, gofakes3.KeyNotFound(key)
			}
			return res, nil // as S3: deleting a missing version succeeds
		}
		return res, err
	}
	if ifMatch != "" && (e.DeleteMarker || !etagMatches(ifMatch, e.ETag())) {
		return res, gofakes3.ErrPreconditionFailed
	}
	res.IsDeleteMarker = e.DeleteMarker
	if err := b.removeEntry(bucket, key, id); err != nil {
		return res, err
	}
	return res, b.promoteLocked(bucket, key)
}

// storedETag is the S3 ETag of a current object's metadata.
func storedETag(m storedMeta) string {
	if v := m.Meta[etagMetaKey]; v != "" {
		return v
	}
	return hex.EncodeToString(m.Hash)
}
