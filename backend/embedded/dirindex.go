package embedded

import (
	"errors"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"

	"github.com/spf13/afero"
)

// The directory index: the sorted listings of the directories of the
// bucket tree (buckets/<bucket>/...), held in memory so that a listing
// page seeks to its marker instead of reading the whole bucket (listing.go).
//
//   - A directory's listing is read from disk the first time a listing
//     passes through it, and kept until something changes the directory.
//   - Every change to the bucket tree goes through the store's afero.Fs
//     (s3afero's writes and deletes, put.go's commits, versions.go's
//     renames), which is indexFs: after a call that can add or remove a
//     directory entry it drops the listings of the directories touched.
//     A listing read while such a change was under way is not kept
//     (fillers and droppers meet on the entry: see list), so no stale
//     listing outlives the change.
//   - Nothing is kept on disk: a restart, or a crash, starts from the
//     files. A change made to the data directory behind a running store
//     (by hand) is not seen by its listings until it restarts.
//   - The index holds at most maxIndexedBytes (its listings' paths and
//     names, with what Go spends on each entry and each directory); past
//     that it starts again empty, so its memory stays bounded whatever the
//     store holds. Counted in entries, a bound would not hold: an entry of
//     a deep tree of long names costs 700 bytes and more (the directory's
//     path, its name), one of short names about 40.
const maxIndexedBytes = 100 << 20

// What a held listing costs beside its strings, as measured
// (TestDirIndexMemoryBoundWithLongKeys): per directory (the map's entry,
// dirListing) and per entry (dirEnt, the allocation of its name).
const (
	dirCost = 128
	entCost = 32
)

// listingCost is what holding ents as dir's listing costs, in bytes.
func listingCost(dir string, ents []dirEnt) int {
	n := dirCost + len(dir)
	for _, e := range ents {
		n += entCost + len(e.rel)
	}
	return n
}

// dirEnt is one entry of a directory of the bucket tree. rel is the
// part of the S3 keys it holds after the directory's own prefix: a
// file's name, a subdirectory's name and "/" (the prefix of every key
// under it), "" for the directory's marker file (keys.go). Entries sort
// by rel, which is the order of the S3 keys they hold.
type dirEnt struct {
	rel string
	dir bool
}

// dirListing is a directory's entries, sorted by rel; ents is nil until
// the reader that made the entry has filled it (ready).
type dirListing struct {
	ents  []dirEnt
	cost  int // listingCost, once ready
	ready bool
}

// dirIndex is the cache of the bucket tree's directory listings, keyed by
// path under the store's root ("buckets/<bucket>/a/b").
type dirIndex struct {
	root string // the store's root on disk

	mu    sync.Mutex
	dirs  map[string]*dirListing
	held  int // bytes of ready listings (listingCost)
	limit int // most bytes held (maxIndexedBytes; tests lower it)

	// Work counters, for tests and benchmarks: entries read from disk,
	// entries a listing stepped through, objects a listing read.
	entriesRead    atomic.Int64
	entriesVisited atomic.Int64
	objectsRead    atomic.Int64
}

func newDirIndex(root string) *dirIndex {
	return &dirIndex{root: root, dirs: map[string]*dirListing{}, limit: maxIndexedBytes}
}

// list is the sorted listing of dir (a path under the root), read from
// disk unless held. A directory that does not exist is empty; one the
// disk did not list whole is an error (its keys are there all the same:
// a listing that went on without them would tell clients they were
// deleted).
func (x *dirIndex) list(dir string) ([]dirEnt, error) {
	x.mu.Lock()
	if l := x.dirs[dir]; l != nil && l.ready {
		x.mu.Unlock()
		return l.ents, nil
	}
	mine := &dirListing{}
	x.dirs[dir] = mine
	x.mu.Unlock()

	ents, err := x.read(dir)

	x.mu.Lock()
	defer x.mu.Unlock()
	if x.dirs[dir] != mine || err != nil {
		// Dropped by a change meanwhile (or replaced by another reader):
		// what was read may predate the change, so it is not kept; nor
		// is a listing the disk did not give whole.
		if x.dirs[dir] == mine {
			delete(x.dirs, dir)
		}
		return ents, err
	}
	cost := listingCost(dir, ents)
	if x.held+cost > x.limit {
		x.dirs = map[string]*dirListing{dir: mine}
		x.held = 0
	}
	mine.ents, mine.cost, mine.ready = ents, cost, true
	x.held += cost
	return ents, nil
}

