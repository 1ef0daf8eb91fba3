package sealstore

import (
	"context"
	"errors"

	"github.com/s3seal/s3seal/backend"
	"github.com/s3seal/s3seal/crypto"
)

// Objects sealed with a customer key (S3's SSE-C) need that key, besides
// the keyring, to be read: their segments are sealed under a content key
// derived from the DEK and the customer key, and their envelope carries a
// check value of the key (docs/FORMAT.md, "Customer keys"). Sizes, ETags
// and checksums are sealed under the DEK as for every object, so listings
// and internal reads (conditions, completions, gc, rewrap) work without
// the customer key; only the content needs it.

// ReadInput names an object, or a range or version of it, to read.
type ReadInput struct {
	Bucket, Key string
	VersionID   string // "" the current version
	Range       *Range // nil: the whole object
	// CustomerKey is the client's SSE-C key: required for an object sealed
	// with one, refused for any other object.
	CustomerKey *crypto.CustomerKey
	// PartChecksums asks, for a Range by part number of a multipart object
	// whose checksum is COMPOSITE, for that part's kept checksums in
	// ObjectInfo.PartChecksums (x-amz-checksum-mode ENABLED on a GET or
	// HEAD with ?partNumber=).
	PartChecksums bool
	// ContentID, when set, is the content the read was decided for
	// (ObjectInfo.ContentID): other content under the name is
	// ErrContentChanged, and nothing of it is returned.
	ContentID string
	// own reads one of s3seal's own objects, under ReservedPrefix.
	own bool
}

// checkContent is ErrContentChanged when in asks for content info is
// not.
func (in ReadInput) checkContent(info ObjectInfo) error {
	if in.ContentID != "" && info.ContentID() != in.ContentID {
		return ErrContentChanged
	}
	return nil
}

func customerKeyMissing() error {
	return errorf("InvalidRequest", "The object was stored using a form of Server Side Encryption. The correct parameters must be provided to retrieve the object.")
}

func customerKeyNotApplicable() error {
	return errorf("InvalidRequest", "The encryption parameters are not applicable to this object.")
}

func customerKeyWrong() error {
	return errorf("AccessDenied", "Access Denied.")
}

func customerKeyMismatch() error {
	return errorf("InvalidRequest", "The provided encryption parameters did not match the ones used originally.")
}

// contentKey returns the key that opens the segments of the object info
// describes, whose DEK is dk: dk itself for an object without a customer
// key, the content key derived with ck for one sealed with a customer key.
// A customer key missing (400), given for an object without one (400) or
// other than the object's (403) is refused before any byte is decrypted.
func contentKey(info ObjectInfo, dk *crypto.DataKey, ck *crypto.CustomerKey) (*crypto.DataKey, error) {
	switch {
	case info.CustomerKeyed && ck == nil:
		return nil, customerKeyMissing()
	case !info.CustomerKeyed && ck != nil:
		return nil, customerKeyNotApplicable()
	case ck == nil:
		return dk, nil
	}
	c, err := dk.ForCustomer(ck, info.env.CustomerCheck)
	if errors.Is(err, crypto.ErrCustomerKey) {
		return nil, customerKeyWrong()
	}
	return c, err
}

// sealKey returns the key a new object's (or upload's) segments are
// sealed with and the customer check its envelope binds: dk and nil
// without a customer key.
func sealKey(dk *crypto.DataKey, ck *crypto.CustomerKey) (*crypto.DataKey, []byte, error) {
	if ck == nil {
		return dk, nil, nil
	}
	check, err := dk.CustomerCheck(ck)
	if err != nil {
		return nil, nil, err
	}
	content, err := dk.ForCustomer(ck, check)
	return content, check, err
}

// Stat is Head that checks the client's customer key as a GET would: the
// answer of HEAD to a client. Internal reads use HeadVersion.
func (s *Store) Stat(ctx context.Context, in ReadInput) (ObjectInfo, error) {
	_, info, dk, err := s.headDescribed(ctx, in)
	if err != nil {
		return info, err
	}
	if !info.Encrypted {
		if in.CustomerKey != nil {
			return info, customerKeyNotApplicable()
		}
		return info, nil
	}
	if _, err = contentKey(info, dk, in.CustomerKey); err != nil {
		return info, err
	}
	if in.PartChecksums && in.Range != nil && in.Range.Part > 0 && compositeChecksums(info.Checksums) {
		info.PartChecksums, err = s.partChecksums(ctx, in.Bucket, in.Key, info, dk, in.Range.Part)
	}
	return info, err
}

// headDescribed HEADs the object in names (its version, if named) and
// describes it, checking its key and, with in.ContentID, its content. On
// the description's own failure the partial description comes back too.
func (s *Store) headDescribed(ctx context.Context, in ReadInput) (backend.ObjectInfo, ObjectInfo, *crypto.DataKey, error) {
	if err := CheckKey(in.Key); err != nil {
		return backend.ObjectInfo{}, ObjectInfo{}, nil, err
	}
	bi, err := s.headObject(ctx, in.Bucket, in.Key, in.VersionID)
	if err != nil {
		return bi, ObjectInfo{}, nil, err
	}
	info, dk, err := s.describe(ctx, in.Bucket, bi, false)
	if err != nil {
		return bi, info, nil, err
	}
	if err := in.checkContent(info); err != nil {
		return bi, ObjectInfo{}, nil, err
	}
	return bi, info, dk, nil
}

// streamKey returns the key and stream that open a single-stream object's
// bytes: content (the object's data key, or the key contentKey derived
// from it and a customer key) as the zero Stream, or, for a copy of
// another object's stream, that stream under its origin's key.
func (i ObjectInfo) streamKey(content *crypto.DataKey) (*crypto.DataKey, crypto.Stream, error) {
	if i.origin == nil {
		return content, crypto.Stream{}, nil
	}
	dk, err := i.origin.DataKey()
	return dk, i.origin.Stream, err
}
