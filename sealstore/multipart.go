package sealstore

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/s3seal/s3seal/backend"
	"github.com/s3seal/s3seal/crypto"
)

// MinPartSize is S3's smallest part but the last (5 MiB).
const MinPartSize = 5 << 20

// CreateMultipartInput starts a multipart upload.
type CreateMultipartInput struct {
	Bucket, Key string
	Meta        map[string]string // user metadata, lower-case keys without "x-amz-meta-"
	Headers     backend.Headers
	KeyID       string // master key for the object; "" means the primary
	// ChecksumAlgorithm is the lower-case algorithm every part must carry
	// (x-amz-checksum-algorithm), or "". ChecksumType is "COMPOSITE" or
	// "FULL_OBJECT" (x-amz-checksum-type) when it is set.
	ChecksumAlgorithm, ChecksumType string
	// Protect is the completed object's lock and tags: the backend upload
	// carries them, so the backend object gets them at completion.
	Protect backend.Protection
	// CustomerKey, when set, seals the object with the client's key
	// (SSE-C); every part must then carry the same key.
	CustomerKey *crypto.CustomerKey
}

// CreateMultipart starts an upload: a fresh data key and oid for the
// object, wrapped into the metadata the backend upload carries and into the
// upload's state object, from which any s3seal process serves its parts.
func (s *Store) CreateMultipart(ctx context.Context, in CreateMultipartInput) (string, error) {
	if err := CheckNewKey(in.Key); err != nil {
		return "", err
	}
	if err := CheckMeta(in.Meta); err != nil {
		return "", err
	}
	om := objectMeta(in.Meta, in.Headers)
	if err := checkObjectMeta(om); err != nil {
		return "", err
	}
	dk, err := crypto.NewDataKey()
	if err != nil {
		return "", err
	}
	_, check, err := sealKey(dk, in.CustomerKey)
	if err != nil {
		return "", err
	}
	env, err := s.kr.Wrap(dk, in.KeyID, crypto.Name{Bucket: in.Bucket, Key: in.Key}, crypto.Binding{Multipart: true, CustomerCheck: check})
	if err != nil {
		return "", fmt.Errorf("wrap data key: %w", err)
	}
	// The upload's state holds the envelope alone; the object, made of
	// the backend upload, also its sealed metadata.
	state := env.Metadata()
	if env.SealedMeta, err = crypto.SealObjectMeta(dk, om); err != nil {
		return "", fmt.Errorf("seal object metadata: %w", err)
	}
	id, err := s.be.CreateMultipartUpload(ctx, backend.CreateMultipartInput{Bucket: in.Bucket, Key: in.Key, Meta: env.Metadata(), Headers: storeHeaders(in.Headers), Protect: in.Protect})
	if err != nil {
		return "", err
	}
	state[metaKey], state[metaUploadID] = b64url.EncodeToString([]byte(in.Key)), b64url.EncodeToString([]byte(id))
	if in.ChecksumAlgorithm != "" {
		state[metaChecksumAlg], state[metaChecksumType] = in.ChecksumAlgorithm, in.ChecksumType
	}
	if state[metaSettings], err = sealSettings(dk, id, in.ChecksumAlgorithm, in.ChecksumType); err != nil {
		return "", s.abandonUpload(ctx, in.Bucket, in.Key, id, err)
	}
	lockMeta(state, in.Protect)
	sseMeta(state, in.Headers)
	prefix := uploadPrefix(in.Bucket, in.Key, id)
	if _, err := s.be.PutObject(ctx, backend.PutInput{Bucket: in.Bucket, Key: prefix + infoName,
		Body: bytes.NewReader(nil), Meta: state}); err != nil {
		return "", s.abandonUpload(ctx, in.Bucket, in.Key, id, err)
	}
	// Upload ids are the store's: one that gives an ended upload's id
	// again must not find that upload's settings here.
	s.forgetUpload(uploadKey{in.Bucket, in.Key, id})
	return id, nil
}

