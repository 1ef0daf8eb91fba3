package crypto

import (
	"crypto/hkdf"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"slices"
)

// KeySize is the size of a master key (KEK) and of a data key (DEK).
const KeySize = 32

const maxKeyIDLen = 64

// Keyring holds the master keys (KEKs) by id. The primary key wraps new
// data keys; every key in the ring can unwrap. Rotation: add a new key and
// make it primary; objects wrapped under the old key stay readable while it
// is in the ring.
//
// A Keyring is immutable and safe for concurrent use.
type Keyring struct {
	primary string
	keys    map[string][]byte
}

// NewKeyring returns a keyring of copies of keys (id -> 32-byte key) whose
// primary key is keys[primary]. Key ids are 1 to 64 characters of
// [A-Za-z0-9._-]. It fails with an error matching [ErrKeyring] on an
// invalid id, a key that is not 32 bytes, or a primary id that is not in
// keys.
func NewKeyring(primary string, keys map[string][]byte) (*Keyring, error) {
	if len(keys) == 0 {
		return nil, newErr(ErrKeyring, "no keys")
	}
	kr := &Keyring{primary: primary, keys: make(map[string][]byte, len(keys))}
	for id, k := range keys {
		if !ValidKeyID(id) {
			return nil, newErr(ErrKeyring, "invalid key id %q (want 1 to 64 of [A-Za-z0-9._-])", id)
		}
		if len(k) != KeySize {
			return nil, newErr(ErrKeyring, "key %s is %d bytes, want %d", id, len(k), KeySize)
		}
		kr.keys[id] = slices.Clone(k)
	}
	if _, ok := kr.keys[primary]; !ok {
		return nil, newErr(ErrKeyring, "primary key id %q is not in the keyring", primary)
	}
	return kr, nil
}

// Primary returns the id of the primary key.
func (kr *Keyring) Primary() string { return kr.primary }

// Has reports whether the keyring holds a key with this id.
func (kr *Keyring) Has(id string) bool {
	_, ok := kr.keys[id]
	return ok
}

// IDs returns the key ids, sorted.
func (kr *Keyring) IDs() []string {
	ids := make([]string, 0, len(kr.keys))
	for id := range kr.keys {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids
}

// ValidKeyID reports whether id is a valid master key id: 1 to 64
// characters of [A-Za-z0-9._-].
func ValidKeyID(id string) bool {
	if len(id) == 0 || len(id) > maxKeyIDLen {
		return false
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9',
			c == '.', c == '_', c == '-':
		default:
			return false
		}
	}
	return true
}

// ParseKey decodes a master key from standard base64 (with padding, as
// `openssl rand -base64 32` prints it). It fails with an error matching
// [ErrKeyring], which never quotes the input, unless the text decodes to
// exactly 32 bytes.
func ParseKey(b64 string) ([]byte, error) {
	k, err := base64.StdEncoding.Strict().DecodeString(b64)
	if err != nil {
		return nil, newErr(ErrKeyring, "key is not valid standard base64")
	}
	if len(k) != KeySize {
		return nil, newErr(ErrKeyring, "key decodes to %d bytes, want %d", len(k), KeySize)
	}
	return k, nil
}

// GenerateKey returns a new random 32-byte master key from crypto/rand.
func GenerateKey() ([]byte, error) {
	k := make([]byte, KeySize)
	if _, err := rand.Read(k); err != nil {
		return nil, err
	}
	return k, nil
}

// DeriveKey returns a 32-byte key for purpose derived (HKDF-SHA256) from the
// master key id, so that a feature can authenticate or seal its own tokens
// without a secret of its own; a purpose names one use (e.g. "s3seal lfs
// session v1") and keys for different purposes are independent. ok is false
// when the keyring has no key id.
func (kr *Keyring) DeriveKey(id, purpose string) (key []byte, ok bool) {
	kek, ok := kr.keys[id]
	if !ok {
		return nil, false
	}
	k, err := hkdf.Key(sha256.New, kek, nil, "s3seal derived key: "+purpose, KeySize)
	if err != nil {
		panic(err) // only for lengths HKDF cannot give
	}
	return k, true
}
