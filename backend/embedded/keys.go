package embedded

import (
	"errors"
	"fmt"
	"path"
	"strings"
	"syscall"

	"github.com/johannesboyne/gofakes3"
)

// How the embedded store maps S3 keys onto file paths (s3afero keeps an
// object "a/b" in the file buckets/<bucket>/a/b):
//
//   - A key ending in "/" (a directory marker, as rclone, the AWS console
//     and s3fs create them) is kept in the file dirMarkerName inside that
//     directory: "a/b/" is the file a/b/<dirMarkerName>. A key with a
//     segment named dirMarkerName is refused, so the mapping never aliases.
//   - Keys with an empty, "." or ".." segment (other than the final empty
//     one of a marker) would alias other paths: refused with InvalidArgument.
//   - A segment longer than a file name may be (255 bytes) is
//     KeyTooLongError.
//   - A file cannot also be a directory, so an object "a" and keys under
//     "a/" (objects or the marker "a/") cannot be held together: the later
//     PUT is refused with InvalidArgument naming that limit. Reading or
//     deleting "a/b" while "a" is an object finds no such key.
const dirMarkerName = ".s3seal-directory-marker"

// keyErr says why the embedded store cannot hold key, or nil.
func keyErr(key string) error {
	if len(key) > gofakes3.KeySizeLimit {
		return gofakes3.ErrorMessage(gofakes3.ErrKeyTooLong, "Your key is too long.")
	}
	base, _ := strings.CutSuffix(key, "/")
	if base == "" {
		return keyLimit(key, "the empty key and \"/\" cannot be stored")
	}
	if strings.ContainsRune(key, 0) {
		return keyLimit(key, "a file name cannot hold a NUL byte")
	}
	for _, seg := range strings.Split(base, "/") {
		switch {
		case seg == "" || seg == "." || seg == "..":
			return keyLimit(key, "a key with an empty, '.' or '..' path segment would alias another key's file")
		case seg == dirMarkerName:
			return keyLimit(key, "the path segment "+dirMarkerName+" is where it keeps directory markers")
		case len(seg) > 255:
			return gofakes3.ErrorMessage(gofakes3.ErrKeyTooLong,
				"Your key is too long for the embedded store: each '/'-separated segment of a key may have at most 255 bytes.")
		}
	}
	return nil
}

func keyLimit(key, why string) error {
	return gofakes3.ErrorMessage(gofakes3.ErrInvalidArgument,
		fmt.Sprintf("The embedded store cannot hold the key %q: %s. A backend object store can.", key, why))
}

// fsKey is the s3afero object name that holds key (keyErr(key) == nil).
func fsKey(key string) string {
	if strings.HasSuffix(key, "/") {
		return key + dirMarkerName
	}
	return key
}

// s3Key is the S3 key an s3afero object name holds.
func s3Key(name string) string {
	if base, ok := strings.CutSuffix(name, dirMarkerName); ok && (base == "" || strings.HasSuffix(base, "/")) {
		return base
	}
	return name
}

// checkConflict refuses to write the file fk of bucket when an ancestor
// is a file (an object whose key is a prefix of key) or fk is a
// directory (keys under it exist). The caller holds the key's lock.
func (b *fixedBackend) checkConflict(bucket, key, fk string) error {
	root := path.Join("buckets", bucket)
	parts := strings.Split(fk, "/")
	for i := 1; i < len(parts); i++ {
		anc := strings.Join(parts[:i], "/")
		st, err := b.fs.Stat(path.Join(root, anc))
		if err != nil {
			break
		}
		if !st.IsDir() {
			return conflictErr(key, anc)
		}
	}
	if st, err := b.fs.Stat(path.Join(root, fk)); err == nil && st.IsDir() {
		return keyLimit(key, fmt.Sprintf("keys under %q exist, and a key cannot be both an object and a prefix of other keys there (one file-system path)", key+"/"))
	}
	return nil
}

func conflictErr(key, object string) error {
	return keyLimit(key, fmt.Sprintf("the object %q exists, and a key cannot be both an object and a prefix of other keys there (one file-system path)", object))
}

// pathClash reports whether err is the file system refusing a path
// because a file stands where a directory is needed, or the reverse.
func pathClash(err error) bool {
	return errors.Is(err, syscall.ENOTDIR) || errors.Is(err, syscall.EISDIR)
}

// notAFile reports whether nothing can be stored at fk because the path is
// a directory (keys under it exist) or lies under a file (an object is a
// prefix of it): a delete of it deletes nothing, as S3's of a missing key.
func (b *fixedBackend) notAFile(bucket, fk string) bool {
	st, err := b.fs.Stat(path.Join("buckets", bucket, fk))
	return pathClash(err) || (err == nil && st.IsDir())
}
