// Package backend is the S3 client that reaches the object store holding
// s3seal's ciphertext: any S3 API through aws-sdk-go-v2 (the embedded store
// of backend/embedded included). It knows nothing of encryption or of the
// client-facing HTTP API: it moves bytes and metadata and reports errors as
// *Error values with the backend's S3 code.
package backend

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"
)

// Store is the narrow set of S3 operations s3seal needs from its backend.
// Bodies given to PutObject must be seekable so that a failed attempt can be
// replayed; bodies returned by GetObject must be closed by the caller.
type Store interface {
	ListBuckets(ctx context.Context) ([]Bucket, error)
	CreateBucket(ctx context.Context, bucket string) error
	HeadBucket(ctx context.Context, bucket string) error
	DeleteBucket(ctx context.Context, bucket string) error
	BucketRegion(ctx context.Context, bucket string) (string, error)

	PutObject(ctx context.Context, in PutInput) (PutOutput, error)
	// GetObject fetches an object or, with Range set, a byte range of it.
	// IfMatch, when set, makes the backend answer PreconditionFailed if the
	// object's backend ETag differs (used to pin a ranged read to the
	// version a HEAD saw).
	GetObject(ctx context.Context, in GetInput) (*Object, error)
	HeadObject(ctx context.Context, bucket, key string) (ObjectInfo, error)
	DeleteObject(ctx context.Context, bucket, key string) error
	// DeleteObjects deletes up to 1000 keys; per-key failures come back in
	// the result, not as the error.
	DeleteObjects(ctx context.Context, bucket string, keys []string) ([]DeleteResult, error)
	ListObjects(ctx context.Context, in ListInput) (ListOutput, error)
	// CopyObject copies an object within the backend with new metadata
	// (at most MaxCopySize bytes), conditional on the source's ETag.
	CopyObject(ctx context.Context, in CopyInput) (CopyOutput, error)
	// ObjectTagging returns the tags of an object (of one version when
	// versionID is set) as x-amz-tagging takes them: URL query encoding,
	// "" for none. A store without tags answers NotImplemented.
	ObjectTagging(ctx context.Context, bucket, key, versionID string) (string, error)
	// PutObjectLock sets a version's retention and/or legal hold.
	PutObjectLock(ctx context.Context, in ObjectLockInput) error
	// BucketDefaultRetention reads a bucket's default retention (Mode ""
	// for none).
	BucketDefaultRetention(ctx context.Context, bucket string) (DefaultRetention, error)

	Multipart
	Versions
}

// Bucket is one entry of ListBuckets.
type Bucket struct {
	Name    string
	Created time.Time
}

// Headers are the standard object headers S3 stores and returns verbatim.
type Headers struct {
	ContentType        string
	CacheControl       string
	ContentDisposition string
	ContentEncoding    string
	ContentLanguage    string
	Expires            string // raw HTTP date as the client sent it
	// StorageClass is x-amz-storage-class ("" lets the backend choose,
	// STANDARD); WebsiteRedirectLocation is x-amz-website-redirect-location.
	// Both are kept by the backend as S3 keeps them.
	StorageClass            string
	WebsiteRedirectLocation string
	// SSE is the backend's own encryption of the (already sealed) bytes,
	// x-amz-server-side-encryption ("" lets the backend choose, AES256,
	// aws:kms, aws:kms:dsse), with the KMS key id, encryption context
	// (base64 JSON) and bucket key flag of SSE-KMS: sent on PUT, copy and
	// CreateMultipartUpload, and read back from GET and HEAD (backend/sse.go).
	SSE          string
	SSEKMSKeyID  string
	SSEContext   string
	SSEBucketKey bool
}

// PutInput describes one single-request upload.
type PutInput struct {
	Bucket, Key string
	Body        io.ReadSeeker // replayed from offset 0 on a retry
	Size        int64
	ContentMD5  string // base64 MD5 of Body, checked by the backend when set
	// ContentCRC32C is the base64 big-endian CRC32C of Body, sent as
	// x-amz-checksum-crc32c: the backend checks what arrived at a
	// fraction of Content-MD5's cost. Until the store has confirmed the
	// checksum in an answer, Content-MD5 goes beside it; a store that
	// refuses the header or does not confirm it is sent Content-MD5
	// instead, from then on (integrity.go).
	ContentCRC32C string
	Meta          map[string]string // user metadata, keys without "x-amz-meta-", lower case
	Headers       Headers
	// IfMatch, when set, makes the PUT conditional on the object's backend
	// ETag (quotes optional): the backend refuses with PreconditionFailed
	// when it differs and NoSuchKey when the object is missing, atomically
	// with the write.
	IfMatch string
	// IfNoneMatch makes the PUT conditional on the key being free
	// (If-None-Match: *): PreconditionFailed when an object exists.
	IfNoneMatch bool
	// Protect is the object's lock and tags, enforced by the backend.
	Protect Protection
}

