package embedded

import (
	"crypto/sha256"
	"encoding/hex"
	"hash/fnv"
	"os"
	"path"
	"strings"
	"time"

	"github.com/spf13/afero"
)

// maxFileName is the longest file name (one path segment) the file systems
// the embedded store runs on accept (NAME_MAX on Linux, most others).
const maxFileName = 255

// s3afero keeps an object's metadata in one flat directory per bucket, in
// a file named after the whole object name: "/" and "\" become "_" and a
// "-" and the hex FNV-128a hash of the name are appended (33 bytes). An
// object name longer than 222 bytes thus overflows maxFileName although
// each of its segments fits. metaNameFs sits under s3afero's metadata
// directory and gives such files a name of fixed length instead (see
// metaFile); shorter names, the only ones that could be stored before,
// keep the layout of plain gofakes3.
type metaNameFs struct{ afero.Fs }

// metaFile maps a path in the metadata directory ("<bucket>/<flat name>")
// to the file that holds it. A name over maxFileName becomes
// "long-<sha256 of the name>.json": a flat name always ends in "-" and 32
// hex digits, so the two kinds never meet.
func metaFile(p string) string {
	dir, base := path.Split(p)
	if len(base) <= maxFileName {
		return p
	}
	sum := sha256.Sum256([]byte(base))
	return dir + "long-" + hex.EncodeToString(sum[:]) + ".json"
}

// flatMetaName is the name s3afero gives the metadata file of object (see
// metaNameFs); TestMetaNameMatchesS3afero holds it to gofakes3's.
func flatMetaName(object string) string {
	h := fnv.New128a()
	h.Write([]byte(object))
	flat := strings.NewReplacer("/", "_", "\\", "_").Replace(object)
	return flat + "-" + hex.EncodeToString(h.Sum(nil))
}

// metaPath is the path, relative to the embedded store's root, of the
// file holding the metadata of object in bucket.
func metaPath(bucket, object string) string {
	return path.Join("metadata", metaFile(path.Join(bucket, flatMetaName(object))))
}

// storedMeta is the JSON form of s3afero's Metadata.
type storedMeta struct {
	File    string
	ModTime time.Time
	Size    int64
	Hash    []byte
	Meta    map[string]string
}

func (f metaNameFs) Create(name string) (afero.File, error) { return f.Fs.Create(metaFile(name)) }
func (f metaNameFs) Mkdir(name string, perm os.FileMode) error {
	return f.Fs.Mkdir(metaFile(name), perm)
}
func (f metaNameFs) MkdirAll(name string, perm os.FileMode) error {
	return f.Fs.MkdirAll(metaFile(name), perm)
}
func (f metaNameFs) Open(name string) (afero.File, error) { return f.Fs.Open(metaFile(name)) }
func (f metaNameFs) OpenFile(name string, flag int, perm os.FileMode) (afero.File, error) {
	return f.Fs.OpenFile(metaFile(name), flag, perm)
}
func (f metaNameFs) Remove(name string) error    { return f.Fs.Remove(metaFile(name)) }
func (f metaNameFs) RemoveAll(name string) error { return f.Fs.RemoveAll(metaFile(name)) }
func (f metaNameFs) Rename(oldname, newname string) error {
	return f.Fs.Rename(metaFile(oldname), metaFile(newname))
}
func (f metaNameFs) Stat(name string) (os.FileInfo, error) { return f.Fs.Stat(metaFile(name)) }
func (f metaNameFs) Chmod(name string, mode os.FileMode) error {
	return f.Fs.Chmod(metaFile(name), mode)
}
func (f metaNameFs) Chown(name string, uid, gid int) error {
	return f.Fs.Chown(metaFile(name), uid, gid)
}
func (f metaNameFs) Chtimes(name string, atime, mtime time.Time) error {
	return f.Fs.Chtimes(metaFile(name), atime, mtime)
}
