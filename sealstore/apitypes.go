package sealstore

import (
	"context"

	"github.com/s3seal/s3seal/backend"
	"github.com/s3seal/s3seal/crypto"
)

// The values of sealstore's API that describe an S3 request or answer
// the way the store's client does (headers to keep, a lock, listing
// parameters, the store's errors) and a customer's SSE-C key. sealstore
// hands them through unchanged, so it names them here rather than copying
// them: a caller of sealstore (the HTTP front) imports sealstore alone,
// and sealstore stays the one place that decides what of the store and of
// the crypto package a caller sees. They are plain values without
// behaviour that reaches the store.
type (
	// Headers are the object headers a write keeps (Content-Type, ...).
	Headers = backend.Headers
	// Protection is an object version's lock and tags at its write.
	Protection = backend.Protection
	// ListInput is ListObjects's parameters, as S3 takes them.
	ListInput = backend.ListInput
	// ListVersionsInput is ListObjectVersions's parameters.
	ListVersionsInput = backend.ListVersionsInput
	// ListUploadsInput is ListMultipartUploads's parameters.
	ListUploadsInput = backend.ListUploadsInput
	// ListUploadsOutput is a page of uploads in progress.
	ListUploadsOutput = backend.ListUploadsOutput
	// Upload is one upload of a ListUploadsOutput.
	Upload = backend.Upload
	// DeleteResult is one key's answer in a multi-object delete.
	DeleteResult = backend.DeleteResult
	// StoreError is the object store's own answer to a request it
	// refused or failed: its code, status and words.
	StoreError = backend.Error
	// CustomerKey is an SSE-C key, as a client sends it.
	CustomerKey = crypto.CustomerKey
)

// CustomerKeySize is the size of an SSE-C key: 32 bytes (AES-256).
const CustomerKeySize = crypto.KeySize

// MaxParts is the most parts an upload may have: S3's 10,000.
const MaxParts = crypto.MaxParts

// NewCustomerKey is the SSE-C key of raw (CustomerKeySize bytes).
func NewCustomerKey(raw []byte) (*CustomerKey, error) { return crypto.NewCustomerKey(raw) }

// StoreCode is the object store's error code in err ("" for none).
func StoreCode(err error) string { return backend.ErrorCode(err) }

// IsNotFound reports the store's 404 for a bucket, object or version.
func IsNotFound(err error) bool { return backend.IsNotFound(err) }

// IsStall reports a store that stopped answering within its time bound.
func IsStall(err error) bool { return backend.IsStall(err) }

// WellFormedVersionID reports a version id that a store could have made.
func WellFormedVersionID(id string) bool { return backend.WellFormedVersionID(id) }

// WithStallBudget is ctx with one request's budget of time that the store
// may spend stalled before its calls fail (backend/timeouts.go).
func WithStallBudget(ctx context.Context) context.Context { return backend.WithStallBudget(ctx) }

// WithBypassGovernance is ctx marked so that the writes and deletes
// under it bypass a GOVERNANCE retention; the caller decided that its
// client may.
func WithBypassGovernance(ctx context.Context) context.Context {
	return backend.WithBypassGovernance(ctx)
}
