package sealstore

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"

	"golang.org/x/sync/errgroup"

	"github.com/s3seal/s3seal/backend"
	"github.com/s3seal/s3seal/crypto"
)

// recordKey names the record of one uploaded part: the part number, five
// digits (so records list in part order), then the sealed record in
// base64url, cut by "/" so that no segment of the key is longer than
// maxKeySegment (a record with a SHA-512 checksum is about 260 bytes). A
// record that fits in one segment has none: older s3seal versions read it.
func recordKey(prefix string, part uint32, sealed []byte) string {
	enc := b64url.EncodeToString(sealed)
	var b strings.Builder
	fmt.Fprintf(&b, "%s%05d.", prefix, part)
	room := maxKeySegment - len("00000.")
	for len(enc) > room {
		b.WriteString(enc[:room])
		b.WriteByte('/')
		enc, room = enc[room:], maxKeySegment
	}
	b.WriteString(enc)
	return b.String()
}

const (
	// maxRecordKey is the longest record key s3seal writes: S3's limit
	// on keys, which every backend takes (the embedded store too, since
	// it names long metadata files by a hash).
	maxRecordKey = 1024
	// maxKeySegment is the longest "/"-separated segment of a record
	// key: the embedded store (as a file-system store such as MinIO)
	// keeps each segment as a file or directory name, at most 255 bytes.
	maxKeySegment = 255
)

// recordObject returns the key and body of the object that keeps one part
// record: the record in the key (an empty body) when the key fits in
// maxRecordKey, else in the body under "<part>.~<nonce>" ("~" is not
// base64url; the record's nonce makes the key unique), read back with one
// GET at completion and ListParts. Only a record with several long
// checksums and a long backend ETag (over about 700 bytes sealed) goes
// there. Earlier s3seal, which kept record keys to 222 bytes, also put
// there every record with a SHA-512 or XXHASH128 checksum; those are read
// as before.
func recordObject(prefix string, part uint32, sealed []byte) (key string, body []byte) {
	if key = recordKey(prefix, part, sealed); len(key) <= maxRecordKey {
		return key, nil
	}
	return fmt.Sprintf("%s%05d.~%s", prefix, part, b64url.EncodeToString(sealed[:min(len(sealed), 12)])), sealed
}

// parseRecordKey splits a record key below prefix; ok is false for the info
// object and anything else that is not a record. inBody says the record is
// the object's body (see recordObject); sealed is then nil.
func parseRecordKey(prefix, key string) (part uint32, sealed []byte, inBody, ok bool) {
	rest, found := strings.CutPrefix(key, prefix)
	num, enc, found2 := strings.Cut(rest, ".")
	if !found || !found2 || len(num) != 5 {
		return 0, nil, false, false
	}
	n, err := strconv.ParseUint(num, 10, 32)
	if err != nil || n == 0 || n > crypto.MaxParts {
		return 0, nil, false, false
	}
	if strings.HasPrefix(enc, "~") {
		return uint32(n), nil, true, true
	}
	b, err := b64url.DecodeString(strings.ReplaceAll(enc, "/", ""))
	if err != nil {
		return 0, nil, false, false
	}
	return uint32(n), b, false, true
}

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

// backendParts lists every part the backend holds for the upload.
func (s *Store) backendParts(ctx context.Context, u *upload) ([]backend.Part, error) {
	var parts []backend.Part
	in := backend.ListPartsInput{Bucket: u.bucket, Key: u.key, UploadID: u.id}
	for {
		out, err := s.be.ListParts(ctx, in)
		if backend.ErrorCode(err) == "NoSuchUpload" {
			return nil, noSuchUpload()
		}
		if err != nil {
			return nil, err
		}
		parts = append(parts, out.Parts...)
		if !out.IsTruncated || out.NextMarker <= in.Marker {
			return parts, nil
		}
		in.Marker = out.NextMarker
	}
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
