package crypto

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hkdf"
	"crypto/sha256"
	"encoding/binary"
	"io"
	"slices"
)

// WrappedSize is the size of a wrapped data key: nonce (12) || encrypted
// DEK (32) || tag (16).
const WrappedSize = nonceSize + KeySize + tagSize

const (
	wrapInfo     = "s3seal v1 wrap"
	wrapAADLabel = "s3seal v1 wrap\x00"
)

// Binding holds the values bound into a wrapped data key besides the key
// id and oid. For a single-stream object (Multipart false) they are the
// plaintext size and MD5 that s3seal reports as Content-Length and ETag:
// changing either in the metadata makes [Keyring.Unwrap] fail. A multipart
// object (Multipart true) binds neither (its manifest holds them); then
// PlainSize, PlainMD5 and Checksums must be zero.
type Binding struct {
	Multipart bool
	PlainSize int64
	PlainMD5  [16]byte
	// Checksums are the flexible checksums of the plaintext that s3seal
	// reports (x-amz-checksum-*): algorithm name, lower-case letters and
	// digits (ValidChecksumName), -> value as printed, at most
	// MaxChecksumValue printable ASCII bytes. Single-stream objects only.
	Checksums map[string]string
}

// MaxChecksumValue bounds the length of one checksum value in a Binding.
const MaxChecksumValue = 128

// ValidChecksumName reports whether name can name a checksum in a Binding:
// 1 to 16 lower-case ASCII letters and digits.
func ValidChecksumName(name string) bool {
	if len(name) == 0 || len(name) > 16 {
		return false
	}
	for i := 0; i < len(name); i++ {
		if c := name[i]; (c < 'a' || c > 'z') && (c < '0' || c > '9') {
			return false
		}
	}
	return true
}

func validChecksumValue(v string) bool {
	if len(v) == 0 || len(v) > MaxChecksumValue {
		return false
	}
	for i := 0; i < len(v); i++ {
		if v[i] < 0x21 || v[i] > 0x7e {
			return false
		}
	}
	return true
}

func (b Binding) check() error {
	if b.Multipart {
		if b.PlainSize != 0 || b.PlainMD5 != ([16]byte{}) || len(b.Checksums) != 0 {
			return newErr(ErrCorrupt, "multipart binding with a plaintext size, MD5 or checksum")
		}
		return nil
	}
	if b.PlainSize < 0 || b.PlainSize > MaxPlainSize {
		return newErr(ErrCorrupt, "plaintext size %d out of range", b.PlainSize)
	}
	if len(b.Checksums) > 255 {
		return newErr(ErrCorrupt, "%d checksums", len(b.Checksums))
	}
	for name, v := range b.Checksums {
		if !ValidChecksumName(name) || !validChecksumValue(v) {
			return newErr(ErrCorrupt, "invalid checksum %q", name)
		}
	}
	return nil
}

// Envelope is what an object carries besides its ciphertext: the wrapped
// data key and everything needed to unwrap it. [Envelope.Metadata] and
// [ParseMetadata] convert it to and from backend user metadata.
type Envelope struct {
	KeyID   string        // id of the master key that wrapped the DEK
	OID     [OIDSize]byte // object id
	Wrapped []byte        // WrappedSize bytes
	Binding Binding
}

// Wrap wraps dk's DEK under the master key keyID ("" means the primary
// key), bound to dk's oid, the key id and b, as docs/FORMAT.md specifies.
// The 12-byte wrap nonce comes from dk's Config.Rand (crypto/rand by
// default). It fails with [ErrUnknownKey] for a key id not in the ring and
// [ErrCorrupt] for an invalid binding.
func (kr *Keyring) Wrap(dk *DataKey, keyID string, b Binding) (Envelope, error) {
	if keyID == "" {
		keyID = kr.primary
	}
	kek, ok := kr.keys[keyID]
	if !ok {
		return Envelope{}, newErr(ErrUnknownKey, "%q", keyID)
	}
	if err := b.check(); err != nil {
		return Envelope{}, err
	}
	aead, err := wrapAEAD(kek, dk.oid)
	if err != nil {
		return Envelope{}, err
	}
	wrapped := make([]byte, nonceSize, WrappedSize)
	if _, err := io.ReadFull(dk.rand, wrapped); err != nil {
		return Envelope{}, err
	}
	wrapped = aead.Seal(wrapped, wrapped[:nonceSize], dk.dek[:], wrapAAD(keyID, dk.oid, b))
	return Envelope{KeyID: keyID, OID: dk.oid, Wrapped: wrapped, Binding: b}, nil
}

