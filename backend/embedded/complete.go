package embedded

import (
	"crypto/md5"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/johannesboyne/gofakes3"

	"github.com/s3seal/s3seal/backend"
)

// complete assembles the named parts, in order, into bucket/key and ends
// the upload. S3's rules: at least one part, part numbers strictly
// ascending (InvalidPartOrder), each named part uploaded with that ETag
// (InvalidPart), every part but the last at least 5 MiB (EntityTooSmall).
// ifMatch and ifNoneMatch ("*") are decided against the object at the key
// under the key's write lock, so no other write of the key slips between
// check and write. A failed check (PreconditionFailed, or NoSuchKey for
// If-Match on a missing object) keeps the upload, as S3 does. The object's
// ETag is S3's: hex MD5 of the parts' binary MD5s, "-", the part count.
// want is the version id it gets in a bucket with versioning enabled, when
// set (wantVersionKey).
func (m *mpStore) complete(bucket, key, id string, named []backend.CompletedPart, ifMatch, ifNoneMatch, want string) (etag, versionID string, err error) {
	if ifNoneMatch != "" && ifNoneMatch != "*" {
		return "", "", &mpError{http.StatusNotImplemented, "NotImplemented", "If-None-Match is supported with '*' only."}
	}
	mu := m.lock(id)
	mu.Lock()
	defer mu.Unlock()
	up, err := m.load(bucket, key, id)
	if err != nil {
		return "", "", err
	}
	if len(named) == 0 {
		return "", "", &mpError{http.StatusBadRequest, "MalformedXML", "You must specify at least one part."}
	}
	stored, err := m.parts(id)
	if err != nil {
		return "", "", err
	}
	byNum := make(map[int32]mpPart, len(stored))
	for _, p := range stored {
		byNum[p.Number] = p
	}
	files := make([]string, len(named))
	sums := md5.New()
	var total int64
	for i, np := range named {
		if i > 0 && np.PartNumber <= named[i-1].PartNumber {
			return "", "", &mpError{http.StatusBadRequest, "InvalidPartOrder",
				"The list of parts was not in ascending order. Parts must be ordered by part number."}
		}
		p, ok := byNum[np.PartNumber]
		if !ok || strings.Trim(np.ETag, `"`) != p.MD5 {
			return "", "", &mpError{http.StatusBadRequest, "InvalidPart", fmt.Sprintf(
				"Part %d could not be found or its ETag does not match the part uploaded.", np.PartNumber)}
		}
		if i < len(named)-1 && p.Size < m.minPartSize {
			return "", "", &mpError{http.StatusBadRequest, "EntityTooSmall",
				"Your proposed upload is smaller than the minimum allowed object size."}
		}
		raw, _ := hex.DecodeString(p.MD5)
		sums.Write(raw)
		total += p.Size
		files[i] = p.path
	}
	etag = fmt.Sprintf("%s-%d", hex.EncodeToString(sums.Sum(nil)), len(named))

	meta := maps.Clone(up.Meta)
	if meta == nil {
		meta = map[string]string{}
	}
	meta[etagMetaKey] = etag
	if want != "" {
		meta[wantVersionKey] = want
	}
	meta["Last-Modified"] = time.Now().UTC().Format(http.TimeFormat)
	check := func() error { return m.checkConditions(bucket, key, ifMatch, ifNoneMatch) }
	body := &filesReader{files: files}
	defer body.Close()
	res, err := m.fb.putObject(bucket, key, meta, body, total, nil, check)
	if err != nil {
		return "", "", err
	}
	if err := m.end(id); err != nil {
		return "", "", err
	}
	return etag, string(res.VersionID), nil
}

// checkConditions applies If-Match and If-None-Match to the object now at
// bucket/key; it runs under the key's write lock.
func (m *mpStore) checkConditions(bucket, key, ifMatch, ifNoneMatch string) error {
	if ifMatch == "" && ifNoneMatch == "" {
		return nil
	}
	obj, err := m.fb.HeadObject(bucket, key)
	exists := err == nil
	if err != nil && !isNoSuchKey(err) {
		return err
	}
	failed := &mpError{http.StatusPreconditionFailed, "PreconditionFailed",
		"At least one of the pre-conditions you specified did not hold"}
	if ifNoneMatch == "*" && exists {
		return failed
	}
	if ifMatch != "" {
		if !exists {
			return &mpError{http.StatusNotFound, "NoSuchKey", "The specified key does not exist."}
		}
		etag := obj.Metadata[etagMetaKey]
		if etag == "" {
			etag = hex.EncodeToString(obj.Hash)
		}
		if !etagMatches(ifMatch, etag) {
			return failed
		}
	}
	return nil
}

func isNoSuchKey(err error) bool {
	var ge gofakes3.Error
	return errors.As(err, &ge) && ge.ErrorCode() == gofakes3.ErrNoSuchKey
}

// filesReader reads files one after the other, opening each only when the
// previous one is done, so a 10000-part object needs one descriptor.
type filesReader struct {
	files []string
	cur   *os.File
}

func (r *filesReader) Read(p []byte) (int, error) {
	for {
		if r.cur == nil {
			if len(r.files) == 0 {
				return 0, io.EOF
			}
			f, err := os.Open(r.files[0])
			if err != nil {
				return 0, err
			}
			r.cur, r.files = f, r.files[1:]
		}
		n, err := r.cur.Read(p)
		if errors.Is(err, io.EOF) {
			r.cur.Close()
			r.cur = nil
			if n == 0 {
				continue
			}
			err = nil
		}
		return n, err
	}
}

func (r *filesReader) Close() error {
	if r.cur != nil {
		return r.cur.Close()
	}
	return nil
}