// PutOutput is what the backend answered to a PUT.
type PutOutput struct {
	ETag      string // backend ETag, quotes removed
	VersionID string // the version the PUT made, "" in an unversioned bucket
	// SSE, SSEKMSKeyID and SSEBucketKey are the backend's server-side
	// encryption of the object, as it answered ("" when it named none).
	SSE, SSEKMSKeyID string
	SSEBucketKey     bool
}

// ByteRange is an inclusive-exclusive backend byte range [Off, Off+Len).
type ByteRange struct {
	Off, Len int64
}

// GetInput selects an object, or part of one.
type GetInput struct {
	Bucket, Key string
	Range       *ByteRange
	IfMatch     string // backend ETag, quotes optional
	VersionID   string // a version other than the current one, when set
}

// ObjectInfo is what HEAD (or the headers of a GET) says of an object.
type ObjectInfo struct {
	Key          string
	Size         int64 // backend (ciphertext) size of the whole object
	ETag         string
	LastModified time.Time
	StorageClass string
	Meta         map[string]string // lower-case keys without "x-amz-meta-"
	Headers      Headers
	TagCount     int        // tags on the object (x-amz-tagging-count)
	Lock         Protection // lock mode, retain-until date and legal hold (no Tagging)
	VersionID    string     // "" when the backend names none (unversioned bucket)
}

// Object is a GET result. Body holds the requested range (or all of it).
type Object struct {
	Info ObjectInfo
	Body io.ReadCloser
}

// ListInput covers ListObjects V1 and V2; the backend is always asked with
// the version the client used, so markers and tokens pass through.
type ListInput struct {
	Bucket            string
	V2                bool
	Prefix            string
	Delimiter         string
	MaxKeys           int32  // 0 = backend default (1000)
	Marker            string // V1
	ContinuationToken string // V2
	StartAfter        string // V2
	FetchOwner        bool   // V2
}

// ListEntry is one object in a listing, as the backend reported it.
type ListEntry struct {
	Key          string
	Size         int64
	ETag         string
	LastModified time.Time
	StorageClass string
	OwnerID      string
	OwnerName    string
}

// ListOutput is one page of a listing.
type ListOutput struct {
	Entries               []ListEntry
	CommonPrefixes        []string
	IsTruncated           bool
	NextMarker            string // V1 (may be empty: then the last key or prefix is the marker)
	NextContinuationToken string // V2
}

// DeleteResult is the outcome for one key of DeleteObjects.
type DeleteResult struct {
	Key     string
	Code    string // empty on success
	Message string
	// VersionID is the version asked for (DeleteVersions), or the id of
	// the delete marker made; DeleteMarker says the entry is (or made) one.
	VersionID             string
	DeleteMarker          bool
	DeleteMarkerVersionID string
}

// Error is a failure the backend reported with an S3 error code, or a
// transport failure (Code "" and StatusCode 0).
type Error struct {
	Code       string // S3 error code, e.g. "NoSuchKey"; "NotFound" for a bodiless 404
	StatusCode int
	Message    string
	Op         string // backend operation, for logs
	Err        error  // underlying error
	// DeleteMarker and VersionID come from x-amz-delete-marker and
	// x-amz-version-id of an error answer: a GET or HEAD that found a
	// delete marker.
	DeleteMarker bool
	VersionID    string
}

func (e *Error) Error() string {
	if e.Code == "" {
		return fmt.Sprintf("backend %s: %v", e.Op, e.Err)
	}
	return fmt.Sprintf("backend %s: %s (%d): %s", e.Op, e.Code, e.StatusCode, e.Message)
}

func (e *Error) Unwrap() error { return e.Err }

// ErrorCode returns the S3 error code of err when it is (or wraps) an
// *Error, else "".
func ErrorCode(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return ""
}

// IsRefused reports whether err is the store's refusal of the request
// (a 4xx answer): it answered, and asking again will not change it.
func IsRefused(err error) bool {
	var e *Error
	return errors.As(err, &e) && e.StatusCode >= 400 && e.StatusCode < 500
}

// IsBadRequest reports the store's 400 whatever its code: a request the
// store cannot take in this form (moto's HEAD of the "null" version by id).
func IsBadRequest(err error) bool {
	var e *Error
	return errors.As(err, &e) && e.StatusCode == http.StatusBadRequest
}

// IsNotFound reports whether err says the object (or bucket) does not exist.
func IsNotFound(err error) bool {
	switch ErrorCode(err) {
	case "NoSuchKey", "NotFound", "NoSuchBucket":
		return true
	}
	return false
}
