package sealstore

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/s3seal/s3seal/backend"
	"github.com/s3seal/s3seal/checksum"
	"github.com/s3seal/s3seal/crypto"
)

// checkCompleteChecksums holds a completion to the checksum its upload was
// created with, as S3 does: the same checksum type if the request names
// one; an upload created without an algorithm ignores a stated object
// checksum and type (its CRC64NVME is s3seal's own, and parts recorded by
// the previous release have none to give the type from).
func checkCompleteChecksums(u *upload, in *CompleteInput) error {
	if u.checksumAlg == "" {
		in.ExpectChecksums, in.ExpectChecksumType = nil, ""
		return nil
	}
	if in.ExpectChecksumType != "" && !strings.EqualFold(in.ExpectChecksumType, u.checksumType) {
		return errorf("InvalidRequest", "The upload was created using the %s checksum mode. The complete request must use the same checksum mode.", u.checksumType)
	}
	return nil
}

// buildManifest checks the client's part list against the recorded parts
// and returns the manifest and the backend part list to complete with.
func buildManifest(parts []CompletePart, cur map[uint32]crypto.PartRecord, minPart int64) (crypto.Manifest, []backend.CompletedPart, error) {
	var m crypto.Manifest
	bparts := make([]backend.CompletedPart, 0, len(parts))
	for i, p := range parts {
		r, ok := cur[uint32(p.PartNumber)]
		etag := strings.ToLower(strings.Trim(p.ETag, `"`))
		if !ok || p.PartNumber < 1 || p.PartNumber > crypto.MaxParts || etag != fmt.Sprintf("%x", r.PlainMD5) {
			return m, nil, invalidPart(p.PartNumber)
		}
		for alg, v := range p.Checksums {
			if _, kept := r.Checksums[alg]; !kept {
				return m, nil, errorf("BadDigest", "The %s you specified for part %d did not match what we received.", alg, p.PartNumber)
			}
			if r.Checksums[alg] != v {
				return m, nil, invalidPart(p.PartNumber)
			}
		}
		if i < len(parts)-1 && r.PlainSize < minPart {
			return m, nil, errorf("EntityTooSmall", "Your proposed upload is smaller than the minimum allowed size")
		}
		m.Parts = append(m.Parts, crypto.ManifestPart{Stream: r.Stream, PlainSize: r.PlainSize, PlainMD5: r.PlainMD5, Checksums: r.Checksums, Origin: r.Origin})
		bparts = append(bparts, backend.CompletedPart{PartNumber: int32(p.PartNumber), ETag: r.BackendETag})
	}
	return m, bparts, nil
}

func invalidPart(_ int) error {
	return errorf("InvalidPart", "One or more of the specified parts could not be found.  The part may not have been uploaded, or the specified entity tag may not match the part's entity tag.")
}

// objectChecksums computes a multipart object's checksum from its parts:
// of the algorithm and type the upload was created with (alg, lower-case,
// and typ), else, as S3 does since 2025, a FULL_OBJECT checksum.Default
// when every part has one (each part keeps it, beside the checksum it names
// if any). A part without it was recorded by an s3seal from before that,
// with only the one it named: then the object has no checksum. Parts that
// are all copies the store made of streams of an upload that named
// another algorithm give the COMPOSITE checksum of that algorithm, as
// their source has.
func objectChecksums(alg, typ string, parts []crypto.ManifestPart) (map[string]string, error) {
	if alg == "" {
		alg, typ = commonChecksum(parts)
		if alg == "" {
			return nil, nil
		}
	}
	a, ok := checksum.ParseAlgorithm(alg)
	if !ok {
		return nil, nil
	}
	sums := make([]checksum.PartSum, len(parts))
	for i, p := range parts {
		v, ok := p.Checksums[alg]
		if !ok {
			return nil, errorf("InvalidRequest", "The upload was created using a %s checksum. The complete request must include the checksum for each part. It was missing for part %d in the request.", alg, p.Stream.Part)
		}
		sums[i] = checksum.PartSum{Size: p.PlainSize, Value: v}
	}
	v, err := checksum.Combine(a, typ, sums)
	if err != nil {
		return nil, errorf("InvalidRequest", "%s", err)
	}
	return map[string]string{alg: v}, nil
}

