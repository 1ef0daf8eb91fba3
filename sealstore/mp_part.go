package sealstore

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/s3seal/s3seal/backend"
	"github.com/s3seal/s3seal/crypto"
)

// UploadPartInput is one part of an upload. Body, Size, ContentMD5,
// Observe and Finalize mean what they mean for a PUT.
type UploadPartInput struct {
	Bucket, Key, UploadID string
	PartNumber            int
	Body                  io.Reader
	Size                  int64
	ContentMD5            []byte
	Observe               io.Writer
	Finalize              func() (checksums map[string]string, err error)
	// CustomerKey is the part's customer key (SSE-C): the upload's, or nil
	// for an upload without one.
	CustomerKey *crypto.CustomerKey
}

// PartInfo is what UploadPart answers: the part's plaintext ETag (hex MD5)
// and the checksums kept with it.
type PartInfo struct {
	ETag      string
	Size      int64
	Checksums map[string]string
	// Encryption holds the backend encryption (SSE fields) the upload was
	// created with, which S3 reports with each part.
	Encryption backend.Headers
}

// UploadPart seals a part as its own stream (a fresh stream id), checks it
// like a PUT, sends it to the backend part of the same number, and records
// its plaintext size, MD5 and checksums beside the upload. Uploading a part
// number again replaces the part, as in S3.
func (s *Store) UploadPart(ctx context.Context, in UploadPartInput) (PartInfo, error) {
	if in.PartNumber < 1 || in.PartNumber > crypto.MaxParts {
		return PartInfo{}, errorf("InvalidArgument", "Part number must be an integer between 1 and 10000, inclusive.")
	}
	if in.Size > s.opt.MaxObjectSize {
		return PartInfo{}, errorf("EntityTooLarge", "Your proposed upload exceeds the maximum allowed object size: a part may carry at most %d bytes.", s.opt.MaxObjectSize)
	}
	u, err := s.loadUpload(ctx, in.Bucket, in.Key, in.UploadID)
	if err != nil {
		return PartInfo{}, err
	}
	content, err := u.contentKey(in.CustomerKey)
	if err != nil {
		return PartInfo{}, err
	}
	sid, err := crypto.NewStreamID()
	if err != nil {
		return PartInfo{}, err
	}
	stream := crypto.Stream{Part: uint32(in.PartNumber), ID: sid}
	sp, err := s.seal(PutInput{Body: in.Body, Size: in.Size, ContentMD5: in.ContentMD5,
		Observe: in.Observe, Finalize: in.Finalize}, content, stream)
	if err != nil {
		return PartInfo{}, err
	}
	defer sp.close()
	if _, err := sp.file.Seek(0, io.SeekStart); err != nil {
		return PartInfo{}, fmt.Errorf("rewind spool: %w", err)
	}
	etag, err := s.be.UploadPart(ctx, backend.UploadPartInput{Bucket: in.Bucket, Key: in.Key, UploadID: in.UploadID,
		PartNumber: int32(in.PartNumber), Body: sp.file, Size: sp.cipherSize, ContentMD5: sp.cipherMD5, ContentCRC32C: sp.cipherCRC32C})
	if backend.ErrorCode(err) == "NoSuchUpload" {
		return PartInfo{}, noSuchUpload()
	}
	if err != nil {
		return PartInfo{}, err
	}
	return s.recordPart(ctx, u, crypto.PartRecord{Stream: stream, PlainSize: sp.size, PlainMD5: sp.md5,
		BackendETag: strings.Trim(etag, `"`), Checksums: sp.checksums})
}

// recordPart stores the record of a part the backend holds now, and
// answers as UploadPart does.
func (s *Store) recordPart(ctx context.Context, u *upload, rec crypto.PartRecord) (PartInfo, error) {
	sealed, err := crypto.SealPartRecord(u.dk, rec)
	if err != nil {
		return PartInfo{}, fmt.Errorf("seal part record: %w", err)
	}
	rkey, rbody := recordObject(u.prefix, rec.Stream.Part, sealed)
	if _, err := s.be.PutObject(ctx, backend.PutInput{Bucket: u.bucket, Key: rkey,
		Body: bytes.NewReader(rbody), Size: int64(len(rbody))}); err != nil {
		return PartInfo{}, err
	}
	return PartInfo{ETag: fmt.Sprintf("%x", rec.PlainMD5), Size: rec.PlainSize, Checksums: rec.Checksums, Encryption: u.sse}, nil
}

// UploadPartCopyInput copies a source object, or the plaintext range Range
// of it, into a part.
type UploadPartCopyInput struct {
	SrcBucket, SrcKey     string
	SrcVersionID          string // a version of the source other than the current one
	SrcContentID          string // when set, the source content the copy was decided for (ReadInput.ContentID)
	Range                 *Range // nil: the whole source
	Bucket, Key, UploadID string
	PartNumber            int
	// Check, when set, sees the source's description before any byte is
	// copied (copy-source conditions); an error aborts the copy.
	Check func(src ObjectInfo) error
	// Observe and Finalize are passed to the UploadPart of the copy.
	Observe  io.Writer
	Finalize func() (checksums map[string]string, err error)
	// SrcCustomerKey is the source's customer key (SSE-C), CustomerKey the
	// upload's (nil: none).
	SrcCustomerKey, CustomerKey *crypto.CustomerKey
}

// UploadPartCopy has the store copy the ciphertext when the range is a
// whole sealed stream of the source (partCopyByStore); otherwise it reads
// the source through s3seal (decrypting and authenticating it) and
// uploads it as a part sealed under the upload's key.
func (s *Store) UploadPartCopy(ctx context.Context, in UploadPartCopyInput) (PartInfo, error) {
	if err := CheckKey(in.SrcKey); err != nil {
		return PartInfo{}, err
	}
	u, err := s.loadUpload(ctx, in.Bucket, in.Key, in.UploadID)
	if err != nil {
		return PartInfo{}, err
	}
	if _, err := u.contentKey(in.CustomerKey); err != nil {
		return PartInfo{}, err
	}
	if pi, done, err := s.partCopyByStore(ctx, in, u); done {
		if err == nil {
			s.opt.Observer.Copy(true, true)
		}
		return pi, err
	}
	src, rd, err := s.getSource(ctx, ReadInput{Bucket: in.SrcBucket, Key: in.SrcKey, VersionID: in.SrcVersionID,
		Range: in.Range, CustomerKey: in.SrcCustomerKey, ContentID: in.SrcContentID})
	if err != nil {
		return PartInfo{}, err
	}
	defer rd.Close()
	if in.Check != nil {
		if err := in.Check(src); err != nil {
			return PartInfo{}, err
		}
	}
	pi, err := s.UploadPart(ctx, UploadPartInput{Bucket: in.Bucket, Key: in.Key, UploadID: in.UploadID,
		PartNumber: in.PartNumber, Body: rd, Size: rd.Len, Observe: in.Observe, Finalize: in.Finalize,
		CustomerKey: in.CustomerKey})
	if err == nil {
		s.opt.Observer.Copy(true, false)
	}
	return pi, err
}
