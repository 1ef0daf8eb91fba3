package sealstore

import (
	"context"
	"io"
	"slices"
	"strings"
	"sync"

	"golang.org/x/sync/errgroup"

	"github.com/s3seal/s3seal/backend"
	"github.com/s3seal/s3seal/crypto"
)

// recordRef is one part record object a listing of the upload state found:
// the record itself when it is in the key, or only the key of the object
// whose body holds it (inBody, see recordObject).
type recordRef struct {
	key    string
	part   uint32
	sealed []byte
	inBody bool
}

// listRecords lists the upload's state: the part records found, by part
// number, without reading any object's body, and every state key seen (for
// cleaning up). One listing request per 1000 records.
func (s *Store) listRecords(ctx context.Context, u *upload) (map[uint32][]recordRef, []string, error) {
	refs := map[uint32][]recordRef{}
	var keys []string
	in := backend.ListInput{Bucket: u.bucket, V2: true, Prefix: u.prefix}
	for {
		out, err := s.be.ListObjects(ctx, in)
		if err != nil {
			return nil, nil, err
		}
		for _, e := range out.Entries {
			keys = append(keys, e.Key)
			if part, sealed, inBody, ok := parseRecordKey(u.prefix, e.Key); ok {
				refs[part] = append(refs[part], recordRef{key: e.Key, part: part, sealed: sealed, inBody: inBody})
			}
		}
		if !out.IsTruncated || out.NextContinuationToken == "" {
			return refs, keys, nil
		}
		in.ContinuationToken = out.NextContinuationToken
	}
}

// openRecords opens the records of the given parts: those in a key at once,
// those in a body with one GET each, ListConcurrency at a time. A record
// that does not open (not this upload's, or damaged) names no part and is
// left out, as is one whose object went meanwhile (completed or aborted).
func (s *Store) openRecords(ctx context.Context, u *upload, refs map[uint32][]recordRef, parts []uint32) (map[uint32][]crypto.PartRecord, error) {
	recs := map[uint32][]crypto.PartRecord{}
	var mu sync.Mutex
	add := func(part uint32, sealed []byte) {
		r, err := crypto.OpenPartRecord(u.dk, part, sealed)
		if err != nil {
			return
		}
		mu.Lock()
		recs[part] = append(recs[part], r)
		mu.Unlock()
	}
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(s.opt.ListConcurrency)
	for _, part := range parts {
		for _, ref := range refs[part] {
			if !ref.inBody {
				add(part, ref.sealed)
				continue
			}
			g.Go(func() error {
				sealed, err := s.recordBody(gctx, u.bucket, ref.key)
				if backend.IsNotFound(err) {
					return nil
				}
				if err == nil {
					add(part, sealed)
				}
				return err
			})
		}
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	return recs, nil
}

// maxRecordBody bounds a part record kept in an object's body: one with
// MaxChecksums of the longest names and values is under 1 KiB.
const maxRecordBody = 4 << 10

// recordBody reads a part record kept in an object's body.
func (s *Store) recordBody(ctx context.Context, bucket, key string) ([]byte, error) {
	obj, err := s.be.GetObject(ctx, backend.GetInput{Bucket: bucket, Key: key})
	if err != nil {
		return nil, err
	}
	defer obj.Body.Close()
	return io.ReadAll(io.LimitReader(obj.Body, maxRecordBody))
}

// pairRecords adds to cur, for each of parts (the backend's), its record:
// the one whose backend ETag and size are those of the part the backend
// kept. A part without a matching record (its UploadPart never answered) is
// left out.
func pairRecords(cur map[uint32]crypto.PartRecord, parts []backend.Part, recs map[uint32][]crypto.PartRecord) {
	for _, p := range parts {
		etag := strings.Trim(p.ETag, `"`)
		for _, r := range recs[uint32(p.PartNumber)] {
			if r.BackendETag == etag && crypto.CiphertextSize(r.PlainSize) == p.Size {
				cur[uint32(p.PartNumber)] = r
			}
		}
	}
}

// currentParts pairs the parts the backend holds whose numbers are in want
// (nil: every part) with their records, reading only those parts' records.
// It also returns the backend's parts and every state key seen.
func (s *Store) currentParts(ctx context.Context, u *upload, want []uint32) (map[uint32]crypto.PartRecord, []backend.Part, []string, error) {
	parts, err := s.backendParts(ctx, u)
	if err != nil {
		return nil, nil, nil, err
	}
	refs, keys, err := s.listRecords(ctx, u)
	if err != nil {
		return nil, nil, nil, err
	}
	if want == nil {
		for _, p := range parts {
			want = append(want, uint32(p.PartNumber))
		}
	}
	recs, err := s.openRecords(ctx, u, refs, want)
	if err != nil {
		return nil, nil, nil, err
	}
	cur := make(map[uint32]crypto.PartRecord, len(want))
	pairRecords(cur, parts, recs)
	return cur, parts, keys, nil
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
