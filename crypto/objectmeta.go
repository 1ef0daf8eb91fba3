package crypto

import (
	"encoding/binary"
	"slices"
	"strings"
)

// MetaObject holds, in a format 2 object, everything its client wrote
// beside the bytes: every user metadata entry and the content headers,
// sealed by [SealObjectMeta]. A format 2 object always carries it.
const MetaObject = "s3seal-meta"

const objectMetaLabel = "s3seal v2 object meta\x00"

// MaxObjectMeta bounds the encoding [SealObjectMeta] seals (see
// [ObjectMeta.EncodedSize]). It is what fits, sealed and in base64url,
// beside s3seal's other metadata keys of the longest kind (a 64-character
// key id, a customer key, a 13-digit size (5 TiB, S3's largest object) and
// a SHA-512 checksum) within
// the 2 KB of user metadata S3 keeps per object, counted as S3 counts it
// (keys plus values): TestObjectMetaFitsS3Limit holds it there.
const MaxObjectMeta = 1190

// maxObjectMetaRead bounds what [OpenObjectMeta] accepts, above
// MaxObjectMeta so that a later s3seal may raise the limit.
const maxObjectMetaRead = 8 << 10

// ObjectMeta is what a client writes beside an object's bytes and reads
// back on HEAD and GET: user metadata and the standard content headers. It
// is sealed whole with the object's data key; the store sees none of it.
// Empty strings are headers the client did not send.
type ObjectMeta struct {
	// User is the user metadata: lower-case keys without x-amz-meta-.
	User map[string]string

	ContentType        string
	ContentEncoding    string
	ContentDisposition string
	ContentLanguage    string
	CacheControl       string
	Expires            string // as the client sent it
	// WebsiteRedirect is x-amz-website-redirect-location.
	WebsiteRedirect string
}

// fields lists the content headers by their id in the encoding (the
// index plus one); the ids are the format's and never change.
func (m *ObjectMeta) fields() [7]*string {
	return [7]*string{&m.ContentType, &m.ContentEncoding, &m.ContentDisposition,
		&m.ContentLanguage, &m.CacheControl, &m.Expires, &m.WebsiteRedirect}
}

// EncodedSize is the length of m's encoding: 3 bytes, and for each header
// sent its value's length plus 3, for each user metadata entry its key's
// and value's lengths plus 4. [SealObjectMeta] refuses more than
// MaxObjectMeta.
func (m ObjectMeta) EncodedSize() int {
	n := 3
	for _, f := range m.fields() {
		if *f != "" {
			n += 3 + len(*f)
		}
	}
	for k, v := range m.User {
		n += 4 + len(k) + len(v)
	}
	return n
}

// SealObjectMeta seals m with dk for the value of [MetaObject]: base64url
// without padding of nonce (12) || AES-256-GCM(DEK, encoding, AAD =
// "s3seal v2 object meta\x00" || oid), where
//
//	encoding = u8(h) || h times, ids strictly ascending:
//	               u8(id) || u16be(len(value)) || value   (value not empty)
//	           || u16be(n) || n times, keys strictly ascending bytewise:
//	               u16be(len(key)) || key || u16be(len(value)) || value
//
// with the header ids of docs/FORMAT.md (1 Content-Type, 2
// Content-Encoding, 3 Content-Disposition, 4 Content-Language, 5
// Cache-Control, 6 Expires, 7 x-amz-website-redirect-location) and
// non-empty, lower-case keys. It fails with [ErrCorrupt] for an invalid key
// or an encoding over MaxObjectMeta.
func SealObjectMeta(dk *DataKey, m ObjectMeta) (string, error) {
	n := m.EncodedSize()
	if n > MaxObjectMeta {
		return "", newErr(ErrCorrupt, "object metadata encodes to %d bytes, at most %d", n, MaxObjectMeta)
	}
	b := make([]byte, 1, n)
	for i, f := range m.fields() {
		if *f != "" {
			b[0]++
			b = append(b, byte(i+1))
			b = append(binary.BigEndian.AppendUint16(b, uint16(len(*f))), *f...)
		}
	}
	keys := make([]string, 0, len(m.User))
	for k := range m.User {
		if k == "" || k != strings.ToLower(k) {
			return "", newErr(ErrCorrupt, "user metadata key %q", k)
		}
		keys = append(keys, k)
	}
	slices.Sort(keys)
	b = binary.BigEndian.AppendUint16(b, uint16(len(keys)))
	for _, k := range keys {
		b = append(binary.BigEndian.AppendUint16(b, uint16(len(k))), k...)
		b = append(binary.BigEndian.AppendUint16(b, uint16(len(m.User[k]))), m.User[k]...)
	}
	sealed, err := dk.sealBlob(b, dk.blobAAD(objectMetaLabel, nil))
	if err != nil {
		return "", err
	}
	return b64url.EncodeToString(sealed), nil
}

// OpenObjectMeta opens a [MetaObject] value sealed by SealObjectMeta for
// dk's object: [ErrAuth] when v was not sealed with dk for this oid (or was
// changed), [ErrCorrupt] when it is malformed or not canonical.
func OpenObjectMeta(dk *DataKey, v string) (ObjectMeta, error) {
	if len(v) > b64url.EncodedLen(nonceSize+tagSize+maxObjectMetaRead) {
		return ObjectMeta{}, newErr(ErrCorrupt, "%s is %d characters", MetaObject, len(v))
	}
	sealed, err := b64url.DecodeString(v)
	if err != nil {
		return ObjectMeta{}, newErr(ErrCorrupt, "%s is not unpadded base64url", MetaObject)
	}
	b, err := dk.openBlob(sealed, dk.blobAAD(objectMetaLabel, nil), "sealed object metadata")
	if err != nil {
		return ObjectMeta{}, err
	}
	m, ok := decodeObjectMeta(b)
	if !ok {
		return ObjectMeta{}, newErr(ErrCorrupt, "sealed object metadata is malformed")
	}
	return m, nil
}

// decodeObjectMeta parses the encoding of SealObjectMeta, refusing
// anything SealObjectMeta would not have written.
func decodeObjectMeta(b []byte) (ObjectMeta, bool) {
	var m ObjectMeta
	fields := m.fields()
	if len(b) < 1 {
		return m, false
	}
	h := int(b[0])
	b = b[1:]
	prev := 0
	for range h {
		if len(b) < 3 {
			return m, false
		}
		id := int(b[0])
		val, rest, ok := cutU16Prefixed(b[1:])
		if !ok || id <= prev || id > len(fields) || val == "" {
			return m, false
		}
		*fields[id-1], b, prev = val, rest, id
	}
	if len(b) < 2 {
		return m, false
	}
	n := int(binary.BigEndian.Uint16(b))
	b = b[2:]
	if n > 0 {
		m.User = make(map[string]string, min(n, 256))
	}
	last := ""
	for i := range n {
		k, rest, ok := cutU16Prefixed(b)
		if !ok || k == "" || k != strings.ToLower(k) || (i > 0 && k <= last) {
			return m, false
		}
		v, rest, ok := cutU16Prefixed(rest)
		if !ok {
			return m, false
		}
		m.User[k], b, last = v, rest, k
	}
	return m, len(b) == 0
}

// cutU16Prefixed cuts u16be(len) || bytes off the front of b.
func cutU16Prefixed(b []byte) (string, []byte, bool) {
	if len(b) < 2 {
		return "", nil, false
	}
	n := int(binary.BigEndian.Uint16(b))
	if len(b) < 2+n {
		return "", nil, false
	}
	return string(b[2 : 2+n]), b[2+n:], true
}
