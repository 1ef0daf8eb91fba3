package crypto

import (
	"context"
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
// A keyring may also name master keys held outside s3seal
// ([WithService]): by their external id, or by a local alias of one.
//
// A Keyring is immutable and safe for concurrent use.
type Keyring struct {
	primary string
	keys    map[string][]byte
	// aliases maps a local id to the external id of a master key held by
	// svc; svc is nil when the keyring has no external keys.
	aliases map[string]string
	svc     KeyService
	// uses, when set, is told of every wrap and unwrap (WithKeyUses).
	uses func(context.Context, KeyUse)
}

// KeyUse is one use of a master key: a data key wrapped or unwrapped
// under it, told to the function WithKeyUses gives (the audit trail).
// It holds no key material.
type KeyUse struct {
	Op    string // "wrap" or "unwrap"
	KeyID string // the master key's id, as the envelope names it
	Name  Name   // the object's
	Err   error  // nil when the key wrapped or opened the data key
}

// WithKeyUses returns a keyring that is kr and tells f of every use of
// a master key: each data key wrapped (WrapKey.Wrap) or unwrapped
// (Unwrap), with the context of the call that made it. f must be safe
// for concurrent use, and quick.
func (kr *Keyring) WithKeyUses(f func(context.Context, KeyUse)) *Keyring {
	out := *kr
	out.uses = f
	return &out
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

// WithService returns a keyring that has kr's local keys and, through
// svc, master keys held outside s3seal: every external id, and each
// alias of aliases (local id -> external id) by its local name. primary
// names the new primary key (a local id, an alias or an external id; ""
// keeps kr's). It fails with [ErrKeyring] on an alias that is a local id
// already or not a valid local id, an external id that is not valid, or
// a primary the keyring cannot name. kr may be nil: the keyring then has
// no local keys.
func (kr *Keyring) WithService(svc KeyService, primary string, aliases map[string]string) (*Keyring, error) {
	if svc == nil {
		return nil, newErr(ErrKeyring, "no key service")
	}
	out := &Keyring{keys: map[string][]byte{}, aliases: map[string]string{}, svc: svc}
	if kr != nil {
		out.primary, out.keys, out.uses = kr.primary, kr.keys, kr.uses
	}
	for alias, ext := range aliases {
		if !ValidKeyID(alias) {
			return nil, newErr(ErrKeyring, "invalid key id %q (want 1 to 64 of [A-Za-z0-9._-])", alias)
		}
		if _, dup := out.keys[alias]; dup {
			return nil, newErr(ErrKeyring, "key id %q names both a local key and %s", alias, ext)
		}
		if !IsExternalKeyID(ext) {
			return nil, newErr(ErrKeyring, "key id %q: %q is not an external key id", alias, ext)
		}
		out.aliases[alias] = ext
	}
	if primary != "" {
		out.primary = primary
	}
	if !out.Has(out.primary) {
		return nil, newErr(ErrKeyring, "primary key id %q is not in the keyring", out.primary)
	}
	return out, nil
}

// Primary returns the id of the primary key.
func (kr *Keyring) Primary() string { return kr.primary }

// Has reports whether the keyring can name a key with this id: a local
// key, an alias, or (with a key service) any external id.
func (kr *Keyring) Has(id string) bool {
	if _, ok := kr.keys[id]; ok {
		return true
	}
	_, ok := kr.External(id)
	return ok
}

// External returns the external id id names (itself or the external key
// of an alias), and whether it names one.
func (kr *Keyring) External(id string) (string, bool) {
	if ext, ok := kr.aliases[id]; ok {
		return ext, true
	}
	if _, local := kr.keys[id]; local || kr.svc == nil || !IsExternalKeyID(id) || !kr.svc.Handles(id) {
		return "", false
	}
	return id, true
}

// IDs returns the ids of the local keys and the aliases, sorted.
func (kr *Keyring) IDs() []string {
	ids := make([]string, 0, len(kr.keys)+len(kr.aliases))
	for id := range kr.keys {
		ids = append(ids, id)
	}
	for id := range kr.aliases {
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

// DerivationKey returns the id of the local master key DeriveKey derives
// from for new tokens: the primary, or, when the primary is held outside
// s3seal, the first local key (sorted by id). ok is false when the
// keyring has no local key.
func (kr *Keyring) DerivationKey() (id string, ok bool) {
	if _, local := kr.keys[kr.primary]; local {
		return kr.primary, true
	}
	ids := make([]string, 0, len(kr.keys))
	for id := range kr.keys {
		ids = append(ids, id)
	}
	if len(ids) == 0 {
		return "", false
	}
	slices.Sort(ids)
	return ids[0], true
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
