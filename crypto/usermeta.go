package crypto

import (
	"encoding/binary"
	"slices"
	"strings"
)

// MetaUser holds the user metadata entries s3seal seals (see
// [SealUserMeta]); absent when there are none.
const MetaUser = "s3seal-um"

const userMetaLabel = "s3seal v1 user meta\x00"

// maxSealedUserMeta bounds the sealed entries (S3 keeps at most 2 KB of
// user metadata in all).
const maxSealedUserMeta = 4 << 10

// SealUserMeta seals user metadata entries (lower-case keys without the
// x-amz-meta- prefix) with dk, for the value of [MetaUser]: base64url
// without padding of nonce (12) || AES-256-GCM(DEK, encoding, AAD =
// "s3seal v1 user meta\x00" || oid), where encoding = u8(n) || n times,
// keys strictly ascending bytewise: u8(len(key)) || key || u16be(len(value))
// || value. It returns "" for no entries.
func SealUserMeta(dk *DataKey, m map[string]string) (string, error) {
	if len(m) == 0 {
		return "", nil
	}
	return sealEntries(dk, userMetaLabel, m)
}

// sealEntries seals entries as SealUserMeta describes, under label.
func sealEntries(dk *DataKey, label string, m map[string]string) (string, error) {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	if len(keys) > 255 {
		return "", newErr(ErrCorrupt, "%d sealed metadata entries", len(keys))
	}
	b := []byte{byte(len(keys))}
	for _, k := range keys {
		v := m[k]
		if k == "" || len(k) > 255 || len(v) > maxSealedUserMeta || k != strings.ToLower(k) {
			return "", newErr(ErrCorrupt, "sealed metadata entry %q", k)
		}
		b = append(append(b, byte(len(k))), k...)
		b = append(binary.BigEndian.AppendUint16(b, uint16(len(v))), v...)
	}
	if len(b) > maxSealedUserMeta {
		return "", newErr(ErrCorrupt, "sealed metadata is %d bytes", len(b))
	}
	sealed, err := dk.sealBlob(b, dk.blobAAD(label, nil))
	if err != nil {
		return "", err
	}
	return b64url.EncodeToString(sealed), nil
}

// OpenUserMeta opens a [MetaUser] value sealed by SealUserMeta for dk's
// object. It fails with [ErrAuth] when v was not sealed with dk for this
// oid and [ErrCorrupt] when it is malformed or not canonical.
func OpenUserMeta(dk *DataKey, v string) (map[string]string, error) {
	return openEntries(dk, userMetaLabel, v, MetaUser, "sealed user metadata")
}

// openEntries opens entries sealed by sealEntries under label; name and
// what name the value in errors.
func openEntries(dk *DataKey, label, v, name, what string) (map[string]string, error) {
	if len(v) > b64url.EncodedLen(nonceSize+tagSize+maxSealedUserMeta) {
		return nil, newErr(ErrCorrupt, "%s is %d characters", name, len(v))
	}
	sealed, err := b64url.DecodeString(v)
	if err != nil {
		return nil, newErr(ErrCorrupt, "%s is not unpadded base64url", name)
	}
	b, err := dk.openBlob(sealed, dk.blobAAD(label, nil), what)
	if err != nil {
		return nil, err
	}
	bad := func() (map[string]string, error) { return nil, newErr(ErrCorrupt, "%s is malformed", what) }
	if len(b) < 1 || b[0] == 0 {
		return bad()
	}
	n := int(b[0])
	b = b[1:]
	m := make(map[string]string, n)
	prev := ""
	for i := 0; i < n; i++ {
		if len(b) < 1 || int(b[0]) == 0 || len(b) < 1+int(b[0])+2 {
			return bad()
		}
		k := string(b[1 : 1+b[0]])
		b = b[1+len(k):]
		vl := int(binary.BigEndian.Uint16(b))
		if len(b) < 2+vl || (i > 0 && k <= prev) || k != strings.ToLower(k) {
			return bad()
		}
		m[k] = string(b[2 : 2+vl])
		b = b[2+vl:]
		prev = k
	}
	if len(b) != 0 {
		return bad()
	}
	return m, nil
}
