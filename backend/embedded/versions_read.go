package embedded

import (
	"io"
	"os"
	"path"
	"sort"
	"strings"
	"time"

	"github.com/johannesboyne/gofakes3"
	"github.com/spf13/afero"

	"github.com/s3seal/s3seal/backend"
)

// errMarker is a version asked for by id that is a delete marker.
type errMarker struct{ e *verEntry }

func (e *errMarker) Error() string { return "version " + e.e.VersionID + " is a delete marker" }

// getVersion opens version id of key ("" the current object), the range
// rng of it when not nil. A delete marker asked for by id is *errMarker; a
// version that does not exist is NoSuchVersion, a malformed id
// InvalidArgument. The body is streamed from its file; the caller closes
// Contents.
func (b *fixedBackend) getVersion(bucket, key, id string, rng *gofakes3.ObjectRangeRequest) (*gofakes3.Object, error) {
	if id == "" {
		return b.GetObject(bucket, key, rng)
	}
	if !backend.WellFormedVersionID(id) {
		return nil, errInvalidVersion()
	}
	if ok, err := b.BucketExists(bucket); err != nil || !ok {
		return nil, gofakes3.BucketNotFound(bucket)
	}
	if !validKey(key) || !validVersionID(id) {
		return nil, errNoSuchVersion()
	}
	b.tree.RLock()
	defer b.tree.RUnlock()
	c, err := b.currentOf(bucket, key)
	if err != nil {
		return nil, err
	}
	if c.exists && c.id == id {
		obj, err := b.MultiBucketBackend.GetObject(bucket, fsKey(key), rng)
		obj, err = b.found(bucket, obj, key, err)
		if err == nil {
			obj.VersionID = gofakes3.VersionID(id)
		}
		return obj, err
	}
	e, err := b.readEntry(b.entryPath(bucket, key, id, ".json"))
	if err != nil {
		if os.IsNotExist(err) {
			return nil, errNoSuchVersion()
		}
		return nil, err
	}
	if e.DeleteMarker {
		return nil, &errMarker{e}
	}
	f, err := b.fs.Open(b.entryPath(bucket, key, id, ".data"))
	if err != nil {
		return nil, err
	}
	r, err := rng.Range(e.Size)
	if err != nil {
		f.Close()
		return nil, err
	}
	var body io.ReadCloser = f
	if r != nil {
		if _, err := f.Seek(r.Start, io.SeekStart); err != nil {
			f.Close()
			return nil, err
		}
		body = struct {
			io.Reader
			io.Closer
		}{io.LimitReader(f, r.Length), f}
	}
	meta := cleanMeta(e.Meta)
	return &gofakes3.Object{Name: key, Metadata: meta, Size: e.Size, Contents: body, Hash: e.Hash,
		Range: r, VersionID: gofakes3.VersionID(id)}, nil
}

// latestMarker is the delete marker that is key's latest version, or nil.
func (b *fixedBackend) latestMarker(bucket, key string) *verEntry {
	if !validKey(key) {
		return nil
	}
	b.tree.RLock()
	defer b.tree.RUnlock()
	if c, err := b.currentOf(bucket, key); err != nil || c.exists {
		return nil
	}
	es, _ := b.entries(bucket, key)
	if len(es) > 0 && es[0].DeleteMarker {
		return es[0]
	}
	return nil
}

// versionRow is one version or delete marker in a version listing.
type versionRow struct {
	Key, VersionID string
	seq            int64
	IsLatest       bool
	DeleteMarker   bool
	Size           int64
	ETag           string
	LastModified   time.Time
	StorageClass   string
}

