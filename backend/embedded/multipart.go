package embedded

import (
	"crypto/md5"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/johannesboyne/gofakes3"
)

// S3's multipart limits, which the embedded store enforces like AWS, Ceph
// RGW and Hetzner do.
const (
	maxPartNumber = 10000
	minPartSize   = 5 << 20 // every part but the last
)

// mpStore keeps the embedded store's multipart uploads on disk, replacing
// gofakes3's, which holds parts in memory and reassembles the object in one
// buffer. Each upload is a directory <dir>/<uploadID> holding upload.json
// (bucket, key, metadata, initiation time) and one file per part named
// "<part number>.<md5 hex>"; uploads survive a restart. Completion streams
// the part files into fixedBackend, so memory stays bounded whatever the
// object's size.
//
// An upload that ends (completed, aborted, its bucket deleted) is renamed
// <dir>/<uploadID>.ended, then removed (end): its readers, which take no
// lock, find all of it or none of it.
type mpStore struct {
	dir string
	fb  *fixedBackend
	// minPartSize is the smallest part but the last (minPartSize unless
	// a test says otherwise).
	minPartSize int64
	// locks serialise the changes of one upload (striped by upload id):
	// a part's commit, completion and abort.
	locks [64]sync.Mutex

	// removeDir removes an ended upload's renamed directory (os.RemoveAll),
	// and partsRead, when set, runs in parts between reading an upload's
	// directory and statting its files: tests stop a removal or a
	// listing half-way there.
	removeDir func(dir string) error
	partsRead func(id string)
}

// mpUpload is upload.json.
type mpUpload struct {
	Bucket    string            `json:"bucket"`
	Key       string            `json:"key"`
	Meta      map[string]string `json:"meta"` // as gofakes3 keeps it: canonical header names
	Initiated time.Time         `json:"initiated"`
	ID        string            `json:"-"`
}

// mpPart is one stored part.
type mpPart struct {
	Number  int32
	MD5     string // hex
	Size    int64
	ModTime time.Time
	path    string
}

// mpError is an S3 error answer of the multipart handler.
type mpError struct {
	status    int
	code, msg string
}

func (e *mpError) Error() string { return e.code + ": " + e.msg }

func errNoSuchUpload() error {
	return &mpError{http.StatusNotFound, "NoSuchUpload",
		"The specified multipart upload does not exist. The upload ID may be invalid, or the upload may have been aborted or completed."}
}

// newMPStore opens dir, creating it if needed, and removes part files a
// crash left half written.
func newMPStore(dir string, fb *fixedBackend) (*mpStore, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	leftovers, _ := filepath.Glob(filepath.Join(dir, "*", "tmp-*"))
	for _, f := range leftovers {
		os.Remove(f)
	}
	ended, _ := filepath.Glob(filepath.Join(dir, "*"+endedSuffix))
	for _, d := range ended {
		os.RemoveAll(d)
	}
	return &mpStore{dir: dir, fb: fb, removeDir: os.RemoveAll}, nil
}

// endedSuffix names the directory of an upload being removed (end); no
// upload id has it (validUploadID), so nothing reads it as an upload.
const endedSuffix = ".ended"

// end removes upload id, which was completed or aborted or whose bucket
// was deleted; the caller holds the upload's lock. One rename takes the
// whole upload out of its readers' reach, then its files are removed.
// Readers take no lock (ListParts, ListMultipartUploads, the first check
// of a part): removed in place, file by file, the upload was seen half
// gone, upload.json with some of its parts (or none), and a ListParts
// beside a completion answered a part list short of the parts completed.
// s3seal completing the same upload on another process took that for
// parts never uploaded: InvalidPart instead of NoSuchUpload or the
// object. A failure to remove the renamed files leaves them to the next
// start (newMPStore); the upload is gone all the same.
func (m *mpStore) end(id string) error {
	dir := filepath.Join(m.dir, id)
	if err := os.Rename(dir, dir+endedSuffix); err != nil {
		return err
	}
	m.removeDir(dir + endedSuffix)
	return nil
}

