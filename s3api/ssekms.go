package s3api

import (
	"encoding/base64"
	"errors"
	"strings"

	"github.com/s3seal/s3seal/s3api/s3err"
	"github.com/s3seal/s3seal/sealstore"
)

// SSE-KMS terminated in s3seal. With a key service configured, a write
// that asks for aws:kms (its headers, or the bucket's default encryption)
// is sealed under the KMS master key it names, its encryption context
// and bucket key bound to the object; the store is asked for no
// encryption. A credential with SSEKMSToStore keeps today's forwarding:
// its SSE-KMS writes go to the store, which holds the keys, on top of
// s3seal's sealing under the credential's key. Without a key service,
// every SSE-KMS write is forwarded (docs/DESIGN.md, "Master keys in a
// KMS").

// sealKey is the master key a write is sealed under.
type sealKey struct {
	keyID, kmsContext string
	bucketKey         bool
}

// sealKeyOf decides a write's master key from the encryption headers
// asks for (the request's, after the bucket's default) and the
// credential. For a terminated SSE-KMS write it names the key in headers
// as answers report it.
func (s *Server) sealKeyOf(cred Credential, bucket, key string, headers *sealstore.Headers) (sealKey, error) {
	sk := sealKey{keyID: cred.KeyID}
	if !strings.HasPrefix(headers.SSE, "aws:kms") || cred.SSEKMSToStore {
		return sk, nil
	}
	id, terminated, err := s.store.KMSKey(headers.SSEKMSKeyID, cred.KeyID)
	switch {
	case !terminated:
		return sk, nil
	case errors.Is(err, sealstore.ErrNoKMSKey):
		return sk, s3err.New(s3err.InvalidArgument, "Server Side Encryption with AWS KMS needs a key id here: s3seal has no default KMS key (give x-amz-server-side-encryption-aws-kms-key-id).")
	case err != nil:
		return sk, err
	}
	if !s.mayUseKMSKey(cred, id) {
		return sk, s3err.New(s3err.AccessDenied, "This credential may not use the KMS key "+headers.SSEKMSKeyID+" (kms_keys).")
	}
	sk = sealKey{keyID: id, bucketKey: headers.SSEBucketKey}
	if headers.SSEContext != "" {
		raw, err := base64.StdEncoding.DecodeString(headers.SSEContext)
		if err != nil {
			return sk, s3err.New(s3err.InvalidArgument, "The header 'x-amz-server-side-encryption-context' shall be Base64-encoded UTF-8 string holding JSON which represents a string-string map")
		}
		if sk.kmsContext, err = sealstore.KMSContext(raw, bucket, key, sk.bucketKey); err != nil {
			return sk, s3err.New(s3err.InvalidArgument, "The x-amz-server-side-encryption-context header: "+sealstore.ErrorDetail(err))
		}
	}
	headers.SSE, headers.SSEKMSKeyID = "aws:kms", sealstore.KeyDisplayName(id)
	return sk, nil
}

// mayUseKMSKey reports whether cred may have a write sealed under the KMS
// key id (an external id): its own key_id, the default KMS key, a key its
// kms_keys names, or any with "*". Decided before any KMS call, so a
// refusal tells nothing of the key.
func (s *Server) mayUseKMSKey(cred Credential, id string) bool {
	if own, _, err := s.store.KMSKey("", cred.KeyID); err == nil && own == id {
		return true // the credential's key_id, or else the default KMS key
	}
	if def, _, err := s.store.KMSKey("", ""); err == nil && def == id {
		return true
	}
	for _, k := range cred.KMSKeys {
		if k == "*" {
			return true
		}
		if named, _, err := s.store.KMSKey(k, ""); err == nil && named == id {
			return true
		}
	}
	return false
}
