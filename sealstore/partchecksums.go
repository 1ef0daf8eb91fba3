package sealstore

import (
	"context"
	"fmt"
	"strings"

	"github.com/s3seal/s3seal/crypto"
)

// compositeChecksums reports whether kept object checksums are COMPOSITE:
// a multipart checksum of part checksums, whose value ends in "-N".
func compositeChecksums(cs map[string]string) bool {
	for _, v := range cs {
		if strings.Contains(v, "-") {
			return true
		}
	}
	return false
}

// partChecksums returns the kept checksums of part n (counted in order, as
// ResolveRange counts them) of the multipart object info describes, from
// its sealed manifest, read again when the cached one lacks them (the
// manifest cache keeps none). A part number ResolveRange refuses, or a
// single-PUT object, gets nil.
func (s *Store) partChecksums(ctx context.Context, bucket, key string, info ObjectInfo, dk *crypto.DataKey, n int) (map[string]string, error) {
	if info.manifest == nil || n < 1 || n > len(info.manifest.Parts) {
		return nil, nil
	}
	if cs := info.manifest.Parts[n-1].Checksums; len(cs) > 0 {
		return cs, nil
	}
	m, err := s.loadManifest(ctx, bucket, key, dk, info.backendETag, info.backendSize)
	if err != nil {
		return nil, err
	}
	if len(m.Parts) != len(info.manifest.Parts) {
		return nil, integrityErr(bucket, key, fmt.Errorf("the manifest read again has %d parts, not %d", len(m.Parts), len(info.manifest.Parts)))
	}
	return m.Parts[n-1].Checksums, nil
}