func (m *mpStore) lock(id string) *sync.Mutex {
	h := fnv.New32a()
	io.WriteString(h, id)
	return &m.locks[h.Sum32()%uint32(len(m.locks))]
}

// validUploadID accepts only ids this store could have made, so an id
// from a request never walks the file system.
func validUploadID(id string) bool {
	if len(id) != 32 {
		return false
	}
	_, err := hex.DecodeString(id)
	return err == nil
}

// create starts an upload of bucket/key carrying meta.
func (m *mpStore) create(bucket, key string, meta map[string]string) (string, error) {
	if err := keyErr(key); err != nil {
		return "", err
	}
	if ok, err := m.fb.BucketExists(bucket); err != nil {
		return "", err
	} else if !ok {
		return "", gofakes3.BucketNotFound(bucket)
	}
	var raw [16]byte
	if _, err := rand.Read(raw[:]); err != nil {
		return "", err
	}
	id := hex.EncodeToString(raw[:])
	up := mpUpload{Bucket: bucket, Key: key, Meta: meta, Initiated: time.Now().UTC()}
	b, err := json.Marshal(up)
	if err != nil {
		return "", err
	}
	dir := filepath.Join(m.dir, id)
	if err := os.Mkdir(dir, 0o700); err != nil {
		return "", err
	}
	if err := writeFileSync(filepath.Join(dir, "upload.json"), b); err != nil {
		os.RemoveAll(dir)
		return "", err
	}
	return id, nil
}

// load reads upload id and checks that it belongs to bucket/key.
func (m *mpStore) load(bucket, key, id string) (*mpUpload, error) {
	if !validUploadID(id) {
		return nil, errNoSuchUpload()
	}
	up, err := m.read(id)
	if err != nil {
		return nil, err
	}
	if up.Bucket != bucket || up.Key != key {
		return nil, errNoSuchUpload()
	}
	return up, nil
}

func (m *mpStore) read(id string) (*mpUpload, error) {
	b, err := os.ReadFile(filepath.Join(m.dir, id, "upload.json"))
	if errors.Is(err, os.ErrNotExist) {
		return nil, errNoSuchUpload()
	} else if err != nil {
		return nil, err
	}
	var up mpUpload
	if err := json.Unmarshal(b, &up); err != nil {
		return nil, fmt.Errorf("upload %s: %w", id, err)
	}
	up.ID = id
	return &up, nil
}

// uploadPart stores body (size bytes; contentMD5, when not empty, is the
// base64 MD5 it must have) as part n, replacing an earlier upload of it.
// The body goes to a temporary file first, so a body cut short or failing
// its digest leaves the earlier part in place. It returns the part's MD5.
func (m *mpStore) uploadPart(bucket, key, id string, n int32, body io.Reader, size int64, contentMD5 string) (string, error) {
	if _, err := m.load(bucket, key, id); err != nil {
		return "", err
	}
	var want []byte
	if contentMD5 != "" {
		d, err := base64.StdEncoding.DecodeString(contentMD5)
		if err != nil || len(d) != md5.Size {
			return "", &mpError{http.StatusBadRequest, "InvalidDigest", "The Content-MD5 you specified was invalid."}
		}
		want = d
	}
	dir := filepath.Join(m.dir, id)
	f, err := os.CreateTemp(dir, "tmp-*")
	if errors.Is(err, os.ErrNotExist) {
		return "", errNoSuchUpload()
	} else if err != nil {
		return "", err
	}
	defer func() {
		f.Close()
		os.Remove(f.Name())
	}()
	h := md5.New()
	got, err := io.Copy(io.MultiWriter(f, h), body)
	if err != nil {
		return "", err
	}
	if got != size {
		return "", &mpError{http.StatusBadRequest, "IncompleteBody", "You did not provide the number of bytes specified by the Content-Length HTTP header."}
	}
	sum := h.Sum(nil)
	if want != nil && string(want) != string(sum) {
		return "", &mpError{http.StatusBadRequest, "BadDigest", "The Content-MD5 you specified did not match what we received."}
	}
	if err := f.Sync(); err != nil {
		return "", err
	}
	etag := hex.EncodeToString(sum)

	mu := m.lock(id)
	mu.Lock()
	defer mu.Unlock()
	if _, err := m.load(bucket, key, id); err != nil {
		return "", err // completed or aborted meanwhile
	}
	// The files of this part number only: listing (and statting) every
	// part, as parts does, would make an upload of n parts cost n².
	old, err := filepath.Glob(filepath.Join(dir, fmt.Sprintf("%05d.*", n)))
	if err != nil {
		return "", err
	}
	final := filepath.Join(dir, fmt.Sprintf("%05d.%s", n, etag))
	if err := os.Rename(f.Name(), final); err != nil {
		return "", err
	}
	for _, p := range old {
		if p != final {
			os.Remove(p)
		}
	}
	return etag, nil
}

