package sealstore

import (
	"context"
	"fmt"

	"github.com/s3seal/s3seal/crypto"
)

// partChecksums returns the kept checksums of the part a read by part
// number selects (rng.Part, counted in order as ResolveRange counts them):
// a multipart object's part checksums from its sealed manifest, read
// again when the cached one lacks them (the manifest cache keeps none),
// or a single-PUT object's own checksums for part 1. A part number
// ResolveRange refuses gets nil: its error is that one's.
func (s *Store) partChecksums(ctx context.Context, bucket, key string, info ObjectInfo, dk *crypto.DataKey, part int) (map[string]string, error) {
	if info.manifest == nil {
		if part == 1 {
			return info.Checksums, nil
		}
		return nil, nil
	}
	if part < 1 || part > len(info.manifest.Parts) {
		return nil, nil
	}
	if cs := info.manifest.Parts[part-1].Checksums; len(cs) > 0 {
		return cs, nil
	}
	m, err := s.loadManifest(ctx, bucket, key, dk, info.backendETag, info.backendSize)
	if err != nil {
		return nil, err
	}
	if len(m.Parts) != len(info.manifest.Parts) {
		return nil, integrityErr(bucket, key, fmt.Errorf("the manifest read again has %d parts, not %d", len(m.Parts), len(info.manifest.Parts)))
	}
	return m.Parts[part-1].Checksums, nil
}
