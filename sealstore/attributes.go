package sealstore

import (
	"context"

	"github.com/s3seal/s3seal/crypto"
)

// ObjectPart is one part of a multipart object in plaintext terms, as
// GetObjectAttributes lists it.
type ObjectPart struct {
	PartNumber int
	Size       int64 // plaintext size
	// Checksums are the part's flexible checksums kept in the manifest
	// (lower-case algorithm -> value): the upload's algorithm, else the
	// default CRC64NVME every part keeps.
	Checksums map[string]string
}

// Attributes returns the object's plaintext description and, for a
// multipart object, its parts from the sealed manifest (nil for a
// single-part object), of one version ("" the current one) read as
// HeadVersion reads it: an answer naming another version than the one
// asked for is refused, and a delete marker is the backend's error. The
// manifest cache keeps no per-part checksums, so when any part lacks them
// there the manifest is read again.
//
// The client's customer key ck is checked as Stat checks it, against the
// very version described (one backend read): an object sealed with a
// customer key is described only to a client that has it.
func (s *Store) Attributes(ctx context.Context, bucket, key, versionID string, ck *crypto.CustomerKey) (ObjectInfo, []ObjectPart, error) {
	if err := CheckKey(key); err != nil {
		return ObjectInfo{}, nil, err
	}
	bi, err := s.headObject(ctx, bucket, key, versionID)
	if err != nil {
		return ObjectInfo{}, nil, err
	}
	info, dk, err := s.describe(ctx, bucket, bi, false)
	if err != nil {
		return info, nil, err
	}
	switch {
	case !info.Encrypted && ck != nil:
		return ObjectInfo{}, nil, customerKeyNotApplicable()
	case info.Encrypted:
		if _, err := contentKey(info, dk, ck); err != nil {
			return ObjectInfo{}, nil, err
		}
	}
	if info.manifest == nil {
		return info, nil, nil
	}
	m := *info.manifest
	for _, p := range m.Parts {
		if len(p.Checksums) == 0 {
			if m, err = s.loadManifest(ctx, bucket, key, dk, info.backendETag, info.backendSize); err != nil {
				return info, nil, err
			}
			break
		}
	}
	parts := make([]ObjectPart, len(m.Parts))
	for i, p := range m.Parts {
		parts[i] = ObjectPart{PartNumber: int(p.Stream.Part), Size: p.PlainSize, Checksums: p.Checksums}
	}
	return info, parts, nil
}