// allVersions lists every version and delete marker of bucket under
// prefix, in S3's order: by key, newest first. Cost: every object and
// version record under the prefix is read, for each page (the records are
// kept by the hash of their key, in no order a page could seek in).
func (b *fixedBackend) allVersions(bucket, prefix string) ([]versionRow, error) {
	b.tree.RLock()
	defer b.tree.RUnlock()
	if !b.bucketDir(bucket) {
		return nil, gofakes3.BucketNotFound(bucket)
	}
	var rows []versionRow
	currentID := map[string]string{}
	err := b.eachKey(bucket, prefix, func(key string) bool {
		c, err := b.currentOf(bucket, key)
		if err != nil || !c.exists {
			return true // removed meanwhile
		}
		currentID[key] = c.id
		rows = append(rows, versionRow{Key: key, VersionID: c.id, seq: c.seq, IsLatest: true, Size: c.meta.Size,
			ETag: storedETag(c.meta), LastModified: c.meta.ModTime, StorageClass: c.meta.Meta["X-Amz-Storage-Class"]})
		return true
	})
	if err != nil {
		return nil, err
	}
	root := b.versionsRoot(bucket)
	dirs, _ := afero.ReadDir(b.fs, root)
	for _, d := range dirs {
		if !d.IsDir() {
			continue
		}
		fis, _ := afero.ReadDir(b.fs, path.Join(root, d.Name()))
		for _, fi := range fis {
			if !strings.HasSuffix(fi.Name(), ".json") {
				continue
			}
			e, err := b.readEntry(path.Join(root, d.Name(), fi.Name()))
			if err != nil || !strings.HasPrefix(e.Key, prefix) {
				continue
			}
			if id, ok := currentID[e.Key]; ok && id == e.VersionID {
				continue // an interrupted archive's leftover (archiveLocked)
			}
			row := versionRow{Key: e.Key, VersionID: e.VersionID, seq: e.Seq, DeleteMarker: e.DeleteMarker,
				LastModified: e.ModTime}
			if !e.DeleteMarker {
				row.Size, row.ETag, row.StorageClass = e.Size, e.ETag(), e.Meta["X-Amz-Storage-Class"]
			}
			rows = append(rows, row)
		}
	}
	sort.SliceStable(rows, func(i, j int) bool {
		a, c := rows[i], rows[j]
		if a.Key != c.Key {
			return a.Key < c.Key
		}
		if a.IsLatest != c.IsLatest {
			return a.IsLatest
		}
		return a.seq > c.seq
	})
	for i := range rows {
		rows[i].IsLatest = i == 0 || rows[i-1].Key != rows[i].Key
	}
	return rows, nil
}

// versionPage is one page of a version listing.
type versionPage struct {
	Rows                             []versionRow
	Prefixes                         []string
	Truncated                        bool
	NextKeyMarker, NextVersionMarker string
}

// pageVersions cuts one page out of rows (allVersions of prefix) as S3
// does: after keyMarker (after its version versionMarker, when set), keys
// that contain delimiter after prefix rolled up into common prefixes, at
// most maxKeys versions and prefixes together.
func pageVersions(rows []versionRow, prefix, delimiter, keyMarker, versionMarker string, maxKeys int) versionPage {
	var p versionPage
	i := 0
	for i < len(rows) && rows[i].Key < keyMarker {
		i++
	}
	if keyMarker != "" {
		j := i
		for j < len(rows) && rows[j].Key == keyMarker {
			j++
		}
		skipTo := j // no version marker: past every version of the key
		if versionMarker != "" {
			for k := i; k < j; k++ {
				if rows[k].VersionID == versionMarker {
					skipTo = k + 1
					break
				}
			}
		}
		i = skipTo
	}
	n, lastPrefix := 0, ""
	lastKey, lastVersion := "", ""
	for ; i < len(rows); i++ {
		r := rows[i]
		cp := ""
		if delimiter != "" {
			if k := strings.Index(r.Key[len(prefix):], delimiter); k >= 0 {
				cp = r.Key[:len(prefix)+k+len(delimiter)]
				if cp == lastPrefix || (keyMarker != "" && cp <= keyMarker) {
					continue
				}
			}
		}
		if n >= maxKeys {
			p.Truncated = true
			p.NextKeyMarker, p.NextVersionMarker = lastKey, lastVersion
			break
		}
		n++
		if cp != "" {
			lastPrefix = cp
			p.Prefixes = append(p.Prefixes, cp)
			lastKey, lastVersion = cp, ""
			continue
		}
		p.Rows = append(p.Rows, r)
		lastKey, lastVersion = r.Key, r.VersionID
	}
	return p
}