// commonChecksum is the checksum an upload created without an algorithm
// gets from its parts (objectChecksums): FULL_OBJECT checksum.Default
// when every part has one, else, when every part is a store copy,
// COMPOSITE of the first algorithm (by name) every part has; "" for none.
func commonChecksum(parts []crypto.ManifestPart) (alg, typ string) {
	def := strings.ToLower(string(checksum.Default))
	var common []string
	for a := range parts[0].Checksums {
		common = append(common, a)
	}
	slices.Sort(common)
	if i := slices.Index(common, def); i > 0 {
		common[0], common[i] = def, common[0] // the default first
	}
	for _, a := range common {
		all := true
		for _, p := range parts {
			all = all && p.Checksums[a] != ""
		}
		switch {
		case !all:
		case a == def:
			return a, checksum.FullObject
		case allCopies(parts):
			return a, checksum.Composite
		}
	}
	return "", ""
}

func allCopies(parts []crypto.ManifestPart) bool {
	for _, p := range parts {
		if p.Origin == nil {
			return false
		}
	}
	return true
}

// checkExpectedChecksums compares what the client states about the
// object's checksum with what the parts give. A COMPOSITE value may be
// stated with or without its "-N".
func checkExpectedChecksums(in CompleteInput, got map[string]string) error {
	if in.ExpectChecksumType != "" {
		typ := "FULL_OBJECT"
		for _, v := range got {
			if strings.Contains(v, "-") {
				typ = "COMPOSITE"
			}
		}
		if len(got) == 0 || !strings.EqualFold(in.ExpectChecksumType, typ) {
			return errorf("BadDigest", "The checksum type %s you specified does not match the upload's.", in.ExpectChecksumType)
		}
	}
	for alg, v := range in.ExpectChecksums {
		have, ok := got[alg]
		if !ok || (v != have && v != strings.Split(have, "-")[0]) {
			return errorf("BadDigest", "The %s you specified did not match the calculated checksum.", strings.ToUpper(alg))
		}
	}
	return nil
}

// previous is what conditions found at the key before the completion.
type previous struct {
	backendIfMatch string // backend ETag to send as If-Match, or ""
	manifest       string // manifest of a multipart object there, which goes when it is replaced
	versionID      string // its version id
}

// conditions evaluates the completion's condition against the object now
// at the key, and notes what it found there. The backend decides again
// atomically: If-Match goes to it as the backend ETag of the version that
// matched, If-None-Match "*" as it is.
func (s *Store) conditions(ctx context.Context, in CompleteInput) (previous, error) {
	c := in.Cond
	failed := errorf("PreconditionFailed", "At least one of the pre-conditions you specified did not hold.")
	bi, err := s.be.HeadObject(ctx, in.Bucket, in.Key)
	if backend.IsNotFound(err) {
		if c != nil && c.IfMatch != nil {
			return previous{}, errorf("NoSuchKey", "The specified key does not exist.")
		}
		return previous{}, nil
	}
	if err != nil {
		return previous{}, err
	}
	if c != nil && c.IfNoneMatch {
		return previous{}, failed
	}
	prev := previous{versionID: bi.VersionID}
	if env, enc, err := crypto.ParseMetadata(bi.Meta); err == nil && enc && env.Multipart {
		prev.manifest = manifestKey(env.OID, strings.Trim(bi.ETag, `"`))
	}
	if c != nil && c.IfMatch != nil {
		info, _, err := s.describe(ctx, in.Bucket, bi, false)
		if err != nil || !etagIn(info.ETag, c.IfMatch) {
			return previous{}, failed
		}
		prev.backendIfMatch = strings.Trim(bi.ETag, `"`)
	}
	return prev, nil
}

func ifNoneMatch(c *Condition) string {
	if c != nil && c.IfNoneMatch {
		return "*"
	}
	return ""
}
