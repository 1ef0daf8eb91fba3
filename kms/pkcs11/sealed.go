//go:build pkcs11 && cgo

package pkcs11

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"maps"
	"slices"

	"github.com/s3seal/s3seal/kms"
)

// The sealed form (see the package comment):
//
//	0x01 || u8(n) || CKA_ID || IV (12) || ciphertext (32) || tag (16)
const (
	sealedV1 = 0x01
	keySize  = 32
	ivSize   = 12
	tagSize  = 16
	tagBits  = tagSize * 8
)

// sealed is a sealed key taken apart.
type sealed struct {
	id     []byte
	iv     []byte
	ct     []byte // ciphertext and tag
	header []byte // 0x01 || u8(n) || id, bound into the additional data
}

// parseSealed takes b apart; anything but the version-1 layout of a
// 32-byte key is Invalid.
func parseSealed(b []byte) (sealed, error) {
	if len(b) < 2 || b[0] != sealedV1 {
		return sealed{}, kms.Errorf(kms.Invalid, "not a sealed key of the pkcs11 provider")
	}
	n := int(b[1])
	if n == 0 || len(b) != 2+n+ivSize+keySize+tagSize {
		return sealed{}, kms.Errorf(kms.Invalid, "a sealed key of %d bytes naming a %d-byte CKA_ID", len(b), n)
	}
	h := 2 + n
	return sealed{id: b[2:h], iv: b[h : h+ivSize], ct: b[h+ivSize:], header: b[:h]}, nil
}

// header returns the sealed form's first bytes for a key of CKA_ID id
// (1 to 255 bytes).
func header(id []byte) []byte {
	return append([]byte{sealedV1, byte(len(id))}, id...)
}

// versionName is how Version names the CKA_ID id: in hex.
func versionName(id []byte) string { return hex.EncodeToString(id) }

// additionalData is what GCM binds besides the key: the sealed form's
// header, the key's label and the encryption context, each length
// prefixed, the context's pairs in the byte order of their keys.
func additionalData(header []byte, label string, kctx map[string]string) []byte {
	b := slices.Clone(header)
	b = appendString(b, label)
	b = binary.BigEndian.AppendUint32(b, uint32(len(kctx)))
	for _, k := range slices.Sorted(maps.Keys(kctx)) {
		b = appendString(b, k)
		b = appendString(b, kctx[k])
	}
	return b
}

func appendString(b []byte, s string) []byte {
	b = binary.BigEndian.AppendUint32(b, uint32(len(s)))
	return append(b, s...)
}

// compareIDs orders CKA_IDs as big-endian unsigned numbers: leading zero
// bytes do not count, then the shorter is the smaller.
func compareIDs(a, b []byte) int {
	a, b = bytes.TrimLeft(a, "\x00"), bytes.TrimLeft(b, "\x00")
	if len(a) != len(b) {
		return len(a) - len(b)
	}
	return bytes.Compare(a, b)
}