// parts lists the upload's parts in part order. Should a crash have left
// two files for one part, the newer one counts. An upload that ended while
// its files were read (end) is NoSuchUpload: its files can no longer be
// statted where they were listed.
func (m *mpStore) parts(id string) ([]mpPart, error) {
	entries, err := os.ReadDir(filepath.Join(m.dir, id))
	if errors.Is(err, os.ErrNotExist) {
		return nil, errNoSuchUpload()
	} else if err != nil {
		return nil, err
	}
	if m.partsRead != nil {
		m.partsRead(id)
	}
	byNum := map[int32]mpPart{}
	for _, e := range entries {
		num, sum, ok := strings.Cut(e.Name(), ".")
		n, err := strconv.ParseInt(num, 10, 32)
		if !ok || err != nil || len(sum) != 2*md5.Size {
			continue // upload.json, tmp-*
		}
		fi, err := e.Info()
		if err != nil {
			continue // removed meanwhile
		}
		p := mpPart{Number: int32(n), MD5: sum, Size: fi.Size(), ModTime: fi.ModTime(), path: filepath.Join(m.dir, id, e.Name())}
		if q, dup := byNum[p.Number]; !dup || p.ModTime.After(q.ModTime) {
			byNum[p.Number] = p
		}
	}
	out := make([]mpPart, 0, len(byNum))
	for _, p := range byNum {
		out = append(out, p)
	}
	// The directory read above is the upload's as a whole, not one
	// renamed away meanwhile, if upload.json is still there (an upload id
	// is never reused).
	if _, err := os.Stat(filepath.Join(m.dir, id, "upload.json")); errors.Is(err, os.ErrNotExist) {
		return nil, errNoSuchUpload()
	} else if err != nil {
		return nil, err
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Number < out[j].Number })
	return out, nil
}

// abort removes an upload and its parts.
func (m *mpStore) abort(bucket, key, id string) error {
	mu := m.lock(id)
	mu.Lock()
	defer mu.Unlock()
	if _, err := m.load(bucket, key, id); err != nil {
		return err
	}
	return m.end(id)
}

// dropBucket removes the uploads of a deleted bucket.
func (m *mpStore) dropBucket(bucket string) {
	ups, err := m.uploads(bucket)
	if err != nil {
		return
	}
	for _, up := range ups {
		mu := m.lock(up.ID)
		mu.Lock()
		m.end(up.ID)
		mu.Unlock()
	}
}

// uploads lists the bucket's uploads in progress, by key, then initiation.
func (m *mpStore) uploads(bucket string) ([]*mpUpload, error) {
	entries, err := os.ReadDir(m.dir)
	if err != nil {
		return nil, err
	}
	var out []*mpUpload
	for _, e := range entries {
		if !e.IsDir() || !validUploadID(e.Name()) {
			continue
		}
		up, err := m.read(e.Name())
		if err != nil {
			continue // completed or aborted while listing, or unreadable
		}
		if up.Bucket == bucket {
			out = append(out, up)
		}
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.Key != b.Key {
			return a.Key < b.Key
		}
		if !a.Initiated.Equal(b.Initiated) {
			return a.Initiated.Before(b.Initiated)
		}
		return a.ID < b.ID
	})
	return out, nil
}

// writeFileSync writes a small file and flushes it to disk.
func writeFileSync(name string, b []byte) error {
	f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	if _, err := f.Write(b); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
