package sealstore

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/s3seal/s3seal/backend"
	"github.com/s3seal/s3seal/crypto"
)

// GCOptions configure a garbage collection of one bucket.
type GCOptions struct {
	// MinAge leaves alone anything younger: a manifest is written just
	// before its completion, upload state before its first part. 0 takes
	// everything, safe only while no s3seal serves the bucket.
	MinAge time.Duration
	// Delete removes what was found; false only reports (a dry run).
	Delete bool
	// Now is the clock. Default time.Now.
	Now func() time.Time
	// Examined, when set, is called once for each entry a step has
	// looked at (a manifest, an upload's state object, a backend upload,
	// a probe, a key's versions), from GC's goroutine: a count of the
	// work done, for a progress display.
	Examined func()
}

// Garbage is one thing GC found that nothing refers to.
type Garbage struct {
	Kind     string // "manifest", "upload-state", "upload", "probe" or "bucket-doc"
	Key      string // the state object, or the upload's object key
	UploadID string // for "upload"
	Reason   string
	Removed  bool
	Err      error // why removing it failed, with Delete

	// versions are every version and delete marker of Key, when found
	// from a version listing (a key s3seal deleted in a versioned bucket).
	versions []backend.VersionEntry
}

// GC finds what s3seal left in a bucket that nothing refers to any more —
// normally only after a crash or a lost connection between two steps — and
// with opt.Delete removes it:
//
//   - manifests whose object is gone or is another object now;
//   - upload state whose backend upload is gone (completed or aborted
//     without the state being deleted);
//   - backend uploads without upload state (s3seal stopped between
//     creating the upload and writing its state), which are aborted;
//   - scratch objects and uploads of a rewrap probe (probePrefix) that a
//     killed run or a failed clean-up left;
//   - in a versioned bucket, the versions and delete markers of what
//     s3seal deleted there (gcHidden), by the same rules.
//
// In a versioned bucket it removes an object by deleting each of its
// versions and delete markers by id (removeVersions): a plain delete would
// only add a marker. It never touches client objects, and anything
// younger than MinAge.
func (s *Store) GC(ctx context.Context, bucket string, opt GCOptions) ([]Garbage, error) {
	if opt.Now == nil {
		opt.Now = time.Now
	}
	versioned, err := s.bucketVersioned(ctx, bucket)
	if err != nil {
		return nil, err
	}
	steps := []gcStep{s.gcManifests, s.gcUploadState, s.gcUploads, s.gcProbes}
	if versioned {
		steps = append(steps, s.gcHidden)
	}
	found, err := s.findGarbage(ctx, bucket, opt.Now().Add(-opt.MinAge), opt.Examined, steps...)
	if err != nil || !opt.Delete {
		return found, err
	}
	return found, s.removeGarbage(ctx, bucket, found, versioned)
}

// gcStep looks for one kind of garbage older than cutoff, calling seen
// for each entry it looked at.
type gcStep func(ctx context.Context, bucket string, cutoff time.Time, seen func()) ([]Garbage, error)

// findGarbage runs the steps in order and collects what they found;
// seen (nil: none) is told of each entry a step looked at.
func (s *Store) findGarbage(ctx context.Context, bucket string, cutoff time.Time, seen func(), steps ...gcStep) ([]Garbage, error) {
	if seen == nil {
		seen = func() {}
	}
	var found []Garbage
	for _, step := range steps {
		g, err := step(ctx, bucket, cutoff, seen)
		if err != nil {
			return found, err
		}
		found = append(found, g...)
	}
	return found, nil
}

// removeGarbage aborts the uploads and deletes the objects found (in a
// versioned bucket every version of them), setting Removed or Err on
// each. One failure (a key the backend lists mangled, a race with a
// client, a locked version) does not stop the others.
func (s *Store) removeGarbage(ctx context.Context, bucket string, found []Garbage, versioned bool) error {
	var byVersion []*Garbage
	for i := range found {
		g := &found[i]
		switch {
		case g.Kind == "upload":
			g.Err = s.be.AbortMultipartUpload(ctx, bucket, g.Key, g.UploadID)
		case versioned:
			byVersion = append(byVersion, g)
		default:
			var res []backend.DeleteResult
			if res, g.Err = s.be.DeleteObjects(ctx, bucket, []string{g.Key}); g.Err == nil && len(res) == 1 && res[0].Code != "" {
				g.Err = &backend.Error{Op: "DeleteObjects", Code: res[0].Code, Message: res[0].Message}
			}
		}
	}
	s.removeVersions(ctx, bucket, byVersion)
	var errs []error
	for i := range found {
		g := &found[i]
		if g.Err != nil {
			errs = append(errs, fmt.Errorf("%s %s: %w", g.Kind, g.Key, g.Err))
			continue
		}
		g.Removed = true
	}
	return errors.Join(errs...)
}

