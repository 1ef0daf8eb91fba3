package crypto

import (
	"crypto/hkdf"
	"crypto/md5"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
)

// CheckSize is the size of a customer key check value.
const CheckSize = 16

const (
	customerContentInfo = "s3seal v1 ssec content"
	customerCheckInfo   = "s3seal v1 ssec check"
)

// CustomerKey is a key a client supplies with each request for an object
// (S3's SSE-C, "server-side encryption with customer-provided keys"). An
// object sealed with one needs both that key and the keyring's master key
// to be read: its segments are sealed under a content key derived from
// the object's DEK and the customer key; the DEK is wrapped as usual. The
// customer key itself is never stored, only a check value that s3seal
// can compare without the plaintext (docs/FORMAT.md, "Customer keys").
type CustomerKey struct {
	key [KeySize]byte
}

// NewCustomerKey returns the customer key of raw, which must be 32 bytes.
func NewCustomerKey(raw []byte) (*CustomerKey, error) {
	if len(raw) != KeySize {
		return nil, newErr(ErrKeyring, "customer key is %d bytes, want %d", len(raw), KeySize)
	}
	ck := &CustomerKey{}
	copy(ck.key[:], raw)
	return ck, nil
}

// MD5 returns the base64 MD5 of the key, as S3 reports it in
// x-amz-server-side-encryption-customer-key-MD5. It identifies the key to
// its owner; it is never stored by s3seal.
func (ck *CustomerKey) MD5() string {
	sum := md5.Sum(ck.key[:])
	return base64.StdEncoding.EncodeToString(sum[:])
}

// derive returns HKDF-SHA256(secret = DEK || customer key, salt = oid,
// info), n bytes: without the DEK (wrapped under the master key) and the
// customer key together, neither the content key nor the check value can
// be computed.
func (dk *DataKey) derive(ck *CustomerKey, info string, n int) ([]byte, error) {
	var secret [2 * KeySize]byte
	copy(secret[:], dk.dek[:])
	copy(secret[KeySize:], ck.key[:])
	defer clear(secret[:])
	return hkdf.Key(sha256.New, secret[:], dk.oid[:], info, n)
}

// CustomerCheck returns the check value of dk's object under ck: the value
// a new object stores (in its Binding) so that a later request with
// another key is told apart before any ciphertext is read. It is derived
// from the DEK too, so the object store, which never sees the DEK, cannot
// test guesses of the customer key against it.
func (dk *DataKey) CustomerCheck(ck *CustomerKey) ([]byte, error) {
	if dk.derived {
		return nil, newErr(ErrKeyring, "a content key has no customer check")
	}
	return dk.derive(ck, customerCheckInfo, CheckSize)
}

// ForCustomer returns the content key that seals and opens the segments
// of dk's object under customer key ck, after checking ck against check,
// the object's stored check value: a mismatch fails with
// [ErrCustomerKey], before anything is decrypted. The content key keeps
// dk's oid and source of nonces; it can never be wrapped (Keyring.Wrap
// refuses it), so it is never stored.
func (dk *DataKey) ForCustomer(ck *CustomerKey, check []byte) (*DataKey, error) {
	want, err := dk.CustomerCheck(ck)
	if err != nil {
		return nil, err
	}
	if len(check) != CheckSize || subtle.ConstantTimeCompare(want, check) != 1 {
		return nil, newErr(ErrCustomerKey, "the customer key does not match the object's")
	}
	k, err := dk.derive(ck, customerContentInfo, KeySize)
	if err != nil {
		return nil, err
	}
	defer clear(k)
	content, err := Config{Rand: dk.rand}.DataKeyFrom(k, dk.oid)
	if err != nil {
		return nil, err
	}
	content.derived = true
	return content, nil
}
