package sealstore

import (
	"cmp"
	"context"
	"strings"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/s3seal/s3seal/backend"
	"github.com/s3seal/s3seal/checksum"
	"github.com/s3seal/s3seal/crypto"
)

// copyStream is one whole sealed stream of a copy source: where its bytes
// are in the source's ciphertext, and what s3seal knows of its plaintext.
type copyStream struct {
	origin     crypto.Origin
	size       int64
	md5        [16]byte
	checksums  map[string]string
	cOff, cLen int64
}

// streamAt finds the whole stream of src that the plaintext range
// [off, off+n) is: the object of a single-stream source, a part of a
// multipart one. ok is false for any other range.
func (src storeSource) streamAt(off, n int64) (copyStream, bool) {
	if m := src.info.manifest; m != nil {
		var start, cstart int64
		for _, p := range m.Parts {
			if start == off && p.PlainSize == n {
				o := crypto.OriginOf(src.dk, p.Stream)
				if p.Origin != nil {
					o = *p.Origin
				}
				return copyStream{origin: o, size: n, md5: p.PlainMD5, checksums: p.Checksums,
					cOff: cstart, cLen: crypto.CiphertextSize(n)}, true
			}
			start += p.PlainSize
			cstart += crypto.CiphertextSize(p.PlainSize)
		}
		return copyStream{}, false
	}
	sum, err := src.plainMD5()
	if off != 0 || n != src.info.Size || err != nil {
		return copyStream{}, false
	}
	return copyStream{origin: src.origin(), size: n, md5: sum, checksums: src.info.Checksums,
		cOff: 0, cLen: src.bi.Size}, true
}

// partCopyByStore makes an UploadPartCopy at the store when the range is a
// whole stream of the source that keeps a checksum of the upload's
// algorithm, if it has one: the part's record names the stream's origin,
// and its size, MD5 and checksum (the upload's algorithm's, else the
// stream's CRC64NVME, if any) are the stream's. done is false when the
// part must be read and sealed instead.
func (s *Store) partCopyByStore(ctx context.Context, in UploadPartCopyInput, u *upload) (pi PartInfo, done bool, err error) {
	if in.CustomerKey != nil || in.SrcCustomerKey != nil || u.env.CustomerCheck != nil {
		return PartInfo{}, false, nil
	}
	src, ok, err := s.statSource(ctx, in.SrcBucket, in.SrcKey, in.SrcVersionID, in.SrcContentID)
	if err != nil || !ok || !s.storeHonoursCopyConditions(ctx, in.Bucket, in.SrcBucket, src.bi.Key) {
		return PartInfo{}, err != nil, err
	}
	off, n := int64(0), src.info.Size
	if in.Range != nil {
		if off, n, err = ResolveRange(in.Range, src.info); err != nil {
			return PartInfo{}, false, nil // the reading copy answers it, after the caller's checks
		}
	}
	st, ok := src.streamAt(off, n)
	if !ok {
		return PartInfo{}, false, nil
	}
	cs, ok := partCopyChecksums(st.checksums, u.checksumAlg)
	if !ok {
		return PartInfo{}, false, nil
	}
	if in.Check != nil {
		if err := in.Check(src.info); err != nil {
			return PartInfo{}, true, err
		}
	}
	pi, err = s.copyStreamToPart(ctx, u, int32(in.PartNumber), src, st, cs)
	return pi, true, err
}

// partCopyChecksums are the checksums the record of a part the store
// copies keeps from the stream's: the upload's algorithm's (ok is false
// when the stream lacks it); for an upload without one, the default
// CRC64NVME, or when the stream has none (its upload named another
// algorithm) the stream's own, which make the object a COMPOSITE checksum
// of theirs (objectChecksums).
func partCopyChecksums(stream map[string]string, uploadAlg string) (map[string]string, bool) {
	alg := cmp.Or(uploadAlg, strings.ToLower(string(checksum.Default)))
	if v, ok := stream[alg]; ok {
		return map[string]string{alg: v}, true
	}
	return stream, uploadAlg == ""
}

// copyStreamToPart has the store copy stream st of src into part n of
// upload u, conditional on the source's backend ETag (and version), and
// records it with the stream's origin and the checksums cs.
func (s *Store) copyStreamToPart(ctx context.Context, u *upload, n int32, src storeSource, st copyStream, cs map[string]string) (PartInfo, error) {
	sid, err := crypto.NewStreamID()
	if err != nil {
		return PartInfo{}, err
	}
	etag, err := s.be.UploadPartCopy(ctx, backend.UploadPartCopyInput{Bucket: u.bucket, Key: u.key, UploadID: u.id, PartNumber: n,
		SrcBucket: src.info.Bucket, SrcKey: src.bi.Key, SrcVersionID: src.bi.VersionID, SrcIfMatch: src.info.backendETag,
		First: st.cOff, Last: st.cOff + st.cLen - 1})
	switch {
	case backend.ErrorCode(err) == "NoSuchUpload":
		return PartInfo{}, noSuchUpload()
	case err != nil:
		return PartInfo{}, sourceChanged(err)
	}
	return s.recordPart(ctx, u, crypto.PartRecord{Stream: crypto.Stream{Part: uint32(n), ID: sid}, PlainSize: st.size,
		PlainMD5: st.md5, BackendETag: strings.Trim(etag, `"`), Checksums: cs, Origin: &st.origin})
}

