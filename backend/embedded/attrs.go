package embedded

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// attrStore is the embedded store's sidecar: what gofakes3 keeps nowhere
// (object tags, retention, legal hold and ACL; a bucket's Object Lock
// configuration, tags, policy, CORS, lifecycle, ownership controls and
// ACL; the tags and lock of a multipart upload until it completes), on
// disk under <dataDir>/attrs, so it survives a restart:
//
//	attrs/<bucket>/bucket.json          the bucket's record
//	attrs/<bucket>/o/<sha256>.json      one object version's record, named
//	                                    by the hash of key NUL version id
//	attrs/<bucket>/u/<sha256>.json      an upload's record, by upload id
//
// The version id is what the store answers in x-amz-version-id, "null"
// when it answers none. Every file is written whole to a temporary file,
// synced and renamed over the old one; a missing file is an empty record.
// One mutex orders the read-modify-write cycles of one process (the data
// directory's lock keeps others out).
type attrStore struct {
	dir string
	mu  sync.Mutex
}

// objAttrs is one object version's record (or an upload's).
type objAttrs struct {
	Key         string    `json:"key"`
	VersionID   string    `json:"versionId,omitempty"`
	Tags        []tag     `json:"tags,omitempty"`
	Mode        string    `json:"mode,omitempty"` // GOVERNANCE or COMPLIANCE
	RetainUntil time.Time `json:"retainUntil,omitzero"`
	LegalHold   string    `json:"legalHold,omitempty"` // ON, OFF or ""
	ACL         *aclState `json:"acl,omitempty"`
}

// tag is one tag, in the order it was given.
type tag struct {
	Key   string `json:"k" xml:"Key"`
	Value string `json:"v" xml:"Value"`
}

// bucketAttrs is a bucket's record. Docs holds the documents kept as
// they were sent (policy, cors, lifecycle, ownershipControls), by
// sub-resource name.
type bucketAttrs struct {
	LockEnabled bool              `json:"lockEnabled,omitempty"`
	Lock        *lockRule         `json:"lock,omitempty"` // default retention
	Tags        []tag             `json:"tags,omitempty"`
	Docs        map[string][]byte `json:"docs,omitempty"`
	ACL         *aclState         `json:"acl,omitempty"`
}

// lockRule is a bucket's default retention.
type lockRule struct {
	Mode  string `json:"mode"`
	Days  int    `json:"days,omitempty"`
	Years int    `json:"years,omitempty"`
}

// maxAttrFile bounds a record on disk (documents are bounded far below).
const maxAttrFile = 1 << 20

func newAttrStore(dir string) (*attrStore, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	return &attrStore{dir: dir}, nil
}

// locked reports whether the record forbids deleting its version at now:
// a legal hold, or a retention in the future (GOVERNANCE ones yield to
// bypass).
func (o objAttrs) locked(now time.Time, bypass bool) bool {
	if o.LegalHold == "ON" {
		return true
	}
	if o.Mode == "" || !o.RetainUntil.After(now) {
		return false
	}
	return o.Mode == "COMPLIANCE" || !bypass
}

// empty reports whether the record holds nothing worth a file.
func (o objAttrs) empty() bool {
	return len(o.Tags) == 0 && o.Mode == "" && o.LegalHold == "" && o.ACL == nil
}

func nullVID(vid string) string {
	if vid == "" {
		return "null"
	}
	return vid
}

func (a *attrStore) bucketDir(bucket string) string {
	return filepath.Join(a.dir, diskName(bucket))
}

// diskName is the file name of a bucket's sidecar directory: lower-case
// letters, digits, "-", "_" and "." (not first) stand for themselves,
// every other byte is %XX. Distinct names stay distinct (no two buckets
// share records, as a\bc and a_bc once did, nor on a file system that
// folds case), "." and ".." cannot come out, and a name S3 allows maps to
// itself (the layout of earlier versions).
func diskName(name string) string {
	var b strings.Builder
	for i := 0; i < len(name); i++ {
		c := name[i]
		if c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.' && i > 0 {
			b.WriteByte(c)
			continue
		}
		fmt.Fprintf(&b, "%%%02X", c)
	}
	return b.String()
}