// gcManifests finds manifests nothing will read: their upload is over, so
// no completion can use them any more, and the object at their key is not
// made of their parts (it is gone, or another object, or this upload's
// object made of other parts whose own manifest is there).
func (s *Store) gcManifests(ctx context.Context, bucket string, cutoff time.Time, seen func()) ([]Garbage, error) {
	var found []Garbage
	err := s.listAll(ctx, bucket, manifestsPrefix, func(e backend.ListEntry) error {
		seen()
		if e.LastModified.After(cutoff) {
			return nil
		}
		if _, _, ok := splitManifestKey(e.Key); !ok {
			found = append(found, Garbage{Kind: "manifest", Key: e.Key, Reason: "not named by an object id and an ETag"})
			return nil
		}
		mi, err := s.be.HeadObject(ctx, bucket, e.Key)
		if backend.IsNotFound(err) {
			return nil
		}
		if err != nil {
			return err
		}
		why, err := s.manifestGarbage(ctx, bucket, e.Key, mi.Meta)
		if err != nil || why == "" {
			return err
		}
		found = append(found, Garbage{Kind: "manifest", Key: e.Key, Reason: why})
		return nil
	})
	return found, err
}

// manifestGarbage says why the manifest mkey, whose metadata is meta, is
// garbage, or "" while something may still read it: while its upload
// lives, or while a version of its object (current or not) is made of its
// parts.
func (s *Store) manifestGarbage(ctx context.Context, bucket, mkey string, meta map[string]string) (string, error) {
	oid, name, ok := splitManifestKey(mkey)
	if !ok {
		return "not named by an object id and an ETag", nil
	}
	key, kerr := b64url.DecodeString(meta[metaKey])
	id, ierr := b64url.DecodeString(meta[metaUploadID])
	if kerr != nil || ierr != nil || len(key) == 0 {
		return "names no object key or upload", nil
	}
	// The upload first: while it lives, a completion may still make an
	// object of this manifest's parts; once it is over, none can, and
	// what the key holds is final for this oid.
	_, err := s.be.ListParts(ctx, backend.ListPartsInput{Bucket: bucket, Key: string(key), UploadID: string(id), MaxParts: 1})
	switch {
	case err == nil:
		return "", nil
	case backend.ErrorCode(err) != "NoSuchUpload" && !backend.IsNotFound(err):
		return "", err
	}
	bi, err := s.be.HeadObject(ctx, bucket, string(key))
	if err != nil && !backend.IsNotFound(err) {
		return "", err
	}
	if err == nil {
		env, enc, perr := crypto.ParseMetadata(bi.Meta)
		if perr == nil && enc && env.Multipart && env.OID == [crypto.OIDSize]byte(oid) {
			etag := strings.Trim(bi.ETag, `"`)
			if etag == name {
				return "", nil // the object's own
			}
			// Another part list of the object's upload: garbage once
			// the object's own manifest is there to be read instead.
			if _, err := s.be.HeadObject(ctx, bucket, manifestKey(env.OID, etag)); err != nil {
				if backend.IsNotFound(err) {
					err = nil
				}
				return "", err
			}
			// Unless an older version (before a rewrap, say) is made of them.
			if kept, err := s.versionWithETag(ctx, bucket, string(key), name); err != nil || kept {
				return "", err
			}
			return "the object at " + string(key) + " is made of other parts", nil
		}
	}
	// In a versioned bucket an older version may be made of them.
	if kept, err := s.versionWithETag(ctx, bucket, string(key), name); err != nil || kept {
		return "", err
	}
	return "its upload is over and no version at " + string(key) + " is made of its parts", nil
}

func (s *Store) gcUploadState(ctx context.Context, bucket string, cutoff time.Time, seen func()) ([]Garbage, error) {
	var found []Garbage
	var cur string // the upload prefix being looked at, and whether it is dead
	dead := false
	err := s.listAll(ctx, bucket, uploadsPrefix, func(e backend.ListEntry) error {
		seen()
		rest := strings.TrimPrefix(e.Key, uploadsPrefix)
		dir, _, _ := strings.Cut(rest, "/")
		prefix := uploadsPrefix + dir + "/"
		if prefix != cur {
			cur = prefix
			var err error
			if dead, err = s.uploadGone(ctx, bucket, prefix, cutoff); err != nil {
				return err
			}
		}
		if dead && !e.LastModified.After(cutoff) {
			found = append(found, Garbage{Kind: "upload-state", Key: e.Key, Reason: "its upload is gone"})
		}
		return nil
	})
	return found, err
}

