package backend

import (
	"context"
	"io"
	"time"
)

// Multipart is the backend's side of S3 multipart uploads. s3seal seals
// each client part into a backend part of the same number, so the
// operations map one to one; UploadPart bodies must be seekable so that a
// failed attempt can be replayed with exactly the same bytes.
type Multipart interface {
	// CreateMultipartUpload starts an upload whose object will carry Meta
	// and Headers; it returns the backend's upload id.
	CreateMultipartUpload(ctx context.Context, in CreateMultipartInput) (string, error)
	// UploadPart stores one part; it returns the backend's part ETag
	// (quotes removed).
	UploadPart(ctx context.Context, in UploadPartInput) (string, error)
	// UploadPartCopy stores bytes First..Last (inclusive) of an existing
	// object as one part, without the bytes leaving the backend; it
	// returns the part's ETag (quotes removed).
	UploadPartCopy(ctx context.Context, in UploadPartCopyInput) (string, error)
	// CompleteMultipartUpload assembles the named parts into the object.
	// A 200 answer whose body is an <Error> is reported as that error.
	CompleteMultipartUpload(ctx context.Context, in CompleteMultipartInput) (CompleteMultipartOutput, error)
	AbortMultipartUpload(ctx context.Context, bucket, key, uploadID string) error
	// ListParts returns one page of an upload's parts, in part order,
	// starting after part number Marker.
	ListParts(ctx context.Context, in ListPartsInput) (ListPartsOutput, error)
	// ListMultipartUploads returns one page of a bucket's uploads in
	// progress.
	ListMultipartUploads(ctx context.Context, in ListUploadsInput) (ListUploadsOutput, error)
}

// CreateMultipartInput describes a new upload.
type CreateMultipartInput struct {
	Bucket, Key string
	Meta        map[string]string // user metadata, keys without "x-amz-meta-", lower case
	Headers     Headers
	Protect     Protection // lock and tags of the completed object
}

// UploadPartInput is one part of an upload.
type UploadPartInput struct {
	Bucket, Key, UploadID string
	PartNumber            int32
	Body                  io.ReadSeeker // replayed from offset 0 on a retry
	Size                  int64
	ContentMD5            string // base64 MD5 of Body, checked by the backend when set
	// ContentCRC32C is the base64 big-endian CRC32C of Body, sent as
	// x-amz-checksum-crc32c for the backend to check (see PutInput).
	ContentCRC32C string
}

// UploadPartCopyInput is one part of an upload copied from a byte range
// of an object in the backend (x-amz-copy-source-range).
type UploadPartCopyInput struct {
	Bucket, Key, UploadID string
	PartNumber            int32
	SrcBucket, SrcKey     string
	// SrcIfMatch, when set, makes the copy conditional on the source's
	// backend ETag (quotes optional): PreconditionFailed when it differs.
	SrcIfMatch string
	// SrcVersionID, when set, copies from that version of the source.
	SrcVersionID string
	First, Last  int64 // byte range of the source, inclusive
}

// CompletedPart names one part of a completion.
type CompletedPart struct {
	PartNumber int32
	ETag       string // backend part ETag, quotes optional
}

// CompleteMultipartInput completes an upload with Parts, in order.
type CompleteMultipartInput struct {
	Bucket, Key, UploadID string
	Parts                 []CompletedPart
	// IfMatch and IfNoneMatch make the completion conditional on the
	// object currently at the key (backend ETag, or "*" for IfNoneMatch),
	// as S3 has them since 2024; the backend decides atomically.
	IfMatch, IfNoneMatch string
}

// CompleteMultipartOutput is what the backend answered to a completion.
type CompleteMultipartOutput struct {
	ETag      string // backend ETag of the object, quotes removed
	VersionID string // the version the completion made, "" when unversioned
}

// ListPartsInput selects a page of an upload's parts.
type ListPartsInput struct {
	Bucket, Key, UploadID string
	Marker                int32 // part-number-marker: list parts after this one
	MaxParts              int32 // 0 = backend default (1000)
}

// Part is one uploaded part as the backend lists it.
type Part struct {
	PartNumber   int32
	ETag         string // quotes removed
	Size         int64  // backend (ciphertext) size
	LastModified time.Time
}

// ListPartsOutput is one page of ListParts.
type ListPartsOutput struct {
	Parts       []Part
	IsTruncated bool
	NextMarker  int32
}

// ListUploadsInput selects a page of ListMultipartUploads.
type ListUploadsInput struct {
	Bucket         string
	Prefix         string
	Delimiter      string
	KeyMarker      string
	UploadIDMarker string
	MaxUploads     int32 // 0 = backend default (1000)
}

// Upload is one upload in progress.
type Upload struct {
	Key, UploadID string
	Initiated     time.Time
	StorageClass  string // as the backend reports it ("" or STANDARD by default)
}

// ListUploadsOutput is one page of ListMultipartUploads.
type ListUploadsOutput struct {
	Uploads            []Upload
	CommonPrefixes     []string
	IsTruncated        bool
	NextKeyMarker      string
	NextUploadIDMarker string
}