// read lists dir from disk, sorted by rel: a directory that does not
// exist (or is a file) is empty; any other error is returned with what
// was read, not to be kept.
func (x *dirIndex) read(dir string) ([]dirEnt, error) {
	des, err := os.ReadDir(filepath.Join(x.root, filepath.FromSlash(dir)))
	if err != nil && (errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR)) {
		return nil, nil
	}
	ents := make([]dirEnt, 0, len(des))
	for _, de := range des {
		switch name := de.Name(); {
		case de.IsDir():
			ents = append(ents, dirEnt{rel: name + "/", dir: true})
		case name == dirMarkerName:
			ents = append(ents, dirEnt{rel: ""})
		default:
			ents = append(ents, dirEnt{rel: name})
		}
	}
	x.entriesRead.Add(int64(len(ents)))
	sort.Slice(ents, func(i, j int) bool { return ents[i].rel < ents[j].rel })
	return ents, err
}

// dropLocked forgets the listing of dir, if held.
func (x *dirIndex) dropLocked(dir string) {
	if l := x.dirs[dir]; l != nil {
		if l.ready {
			x.held -= l.cost
		}
		delete(x.dirs, dir)
	}
}

// changed forgets what a change to the entry p (a path under the root)
// may have made stale: the listing of the directory holding p and, when
// p is or was a directory, p's own. With subtree, also every listing
// under p (p removed or moved whole).
func (x *dirIndex) changed(p string, subtree bool) {
	if !inBuckets(p) {
		return
	}
	p = cleanPath(p)
	x.mu.Lock()
	defer x.mu.Unlock()
	x.dropLocked(path.Dir(p))
	x.dropLocked(p)
	if subtree {
		for d := range x.dirs {
			if strings.HasPrefix(d, p+"/") {
				x.dropLocked(d)
			}
		}
	}
}

// inBuckets reports whether p (a path under the root) is in the bucket
// tree.
func inBuckets(p string) bool {
	p = cleanPath(p)
	return p == "buckets" || strings.HasPrefix(p, "buckets/")
}

// cleanPath is p as the index keys it: slash-separated, relative to the
// root, cleaned.
func cleanPath(p string) string {
	return strings.TrimPrefix(path.Clean("/"+filepath.ToSlash(p)), "/")
}

// indexFs is the store's afero.Fs: it tells the index of every call that
// can add or remove a directory entry, after the call.
type indexFs struct {
	afero.Fs
	ix *dirIndex
}

func (f indexFs) Create(name string) (afero.File, error) {
	defer f.ix.changed(name, false)
	return f.Fs.Create(name)
}

func (f indexFs) OpenFile(name string, flag int, perm os.FileMode) (afero.File, error) {
	if flag&os.O_CREATE != 0 {
		defer f.ix.changed(name, false)
	}
	return f.Fs.OpenFile(name, flag, perm)
}

func (f indexFs) Mkdir(name string, perm os.FileMode) error {
	defer f.ix.changed(name, false)
	return f.Fs.Mkdir(name, perm)
}

// MkdirAll may create every directory up to name.
func (f indexFs) MkdirAll(name string, perm os.FileMode) error {
	defer func() {
		for p := cleanPath(name); p != "." && p != ""; p = path.Dir(p) {
			f.ix.changed(p, false)
		}
	}()
	return f.Fs.MkdirAll(name, perm)
}

func (f indexFs) Remove(name string) error {
	defer f.ix.changed(name, false)
	return f.Fs.Remove(name)
}

func (f indexFs) RemoveAll(name string) error {
	defer f.ix.changed(name, true)
	return f.Fs.RemoveAll(name)
}

// Rename: the store renames files into and out of the bucket tree; a
// directory moved (never done by the store itself) drops the listings
// under both names.
func (f indexFs) Rename(oldname, newname string) error {
	err := f.Fs.Rename(oldname, newname)
	if inBuckets(oldname) || inBuckets(newname) {
		st, serr := f.Fs.Stat(newname)
		tree := serr == nil && st.IsDir()
		f.ix.changed(oldname, tree)
		f.ix.changed(newname, tree)
	}
	return err
}

var _ afero.Fs = indexFs{}