// abandonUpload takes back a backend upload whose state could not be
// written (without it the upload is useless) and returns err.
func (s *Store) abandonUpload(ctx context.Context, bucket, key, id string, err error) error {
	if aerr := s.be.AbortMultipartUpload(context.WithoutCancel(ctx), bucket, key, id); aerr != nil {
		s.log.Warn("multipart: could not abort an upload whose state was not written; s3seal gc removes it",
			"bucket", bucket, "key", key, "upload_id", id, "err", aerr)
	}
	return err
}

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
	rec := crypto.PartRecord{Stream: stream, PlainSize: sp.size, PlainMD5: sp.md5,
		BackendETag: strings.Trim(etag, `"`), Checksums: sp.checksums}
	sealed, err := crypto.SealPartRecord(u.dk, rec)
	if err != nil {
		return PartInfo{}, fmt.Errorf("seal part record: %w", err)
	}
	rkey, rbody := recordObject(u.prefix, stream.Part, sealed)
	if _, err := s.be.PutObject(ctx, backend.PutInput{Bucket: in.Bucket, Key: rkey,
		Body: bytes.NewReader(rbody), Size: int64(len(rbody))}); err != nil {
		return PartInfo{}, err
	}
	return PartInfo{ETag: fmt.Sprintf("%x", sp.md5), Size: sp.size, Checksums: sp.checksums, Encryption: u.sse}, nil
}

// AbortMultipart ends an upload: the backend drops its parts and s3seal its
// state.
func (s *Store) AbortMultipart(ctx context.Context, bucket, key, uploadID string) error {
	u, err := s.loadUpload(ctx, bucket, key, uploadID)
	if err != nil {
		return err
	}
	err = s.be.AbortMultipartUpload(ctx, bucket, key, uploadID)
	if err != nil && backend.ErrorCode(err) != "NoSuchUpload" {
		return err
	}
	_, keys, lerr := s.listRecords(ctx, u)
	if lerr == nil {
		s.dropKeys(ctx, bucket, keys)
	}
	s.forgetUpload(uploadKey{bucket, key, uploadID})
	if err != nil {
		return noSuchUpload()
	}
	return lerr
}

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

// ListUploads lists the uploads in progress, as the backend has them, less
// anything under ReservedPrefix.
func (s *Store) ListUploads(ctx context.Context, in backend.ListUploadsInput) (backend.ListUploadsOutput, error) {
	out, err := s.be.ListMultipartUploads(ctx, in)
	if err != nil {
		return out, err
	}
	ups := out.Uploads[:0]
	for _, u := range out.Uploads {
		if !strings.HasPrefix(u.Key, ReservedPrefix) {
			ups = append(ups, u)
		}
	}
	out.Uploads = ups
	cps := out.CommonPrefixes[:0]
	for _, p := range out.CommonPrefixes {
		if !strings.HasPrefix(p, ReservedPrefix) {
			cps = append(cps, p)
		}
	}
	out.CommonPrefixes = cps
	return pageUploads(in, out), nil
}

// UploadPartCopyInput copies a source object, or the plaintext range Range
// of it, into a part.
type UploadPartCopyInput struct {
	SrcBucket, SrcKey     string
	SrcVersionID          string // a version of the source other than the current one
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

// UploadPartCopy reads the source through s3seal (decrypting and
// authenticating it) and uploads it as a part sealed under the upload's
// key: parts are never copied as ciphertext, which is bound to its own
// object.
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
	src, rd, err := s.getSource(ctx, ReadInput{Bucket: in.SrcBucket, Key: in.SrcKey, VersionID: in.SrcVersionID,
		Range: in.Range, CustomerKey: in.SrcCustomerKey})
	if err != nil {
		return PartInfo{}, err
	}
	defer rd.Close()
	if in.Check != nil {
		if err := in.Check(src); err != nil {
			return PartInfo{}, err
		}
	}
	return s.UploadPart(ctx, UploadPartInput{Bucket: in.Bucket, Key: in.Key, UploadID: in.UploadID,
		PartNumber: in.PartNumber, Body: rd, Size: rd.Len, Observe: in.Observe, Finalize: in.Finalize,
		CustomerKey: in.CustomerKey})
}

// UploadChecksum returns the checksum algorithm (lower case) and type the
// upload was created with, or "" for none.
func (s *Store) UploadChecksum(ctx context.Context, bucket, key, uploadID string) (alg, typ string, err error) {
	u, err := s.loadUpload(ctx, bucket, key, uploadID)
	if err != nil {
		return "", "", err
	}
	return u.checksumAlg, u.checksumType, nil
}
