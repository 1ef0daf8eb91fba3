package sealstore

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/s3seal/s3seal/backend"
	"github.com/s3seal/s3seal/crypto"
)

// ListedPart is one part in a ListParts answer, in plaintext terms.
type ListedPart struct {
	PartNumber   int
	ETag         string
	Size         int64
	LastModified time.Time
	Checksums    map[string]string
}

// PartsPage is one page of ListParts.
type PartsPage struct {
	Parts                           []ListedPart
	IsTruncated                     bool
	NextMarker                      int
	ChecksumAlgorithm, ChecksumType string
}

// ListParts lists the parts of an upload after part number marker, at most
// maxParts (0 lists none, but says whether there are more), with the
// plaintext sizes and the ETags UploadPart answered.
func (s *Store) ListParts(ctx context.Context, bucket, key, uploadID string, marker, maxParts int) (PartsPage, error) {
	u, err := s.loadUpload(ctx, bucket, key, uploadID)
	if err != nil {
		return PartsPage{}, err
	}
	maxParts = max(0, min(maxParts, 1000))
	cur, parts, more, err := s.partsPage(ctx, u, marker, maxParts)
	if err != nil {
		return PartsPage{}, err
	}
	page := PartsPage{ChecksumAlgorithm: u.checksumAlg, ChecksumType: u.checksumType, IsTruncated: more}
	for _, p := range parts {
		r := cur[uint32(p.PartNumber)]
		page.Parts = append(page.Parts, ListedPart{PartNumber: int(p.PartNumber), ETag: fmt.Sprintf("%x", r.PlainMD5),
			Size: r.PlainSize, LastModified: p.LastModified, Checksums: r.Checksums})
		page.NextMarker = int(p.PartNumber)
	}
	return page, nil
}

// partsPage pairs the parts of one ListParts page: the backend's parts
// after marker that have a record, in order, reading the records of at most
// maxParts parts at a time (more only when a part's records turn out not
// to match it), never the whole upload's. more says whether a part with a
// record follows the page.
func (s *Store) partsPage(ctx context.Context, u *upload, marker, maxParts int) (cur map[uint32]crypto.PartRecord, parts []backend.Part, more bool, err error) {
	all, err := s.backendParts(ctx, u)
	if err != nil {
		return nil, nil, false, err
	}
	refs, _, err := s.listRecords(ctx, u)
	if err != nil {
		return nil, nil, false, err
	}
	var todo []backend.Part
	for _, p := range all {
		if int(p.PartNumber) > marker && len(refs[uint32(p.PartNumber)]) > 0 {
			todo = append(todo, p)
		}
	}
	slices.SortFunc(todo, func(a, b backend.Part) int { return int(a.PartNumber - b.PartNumber) })
	cur = map[uint32]crypto.PartRecord{}
	for len(todo) > 0 && len(parts) < maxParts {
		batch := todo[:min(len(todo), maxParts-len(parts))]
		todo = todo[len(batch):]
		nums := make([]uint32, len(batch))
		for i, p := range batch {
			nums[i] = uint32(p.PartNumber)
		}
		recs, err := s.openRecords(ctx, u, refs, nums)
		if err != nil {
			return nil, nil, false, err
		}
		pairRecords(cur, batch, recs)
		for _, p := range batch {
			if _, ok := cur[uint32(p.PartNumber)]; ok {
				parts = append(parts, p)
			}
		}
	}
	return cur, parts, len(todo) > 0, nil
}