// Unwrap returns the data key of an envelope; its nonces for new segments
// (multipart parts) come from crypto/rand. It fails with an error matching
// [ErrUnknownKey] (naming the id) when the key id is not in the ring,
// [ErrAuth] when the wrapped key, oid, key id or binding are not what was
// wrapped, and [ErrCorrupt] for a malformed envelope.
func (kr *Keyring) Unwrap(e Envelope) (*DataKey, error) {
	if len(e.Wrapped) != WrappedSize {
		return nil, newErr(ErrCorrupt, "wrapped data key is %d bytes, want %d", len(e.Wrapped), WrappedSize)
	}
	if err := e.Binding.check(); err != nil {
		return nil, err
	}
	kek, ok := kr.keys[e.KeyID]
	if !ok {
		return nil, newErr(ErrUnknownKey, "%q", e.KeyID)
	}
	aead, err := wrapAEAD(kek, e.OID)
	if err != nil {
		return nil, err
	}
	var dek [KeySize]byte
	defer clear(dek[:])
	_, err = aead.Open(dek[:0], e.Wrapped[:nonceSize], e.Wrapped[nonceSize:], wrapAAD(e.KeyID, e.OID, e.Binding))
	if err != nil {
		return nil, newErr(ErrAuth, "wrapped data key (key id %q)", e.KeyID)
	}
	return Config{}.DataKeyFrom(dek[:], e.OID)
}

// wrapKey derives the key that wraps DEKs of object oid under kek:
// HKDF-SHA256(secret = kek, salt = oid, info = "s3seal v1 wrap"), 32 bytes.
func wrapKey(kek []byte, oid [OIDSize]byte) ([]byte, error) {
	return hkdf.Key(sha256.New, kek, oid[:], wrapInfo, KeySize)
}

func wrapAEAD(kek []byte, oid [OIDSize]byte) (cipher.AEAD, error) {
	k, err := wrapKey(kek, oid)
	if err != nil {
		return nil, err
	}
	defer clear(k)
	block, err := aes.NewCipher(k)
	if err != nil {
		return nil, err
	}
	return cipher.NewGCM(block)
}

// wrapAAD = "s3seal v1 wrap\x00" || u8(len(keyID)) || keyID || oid ||
// kind ('S' or 'M') || for 'S': u64be(plainSize) || plainMD5.
func wrapAAD(keyID string, oid [OIDSize]byte, b Binding) []byte {
	a := make([]byte, 0, len(wrapAADLabel)+1+len(keyID)+OIDSize+1+8+16)
	a = append(a, wrapAADLabel...)
	a = append(a, byte(len(keyID)))
	a = append(a, keyID...)
	a = append(a, oid[:]...)
	if b.Multipart {
		return append(a, 'M')
	}
	a = append(a, 'S')
	a = binary.BigEndian.AppendUint64(a, uint64(b.PlainSize))
	a = append(a, b.PlainMD5[:]...)
	if len(b.Checksums) == 0 {
		return a
	}
	// Only present when there are checksums, so objects without any keep
	// the shorter form (the 'S' form is otherwise fixed-length, so the two
	// cannot be confused).
	names := make([]string, 0, len(b.Checksums))
	for name := range b.Checksums {
		names = append(names, name)
	}
	slices.Sort(names)
	a = append(a, byte(len(names)))
	for _, name := range names {
		v := b.Checksums[name]
		a = append(a, byte(len(name)))
		a = append(a, name...)
		a = append(a, byte(len(v)))
		a = append(a, v...)
	}
	return a
}
