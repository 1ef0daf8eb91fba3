package sealstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/s3seal/s3seal/backend"
	"github.com/s3seal/s3seal/crypto"
	"github.com/s3seal/s3seal/kms"
)

// SSE-KMS terminated in s3seal: with a key service configured
// (Options.KMS), a write that asks for aws:kms is sealed under the KMS
// master key it names (or the default one) and the store hears nothing of
// it; HEAD, GET and the write's own answer report the object's key from
// its envelope (docs/DESIGN.md, "Master keys in a KMS").

// ErrNoKMSKey is KMSKey's answer to a write that asks for aws:kms without
// a key when no default KMS key is configured.
var ErrNoKMSKey = errors.New("no default KMS key")

// KMSKey returns the external id of the master key an SSE-KMS write
// names: name as the client gave it (a key id, ARN or alias, or the id of
// a key in the keyring), or, when name is "", credKey when it names a key
// held outside s3seal, else the default KMS key. terminated is false when
// no key service is configured: SSE-KMS then goes to the store.
func (s *Store) KMSKey(name, credKey string) (id string, terminated bool, err error) {
	if s.opt.KMS == nil {
		return "", false, nil
	}
	switch {
	case name != "":
		if ext, ok := s.kr.External(name); ok && crypto.ValidKeyID(name) {
			return ext, true, nil // a keys file's id of a KMS key
		}
		if crypto.ValidKeyID(name) && s.kr.Has(name) { // a local key: SSE-KMS names keys of the KMS
			return "", true, errorf("KMS.NotFoundException", "Key '%s' is not a KMS key.", name)
		}
		id, ok := s.opt.KMS.Resolve(name)
		if !ok {
			return "", true, errorf("KMS.NotFoundException", "Invalid keyId '%s'", name)
		}
		return id, true, nil
	case credKey != "":
		if ext, ok := s.kr.External(credKey); ok {
			return ext, true, nil
		}
	}
	if s.opt.KMSDefault == "" {
		return "", true, ErrNoKMSKey
	}
	return s.opt.KMSDefault, true, nil
}

// KMSContext returns the canonical form of a client's encryption context
// (the JSON that x-amz-server-side-encryption-context holds, decoded):
// "" for an empty one, an error for anything that is not a JSON object of
// string values, longer than s3seal keeps, or that names the
// "aws:s3:arn" pair S3 sets with another value than the object's.
func KMSContext(doc []byte, bucket, key string, bucketKey bool) (string, error) {
	c, err := crypto.CanonicalKMSContext(doc)
	if err != nil {
		return "", err
	}
	m, err := crypto.KMSContextMap(c)
	if err != nil {
		return "", err
	}
	if v, ok := m[kms.ARNContextKey]; ok {
		if v != kms.ContextARN(bucket, key, bucketKey) {
			return "", fmt.Errorf("the encryption context's %s must be %s", kms.ARNContextKey, kms.ContextARN(bucket, key, bucketKey))
		}
		// S3 sets it: keep what the client added alone.
		delete(m, kms.ARNContextKey)
		if len(m) == 0 {
			return "", nil
		}
		raw, _ := json.Marshal(m)
		return crypto.CanonicalKMSContext(raw)
	}
	return c, nil
}

// KeyDisplayName is how answers name a master key: a KMS key by its name
// at the KMS (for AWS KMS, its ARN), a local key by its id.
func KeyDisplayName(id string) string {
	if crypto.IsExternalKeyID(id) {
		return kms.DisplayName(id)
	}
	return id
}

// kmsHeaders reports an object sealed under a KMS key as S3 reports
// SSE-KMS: the method, the key and whether a bucket key sealed it.
func kmsHeaders(env crypto.Envelope, h *backend.Headers) {
	if !env.External() {
		return
	}
	h.SSE, h.SSEKMSKeyID, h.SSEBucketKey = "aws:kms", kms.DisplayName(env.KeyID), env.BucketKey
	// SSEContext stays what the write's client sent (its answer echoes
	// it, as AWS's does); a read has none.
}

// newWrapKey is the key that wraps a new object's DEK, got before its
// body is read: a write whose key service cannot make one fails first.
func (s *Store) newWrapKey(ctx context.Context, keyID string, name crypto.Name, kmsContext string, bucketKey bool) (*crypto.WrapKey, error) {
	wk, err := s.kr.NewWrapKey(ctx, keyID, name, kmsContext, bucketKey)
	if err != nil {
		if e := kmsErr(err); e != nil {
			return nil, e
		}
		if errors.Is(err, crypto.ErrUnknownKey) {
			return nil, &Error{Code: "InternalError", Message: "the master key s3seal is configured to seal with is not in its keyring", Err: err}
		}
		return nil, fmt.Errorf("master key: %w", err)
	}
	return wk, nil
}

