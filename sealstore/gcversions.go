package sealstore

import (
	"context"
	"strings"
	"time"

	"github.com/s3seal/s3seal/backend"
)

// In a versioned bucket (Enabled, or Suspended after having been enabled)
// deleting a key only hides it behind a delete marker: its versions stay,
// and so would everything s3seal ever wrote under ReservedPrefix, which no
// client can see or remove. So there gc and DeleteBucket delete what they
// remove by version id, every version and delete marker of the key, and
// they also look at the keys s3seal itself deleted (the latest entry a
// delete marker), by the same rules as the current ones.

// maxDeleteIDs is S3's limit of keys in one DeleteObjects.
const maxDeleteIDs = 1000

// bucketVersioned reports whether the bucket keeps versions, or may still
// hold some (Suspended). A store that does not know versioning keeps none.
func (s *Store) bucketVersioned(ctx context.Context, bucket string) (bool, error) {
	st, err := s.be.GetBucketVersioning(ctx, bucket)
	if err != nil {
		if backend.ErrorCode(err) == "NotImplemented" {
			return false, nil
		}
		return false, err
	}
	return st != "", nil
}

// gcHidden finds the keys under ReservedPrefix whose latest entry is a
// delete marker older than cutoff (s3seal deleted them, the versions
// stay), with every version and marker they have:
//
//   - upload state and rewrap probes: s3seal reads only current objects
//     there, so a deleted one is never read again;
//   - manifests, when no upload or version needs them (manifestGarbage,
//     on the newest version's metadata); one still needed is left alone.
func (s *Store) gcHidden(ctx context.Context, bucket string, cutoff time.Time, seen func()) ([]Garbage, error) {
	var found []Garbage
	var group []backend.VersionEntry // one key's entries, latest first
	flush := func() error {
		if len(group) == 0 {
			return nil
		}
		g, ok, err := s.judgeHidden(ctx, bucket, cutoff, group)
		group = nil
		seen()
		if ok {
			found = append(found, g)
		}
		return err
	}
	in := backend.ListVersionsInput{Bucket: bucket, Prefix: ReservedPrefix}
	for {
		out, err := s.be.ListObjectVersions(ctx, in)
		if err != nil {
			return found, err
		}
		for _, e := range out.Entries {
			if len(group) > 0 && group[0].Key != e.Key {
				if err := flush(); err != nil {
					return found, err
				}
			}
			group = append(group, e)
		}
		if !out.IsTruncated || out.NextKeyMarker == "" {
			return found, flush()
		}
		in.KeyMarker, in.VersionIDMarker = out.NextKeyMarker, out.NextVersionIDMarker
	}
}

// judgeHidden decides about one key's entries (latest first).
func (s *Store) judgeHidden(ctx context.Context, bucket string, cutoff time.Time, vs []backend.VersionEntry) (Garbage, bool, error) {
	latest := vs[0]
	if !latest.IsLatest || !latest.DeleteMarker || latest.LastModified.After(cutoff) {
		return Garbage{}, false, nil
	}
	g := Garbage{Key: latest.Key, versions: vs}
	switch {
	case strings.HasPrefix(g.Key, probePrefix):
		g.Kind, g.Reason = "probe", "a rewrap probe's scratch object, deleted; its versions remain"
		return g, true, nil
	case strings.HasPrefix(g.Key, BucketDocPrefix):
		g.Kind, g.Reason = "bucket-doc", "a bucket document s3seal deleted; its versions remain"
		return g, true, nil
	case strings.HasPrefix(g.Key, uploadsPrefix):
		g.Kind, g.Reason = "upload-state", "deleted by s3seal; its versions remain"
		return g, true, nil
	case !strings.HasPrefix(g.Key, manifestsPrefix):
		return Garbage{}, false, nil
	}
	g.Kind = "manifest"
	newest := ""
	for _, v := range vs {
		if !v.DeleteMarker {
			newest = v.VersionID
			break
		}
	}
	if newest == "" {
		g.Reason = "only delete markers are left"
		return g, true, nil
	}
	mi, err := s.be.HeadObjectVersion(ctx, bucket, g.Key, newest)
	if backend.IsNotFound(err) {
		return Garbage{}, false, nil // deleted meanwhile; the next run sees what is left
	}
	if err != nil {
		return Garbage{}, false, err
	}
	why, err := s.manifestGarbage(ctx, bucket, g.Key, mi.Meta)
	if err != nil || why == "" {
		return Garbage{}, false, err
	}
	g.Reason = "deleted, and " + why
	return g, true, nil
}

// removeVersions deletes every version and delete marker of each g.Key
// by id (those listed with it, else those there now), setting g.Err on
// failure. The versions go first, up to maxDeleteIDs a request whatever
// their keys; a key's markers only once every version of it is gone, so
// a version the store keeps (a locked one) stays hidden rather than
// becoming current again. Deleting by id never touches a version written
// after the listing; a version already gone is fine.
func (s *Store) removeVersions(ctx context.Context, bucket string, gs []*Garbage) {
	type item struct {
		id backend.ObjectID
		g  *Garbage
	}
	var data, markers []item
	for _, g := range gs {
		if g.versions == nil {
			if g.versions, g.Err = s.keyVersions(ctx, bucket, g.Key); g.Err != nil {
				continue
			}
		}
		for _, v := range g.versions {
			it := item{backend.ObjectID{Key: v.Key, VersionID: v.VersionID}, g}
			if v.DeleteMarker {
				markers = append(markers, it)
			} else {
				data = append(data, it)
			}
		}
	}
	del := func(items []item) {
		for len(items) > 0 {
			n := min(len(items), maxDeleteIDs)
			var sent []item
			var ids []backend.ObjectID
			for _, it := range items[:n] {
				if it.g.Err == nil { // the markers of a key whose version stays are kept
					sent, ids = append(sent, it), append(ids, it.id)
				}
			}
			items = items[n:]
			if len(ids) == 0 {
				continue
			}
			res, err := s.be.DeleteVersions(ctx, bucket, ids)
			for i, it := range sent {
				switch {
				case it.g.Err != nil:
				case err != nil:
					it.g.Err = err
				case i >= len(res):
					it.g.Err = &backend.Error{Op: "DeleteObjects", Code: "InternalError", Message: "backend did not report version " + it.id.VersionID}
				case res[i].Code != "" && res[i].Code != "NoSuchVersion" && res[i].Code != "NoSuchKey":
					it.g.Err = &backend.Error{Op: "DeleteObjects", Code: res[i].Code, Message: res[i].Message + " (version " + it.id.VersionID + ")"}
				}
			}
		}
	}
	del(data)
	del(markers)
}

// keyVersions lists every version and delete marker of key.
func (s *Store) keyVersions(ctx context.Context, bucket, key string) ([]backend.VersionEntry, error) {
	var vs []backend.VersionEntry
	in := backend.ListVersionsInput{Bucket: bucket, Prefix: key}
	for {
		out, err := s.be.ListObjectVersions(ctx, in)
		if err != nil {
			return nil, err
		}
		for _, v := range out.Entries {
			if v.Key > key {
				return vs, nil
			}
			if v.Key == key {
				vs = append(vs, v)
			}
		}
		if !out.IsTruncated || out.NextKeyMarker == "" {
			return vs, nil
		}
		in.KeyMarker, in.VersionIDMarker = out.NextKeyMarker, out.NextVersionIDMarker
	}
}
