package crypto

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"strings"
)

// Master keys held outside s3seal (a KMS or an HSM) are named by an
// external key id: a scheme, a colon and the key's name at its service
// ("aws-kms:arn:aws:kms:...", "hcvault:tenant-a", "pkcs11:tenant-a": a
// Transit key name, a PKCS#11 object label). The key never enters s3seal's
// memory. For each object (or, with a bucket key, for each bucket, master
// key and context, for a while) the service makes a fresh 32-byte
// intermediate key and seals it; the object's DEK is wrapped under that
// key exactly as under a local master key, and the sealed intermediate
// key is stored beside it (s3seal-kms). docs/FORMAT.md, "Master keys in a
// KMS or an HSM", specifies it.

// MaxExternalKeyID bounds an external key id: it is stored in s3seal-kid
// and bound into the wrap with a one-byte length.
const MaxExternalKeyID = 255

// MaxSealedKey bounds the sealed form of an intermediate key that an
// envelope carries (s3seal-kms); AWS KMS's is about 185 bytes for 32.
const MaxSealedKey = 1024

// MaxKMSContext bounds the client's encryption context (canonical JSON)
// that an envelope carries (s3seal-kctx): S3 keeps at most 2 KB of user
// metadata per object, s3seal's own keys included, and the context
// leaves less room to the object's own metadata (MaxObjectMetaFor).
const MaxKMSContext = 512

// IsExternalKeyID reports whether id names a master key held outside
// s3seal: a scheme of lower-case letters, digits and '-', a colon, then
// 1 to MaxExternalKeyID bytes in all of printable ASCII without spaces.
// A local key id never has a colon.
func IsExternalKeyID(id string) bool {
	scheme, rest, ok := strings.Cut(id, ":")
	if !ok || scheme == "" || rest == "" || len(id) > MaxExternalKeyID {
		return false
	}
	for i := 0; i < len(scheme); i++ {
		if c := scheme[i]; (c < 'a' || c > 'z') && (c < '0' || c > '9') && c != '-' {
			return false
		}
	}
	for i := 0; i < len(rest); i++ {
		if rest[i] < 0x21 || rest[i] > 0x7e {
			return false
		}
	}
	return true
}

// KeyRequest says which intermediate key a [KeyService] makes or opens:
// the master key, the object it is for and what is bound to it.
type KeyRequest struct {
	// KeyID is the external id of the master key.
	KeyID string
	// Name is the object the key is for. With BucketKey set, the key
	// serves the whole bucket and the service binds only Name.Bucket.
	Name Name
	// Context is the client's encryption context, canonical JSON of a
	// string-to-string object ([CanonicalKMSContext]), "" for none.
	Context string
	// BucketKey asks for a key shared by the bucket's objects of the same
	// master key and context (S3's bucket keys): fewer calls to the
	// service for small objects.
	BucketKey bool
}

// KeyService holds master keys outside s3seal. Its errors are passed on
// unchanged (wrapped), so a caller can tell an unreachable service from a
// disabled or unknown key.
type KeyService interface {
	// Handles reports whether the service holds master keys of the
	// external id's kind (its scheme).
	Handles(keyID string) bool
	// NewKey returns a fresh 32-byte intermediate key and its sealed form
	// under the master key req.KeyID, bound to req. keyID is the master
	// key's canonical external id (an alias resolved to what the service
	// reports), which the envelope records.
	NewKey(ctx context.Context, req KeyRequest) (key, sealed []byte, keyID string, err error)
	// OpenKey returns the intermediate key that sealed holds, sealed by
	// NewKey (or re-sealed by the service) for req.
	OpenKey(ctx context.Context, req KeyRequest, sealed []byte) (key []byte, err error)
	// Forget is told that the key OpenKey answered for req and sealed
	// did not authenticate the wrap: a service that caches keys drops it.
	Forget(req KeyRequest, sealed []byte)
}

// CanonicalKMSContext returns an encryption context (a JSON object of
// string values, as S3's x-amz-server-side-encryption-context holds it
// once decoded) in the canonical form an envelope binds: compact JSON,
// keys sorted, no HTML escaping (a reader takes the bound bytes as they
// are: the form only makes s3seal's writes deterministic). An empty object gives "". It fails with [ErrKeyring] on
// anything else, or when the canonical form is longer than MaxKMSContext.
func CanonicalKMSContext(doc []byte) (string, error) {
	var m map[string]string
	dec := json.NewDecoder(bytes.NewReader(doc))
	if err := dec.Decode(&m); err != nil || m == nil || dec.More() {
		return "", newErr(ErrKeyring, "the encryption context is not a JSON object of string values")
	}
	if _, err := dec.Token(); err != io.EOF {
		return "", newErr(ErrKeyring, "the encryption context is not a JSON object of string values")
	}
	if len(m) == 0 {
		return "", nil
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(m); err != nil { // sorts the keys
		return "", newErr(ErrKeyring, "the encryption context: %v", err)
	}
	out := bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
	if len(out) > MaxKMSContext {
		return "", newErr(ErrKeyring, "the encryption context is %d bytes as canonical JSON, at most %d", len(out), MaxKMSContext)
	}
	return string(out), nil
}

// KMSContextMap returns the pairs of a canonical encryption context ("" is
// none).
func KMSContextMap(canonical string) (map[string]string, error) {
	m := map[string]string{}
	if canonical == "" {
		return m, nil
	}
	if err := json.Unmarshal([]byte(canonical), &m); err != nil {
		return nil, newErr(ErrCorrupt, "encryption context is not a JSON object of string values")
	}
	return m, nil
}

// MetaOverhead is how many bytes of the store's user metadata an
// envelope wrapped with wk takes beyond what a local master key's takes
// (whose id is at most 64 bytes): for a KMS key, the longer key id and
// s3seal-kms, s3seal-kctx and s3seal-bk. Known before the object's body
// is read, so a write whose metadata cannot fit is refused first.
func (wk *WrapKey) MetaOverhead() int {
	if !wk.external {
		return 0
	}
	n := max(0, len(wk.keyID)-maxKeyIDLen)
	n += len(MetaSealedKey) + b64url.EncodedLen(len(wk.sealed))
	if wk.kmsCtx != "" {
		n += len(MetaKMSContext) + b64url.EncodedLen(len(wk.kmsCtx))
	}
	if wk.bucketKey {
		n += len(MetaBucketKey) + 1
	}
	return n
}

// MaxObjectMetaFor is MaxObjectMeta for an envelope whose metadata takes
// overhead more bytes (MetaOverhead): the sealed object metadata grows by
// 4 bytes of base64 for every 3 of its encoding, so it must shrink by 3
// for every 4 the envelope adds. Below zero nothing fits.
func MaxObjectMetaFor(overhead int) int {
	return MaxObjectMeta - (overhead*3+3)/4
}