// copyPartsConcurrency bounds the part copies of one multipart copy.
const copyPartsConcurrency = 8

// copyPartsByStore copies a multipart source at the store as a multipart
// upload of the copy, one part per source part, each copied by the store
// (copyStreamToPart) and completed as any upload: the copy has the
// source's parts, so its ETag and checksum are the source's (none for a
// source without one). done is false when the client asks for another
// algorithm, a part lacks the source's, or a part is empty: the copy is
// read then.
func (s *Store) copyPartsByStore(ctx context.Context, in CopyInput, src storeSource) (info ObjectInfo, done bool, err error) {
	m := src.info.manifest
	alg, typ := objectChecksumKind(m.Checksums)
	if in.ChecksumAlgorithm != "" && in.ChecksumAlgorithm != alg {
		return ObjectInfo{}, false, nil
	}
	for _, p := range m.Parts {
		if _, ok := p.Checksums[alg]; (alg != "" && !ok) || p.PlainSize == 0 {
			return ObjectInfo{}, false, nil
		}
	}
	if in.Check != nil {
		if err := in.Check(src.info); err != nil {
			return ObjectInfo{}, true, err
		}
	}
	meta, headers := copyMetaOf(in, src.info)
	id, err := s.CreateMultipart(ctx, CreateMultipartInput{Bucket: in.Bucket, Key: in.Key, Meta: meta, Headers: headers,
		KeyID: in.KeyID, KMSContext: in.KMSContext, BucketKey: in.BucketKey, ChecksumAlgorithm: alg, ChecksumType: typ,
		Protect: in.Protect, Record: in.Record, storeCopy: true})
	if isCode(err, "KeyTooLongError") {
		return ObjectInfo{}, false, nil // the upload's state would not fit: a single PUT does
	}
	if err != nil {
		return ObjectInfo{}, true, err
	}
	defer func() {
		if err != nil {
			actx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
			defer cancel()
			if aerr := s.AbortMultipart(actx, in.Bucket, in.Key, id); aerr != nil {
				s.log.Warn("copy: could not abort the multipart copy; s3seal gc removes it", "bucket", in.Bucket, "key", in.Key, "upload_id", id, "err", aerr)
			}
		}
	}()
	u, err := s.loadUpload(ctx, in.Bucket, in.Key, id)
	if err != nil {
		return ObjectInfo{}, true, err
	}
	parts := make([]CompletePart, len(m.Parts))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(copyPartsConcurrency)
	var off int64
	for i, p := range m.Parts {
		st, _ := src.streamAt(off, p.PlainSize)
		off += p.PlainSize
		g.Go(func() error {
			cs, _ := partCopyChecksums(st.checksums, alg)
			pi, err := s.copyStreamToPart(gctx, u, int32(i+1), src, st, cs)
			parts[i] = CompletePart{PartNumber: i + 1, ETag: pi.ETag}
			return err
		})
	}
	if err = g.Wait(); err != nil {
		return ObjectInfo{}, true, err
	}
	info, err = s.CompleteMultipart(ctx, CompleteInput{Bucket: in.Bucket, Key: in.Key, UploadID: id, Parts: parts, ExpectSize: -1})
	if err != nil {
		return ObjectInfo{}, true, err
	}
	info.Meta, info.Headers = meta, headersWithSSE(headers, info.Headers)
	return info, true, nil
}

// objectChecksumKind is the algorithm and type (COMPOSITE for a value
// that ends in "-N", else FULL_OBJECT) of an object's checksum; "" when it
// has none.
func objectChecksumKind(cs map[string]string) (alg, typ string) {
	for a := range cs {
		if compositeChecksums(cs) {
			return a, checksum.Composite
		}
		return a, checksum.FullObject
	}
	return "", ""
}

// headersWithSSE is h with the encryption fields of enc (what the
// completion reports).
func headersWithSSE(h, enc backend.Headers) backend.Headers {
	h.SSE, h.SSEKMSKeyID, h.SSEContext, h.SSEBucketKey = enc.SSE, enc.SSEKMSKeyID, enc.SSEContext, enc.SSEBucketKey
	return h
}
