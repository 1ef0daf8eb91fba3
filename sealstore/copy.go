package sealstore

import (
	"context"
	"io"

	"github.com/s3seal/s3seal/backend"
	"github.com/s3seal/s3seal/crypto"
)

// CopyInput is a server-side copy. The store copies the ciphertext where it
// can (copy_store.go); otherwise the copy is decrypted and sealed again
// under a fresh data key.
type CopyInput struct {
	SrcBucket, SrcKey string
	SrcVersionID      string // a version of the source other than the current one
	SrcContentID      string // when set, the source content the copy was decided for (ReadInput.ContentID)
	Bucket, Key       string
	// ReplaceMeta selects the REPLACE metadata directive: Meta and Headers
	// are used instead of the source's. Without it, only Headers'
	// StorageClass and WebsiteRedirectLocation are used: as on S3, a copy
	// takes those from the request, never from the source.
	ReplaceMeta bool
	Meta        map[string]string
	Headers     backend.Headers
	// KeyID, KMSContext and BucketKey seal the copy, as in PutInput: a
	// copy takes the destination's key.
	KeyID      string
	KMSContext string
	BucketKey  bool
	// Check, when set, sees the source's description before any byte is
	// copied (copy-source conditions); an error aborts the copy.
	Check func(src ObjectInfo) error
	// Cond, when set, makes the copy conditional on the destination.
	Cond *Condition
	// Observe and Finalize are passed to the Put of a copy that reads
	// the source. ChecksumAlgorithm is the algorithm (lower case) the
	// client asked the copy to carry, "" for the source's: a copy the
	// store makes keeps the source's value of it and calls neither.
	Observe           io.Writer
	Finalize          func() (checksums map[string]string, err error)
	ChecksumAlgorithm string
	// Protect is the copy's lock and tags (the caller resolves the tagging
	// directive).
	Protect backend.Protection
	// SrcCustomerKey is the source's customer key (SSE-C), CustomerKey the
	// one the copy is sealed with (nil: none).
	SrcCustomerKey, CustomerKey *crypto.CustomerKey
	// DefaultSSE says Headers' encryption is the bucket's default, not
	// asked for by the request: it makes a copy onto itself a change only
	// when the source was stored with another encryption.
	DefaultSSE bool
	// Record is what the copy does to its object's record (nil: nothing).
	Record *RecordWrite
}

// Copy copies an object: the store copies its ciphertext where it can
// (copyByStore), else it is read, decrypted and sealed again. A source
// without s3seal metadata is refused like any read of it unless
// AllowPlaintextReads is set; the copy is always encrypted.
func (s *Store) Copy(ctx context.Context, in CopyInput) (ObjectInfo, error) {
	if err := CheckNewKey(in.Key); err != nil {
		return ObjectInfo{}, err
	}
	if err := CheckKey(in.SrcKey); err != nil {
		return ObjectInfo{}, err
	}
	unchanged := in.SrcBucket == in.Bucket && in.SrcKey == in.Key && in.SrcVersionID == "" && !in.ReplaceMeta &&
		in.Headers.StorageClass == "" && in.Headers.WebsiteRedirectLocation == "" &&
		in.CustomerKey == nil && in.SrcCustomerKey == nil
	illegal := errorf("InvalidRequest", "This copy request is illegal because it is trying to copy an object to itself without changing the object's metadata, storage class, website redirect location or encryption attributes.")
	if unchanged && in.Headers.SSE == "" {
		return ObjectInfo{}, illegal
	}
	if unchanged && in.DefaultSSE {
		// Illegal when the source has the default encryption already:
		// decided by the copy that reads it.
	} else if info, done, err := s.copyByStore(ctx, in); done {
		if err == nil {
			s.opt.Observer.Copy(false, true)
		}
		return info, err
	}
	src, rd, err := s.getSource(ctx, ReadInput{Bucket: in.SrcBucket, Key: in.SrcKey, VersionID: in.SrcVersionID, CustomerKey: in.SrcCustomerKey,
		ContentID: in.SrcContentID})
	if err != nil {
		return ObjectInfo{}, err
	}
	defer rd.Close()
	if unchanged && in.DefaultSSE && src.Headers.SSE == in.Headers.SSE && src.Headers.SSEKMSKeyID == in.Headers.SSEKMSKeyID {
		return ObjectInfo{}, illegal
	}
	if in.Check != nil {
		if err := in.Check(src); err != nil {
			return ObjectInfo{}, err
		}
	}
	meta, headers := copyMetaOf(in, src)
	info, err := s.Put(ctx, PutInput{Bucket: in.Bucket, Key: in.Key, Body: rd, Size: src.Size,
		Meta: meta, Headers: headers, KeyID: in.KeyID, KMSContext: in.KMSContext, BucketKey: in.BucketKey, Observe: in.Observe, Finalize: in.Finalize, Cond: in.Cond, Protect: in.Protect,
		CustomerKey: in.CustomerKey, Record: in.Record})
	if err == nil {
		s.opt.Observer.Copy(false, false)
	}
	return info, err
}