// uploadGone reports whether the upload whose state lives under prefix no
// longer exists at the backend (or its state names none), and the state is
// older than cutoff.
func (s *Store) uploadGone(ctx context.Context, bucket, prefix string, cutoff time.Time) (bool, error) {
	info, err := s.be.HeadObject(ctx, bucket, prefix+infoName)
	if backend.IsNotFound(err) {
		return true, nil // records without an info object belong to no upload
	}
	if err != nil {
		return false, err
	}
	if info.LastModified.After(cutoff) {
		return false, nil
	}
	key, kerr := b64url.DecodeString(info.Meta[metaKey])
	id, ierr := b64url.DecodeString(info.Meta[metaUploadID])
	if kerr != nil || ierr != nil || len(key) == 0 || uploadPrefix(bucket, string(key), string(id)) != prefix {
		return true, nil
	}
	_, err = s.be.ListParts(ctx, backend.ListPartsInput{Bucket: bucket, Key: string(key), UploadID: string(id), MaxParts: 1})
	if backend.ErrorCode(err) == "NoSuchUpload" {
		return true, nil
	}
	return false, err
}

// gcUploads finds backend uploads that no upload state names, and those of
// copies the store was making when their s3seal stopped. It goes by
// upload id, never by the key the backend lists: some stores list a key
// they cannot put in XML (a carriage return) mangled.
func (s *Store) gcUploads(ctx context.Context, bucket string, cutoff time.Time, seen func()) ([]Garbage, error) {
	stated, copies := map[string]bool{}, map[string]bool{}
	err := s.listAll(ctx, bucket, uploadsPrefix, func(e backend.ListEntry) error {
		seen()
		if !strings.HasSuffix(e.Key, "/"+infoName) {
			return nil
		}
		info, err := s.be.HeadObject(ctx, bucket, e.Key)
		if backend.IsNotFound(err) {
			return nil
		}
		if err != nil {
			return err
		}
		id, err := b64url.DecodeString(info.Meta[metaUploadID])
		if err != nil {
			return nil
		}
		if info.Meta[metaStoreCopy] == "1" && !e.LastModified.After(cutoff) {
			// A copy the store was making when its s3seal stopped: no
			// client knows the upload, so none will complete or abort
			// it. Only its sealed settings say so (a store could mark any
			// upload in the clear).
			key, kerr := b64url.DecodeString(info.Meta[metaKey])
			if kerr == nil {
				if u, err := s.readUpload(ctx, bucket, string(key), string(id)); err == nil && u.storeCopy {
					copies[string(id)] = true
					return nil
				}
			}
		}
		stated[string(id)] = true
		return nil
	})
	if err != nil {
		return nil, err
	}
	var found []Garbage
	in := backend.ListUploadsInput{Bucket: bucket}
	for {
		out, err := s.be.ListMultipartUploads(ctx, in)
		if err != nil {
			return found, err
		}
		for _, u := range out.Uploads {
			seen()
			if u.Initiated.After(cutoff) || stated[u.UploadID] {
				continue
			}
			if strings.HasPrefix(u.Key, probePrefix) {
				found = append(found, Garbage{Kind: "upload", Key: u.Key, UploadID: u.UploadID, Reason: "a rewrap probe's upload"})
				continue
			}
			if strings.HasPrefix(u.Key, ReservedPrefix) {
				continue
			}
			if copies[u.UploadID] {
				found = append(found, Garbage{Kind: "upload", Key: u.Key, UploadID: u.UploadID, Reason: "a copy the store was making when its s3seal stopped"})
				continue
			}
			found = append(found, Garbage{Kind: "upload", Key: u.Key, UploadID: u.UploadID, Reason: "no s3seal state: its parts can never be read"})
		}
		if !out.IsTruncated {
			return found, nil
		}
		in.KeyMarker, in.UploadIDMarker = out.NextKeyMarker, out.NextUploadIDMarker
	}
}

// gcProbes finds the scratch objects of rewrap probes older than cutoff.
func (s *Store) gcProbes(ctx context.Context, bucket string, cutoff time.Time, seen func()) ([]Garbage, error) {
	var found []Garbage
	err := s.listAll(ctx, bucket, probePrefix, func(e backend.ListEntry) error {
		seen()
		if !e.LastModified.After(cutoff) {
			found = append(found, Garbage{Kind: "probe", Key: e.Key, Reason: "a rewrap probe's scratch object"})
		}
		return nil
	})
	return found, err
}