func hashName(parts ...string) string {
	sum := sha256.Sum256([]byte(strings.Join(parts, "\x00")))
	return hex.EncodeToString(sum[:]) + ".json"
}

func (a *attrStore) objPath(bucket, key, vid string) string {
	return filepath.Join(a.bucketDir(bucket), "o", hashName(key, nullVID(vid)))
}

func (a *attrStore) uploadPath(bucket, id string) string {
	return filepath.Join(a.bucketDir(bucket), "u", hashName(id))
}

func (a *attrStore) read(path string, v any) (bool, error) {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return false, err
	}
	if st.Size() > maxAttrFile {
		return false, errors.New("attrs: record too large: " + path)
	}
	b := make([]byte, st.Size())
	if _, err := f.ReadAt(b, 0); err != nil && st.Size() > 0 {
		return false, err
	}
	return true, json.Unmarshal(b, v)
}

// write stores v at path atomically (nil v removes the file).
func (a *attrStore) write(path string, v any) error {
	if v == nil {
		if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		return nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	f, err := os.CreateTemp(filepath.Dir(path), ".tmp-*")
	if err != nil {
		return err
	}
	_, err = f.Write(b)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), path)
	}
	if err != nil {
		os.Remove(f.Name())
	}
	return err
}

// object reads the record of one version; a missing one is empty.
func (a *attrStore) object(bucket, key, vid string) (objAttrs, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.objectLocked(bucket, key, vid)
}

func (a *attrStore) objectLocked(bucket, key, vid string) (objAttrs, error) {
	var o objAttrs
	ok, err := a.read(a.objPath(bucket, key, vid), &o)
	if !ok || o.Key != key { // a hash collision is no record of this key
		o = objAttrs{}
	}
	o.Key, o.VersionID = key, nullVID(vid)
	return o, err
}

// updateObject changes one version's record under the store's mutex; fn
// returns an error to leave it as it was.
func (a *attrStore) updateObject(bucket, key, vid string, fn func(*objAttrs) error) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	o, err := a.objectLocked(bucket, key, vid)
	if err != nil {
		return err
	}
	if err := fn(&o); err != nil {
		return err
	}
	return a.putObjectLocked(bucket, o)
}

func (a *attrStore) putObject(bucket string, o objAttrs) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.putObjectLocked(bucket, o)
}

func (a *attrStore) putObjectLocked(bucket string, o objAttrs) error {
	o.VersionID = nullVID(o.VersionID)
	p := a.objPath(bucket, o.Key, o.VersionID)
	if o.empty() {
		return a.write(p, nil)
	}
	return a.write(p, o)
}

// dropObject removes one version's record (its version is gone).
func (a *attrStore) dropObject(bucket, key, vid string) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.write(a.objPath(bucket, key, vid), nil)
}

func (a *attrStore) bucket(bucket string) (bucketAttrs, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	var b bucketAttrs
	_, err := a.read(filepath.Join(a.bucketDir(bucket), "bucket.json"), &b)
	return b, err
}

// updateBucket changes a bucket's record under the store's mutex.
func (a *attrStore) updateBucket(bucket string, fn func(*bucketAttrs) error) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	var b bucketAttrs
	p := filepath.Join(a.bucketDir(bucket), "bucket.json")
	if _, err := a.read(p, &b); err != nil {
		return err
	}
	if err := fn(&b); err != nil {
		return err
	}
	return a.write(p, b)
}

// upload reads (and with take, removes) an upload's record.
func (a *attrStore) upload(bucket, id string, take bool) (objAttrs, bool, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	var o objAttrs
	p := a.uploadPath(bucket, id)
	ok, err := a.read(p, &o)
	if err != nil || !ok {
		return o, false, err
	}
	if take {
		err = a.write(p, nil)
	}
	return o, true, err
}

func (a *attrStore) putUpload(bucket, id string, o objAttrs) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	if o.empty() {
		return nil
	}
	return a.write(a.uploadPath(bucket, id), o)
}

func (a *attrStore) dropUpload(bucket, id string) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.write(a.uploadPath(bucket, id), nil)
}

// dropBucket removes every record of a deleted bucket.
func (a *attrStore) dropBucket(bucket string) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	return os.RemoveAll(a.bucketDir(bucket))
}