// kmsErr answers a key service's failure as S3 answers SSE-KMS failures,
// naming the service and the key; nil when err is none. A sealed key the
// service does not open as this object's (Invalid) is not answered here:
// on a read that is an integrity failure.
func kmsErr(err error) error {
	kind := kms.KindOf(err)
	if kind == 0 || kind == kms.Invalid {
		return nil
	}
	key := kms.KeyOf(err)
	service, name, _ := strings.Cut(key, ":")
	switch kind {
	case kms.Unavailable:
		return &Error{Code: "ServiceUnavailable", Err: err,
			Message: fmt.Sprintf("The KMS (%s) did not answer for key %s. Please try again.", service, name)}
	case kms.Disabled:
		return &Error{Code: "KMS.DisabledException", Err: err,
			Message: fmt.Sprintf("The KMS (%s) key %s is disabled.", service, name)}
	case kms.NotFound:
		return &Error{Code: "KMS.NotFoundException", Err: err,
			Message: fmt.Sprintf("The KMS (%s) has no key %s.", service, name)}
	case kms.Denied:
		return &Error{Code: "AccessDenied", Err: err,
			Message: fmt.Sprintf("The KMS (%s) refuses s3seal the use of key %s.", service, name)}
	}
	return &Error{Code: "InternalError", Err: err,
		Message: fmt.Sprintf("The KMS (%s) refused the request for key %s.", service, name)}
}

// unwrapErr answers a failure to open an object's data key. A key the
// keyring lacks, or one that does not open the wrapped key, is named, and
// counted: /readyz then looks again at whether the keyring opens the
// store's objects at all (CheckKeyring).
func (s *Store) unwrapErr(bucket, key string, err error) error {
	if e := kmsErr(err); e != nil {
		return e
	}
	switch {
	case errors.Is(err, crypto.ErrUnknownKey):
		s.keyFailures.Add(1)
		return &Error{Code: "InternalError", Err: err,
			Message: fmt.Sprintf("The object was sealed under master key %q, which is not in s3seal's keyring.", crypto.KeyIDOf(err))}
	case errors.Is(err, crypto.ErrKeyMismatch):
		s.keyFailures.Add(1)
		return &Error{Code: "InternalError", Err: fmt.Errorf("%w: %s/%s: %w", ErrIntegrity, bucket, key, err),
			Message: fmt.Sprintf("The object does not open under s3seal's master key %q: s3seal was given another key under that id "+
				"than the one the object was sealed with (GET /readyz says whether it opens none of the store's objects), "+
				"or the object was altered at the store, or copied there from another bucket or key (s3seal binds each object to its name). s3seal refuses to return it.", crypto.KeyIDOf(err))}
	}
	return integrityErr(bucket, key, err)
}

// checkMetaRoom refuses, before the body is read, an object whose sealed
// metadata and KMS envelope would not fit the store's 2 KB of user
// metadata together: the KMS key's id, sealed key and encryption context
// leave less room than a local key's (crypto.MaxObjectMetaFor).
func checkMetaRoom(wk *crypto.WrapKey, om crypto.ObjectMeta) error {
	over := wk.MetaOverhead()
	if over == 0 {
		return nil
	}
	if n, room := om.EncodedSize(), crypto.MaxObjectMetaFor(over); n > room {
		return errorf("MetadataTooLarge", "Your metadata headers exceed the maximum allowed metadata size: sealed under the KMS key %s (with its encryption context), an object's user metadata and content headers may take at most %d bytes (each entry's key and value plus 4, each header's value plus 3, plus 3); this request needs %d.",
			KeyDisplayName(wk.KeyID()), max(room, 0), n)
	}
	return nil
}

// maxStoreMeta is S3's limit on an object's user metadata: keys and
// values, in bytes.
const maxStoreMeta = 2048

func metaSize(m map[string]string) int {
	n := 0
	for k, v := range m {
		n += len(k) + len(v)
	}
	return n
}

// ErrorDetail is an error's message without the crypto package's kind
// ("invalid keyring: "), for a client's answer.
func ErrorDetail(err error) string {
	var ce *crypto.Error
	if errors.As(err, &ce) && ce.Msg != "" {
		return ce.Msg
	}
	return err.Error()
}

// openedByKMS checks that the KMS itself (not s3seal's cache) opens env's
// intermediate key for name and that it unwraps the data key: before a
// completion acknowledges an upload whose key may have gone since its
// parts, and before rewrap overwrites an object's only envelope.
func (s *Store) openedByKMS(ctx context.Context, env crypto.Envelope, name crypto.Name) error {
	if !env.External() || s.opt.KMS == nil {
		return nil
	}
	s.opt.KMS.Forget(env.KeyRequest(name), env.SealedKey)
	if _, _, err := s.kr.Unwrap(ctx, env, name); err != nil {
		return s.unwrapErr(name.Bucket, name.Key, err)
	}
	return nil
}

// IsKMSUnavailable reports whether err is a KMS that did not answer.
func IsKMSUnavailable(err error) bool { return kms.KindOf(err) == kms.Unavailable }
