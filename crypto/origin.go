package crypto

import (
	"encoding/binary"
)

// MetaOrigin holds, in a format 2 single-stream object whose bytes are a
// server-side copy of another object's stream, where those bytes were
// sealed: the [Origin], sealed by [SealOrigin] with the object's own data
// key. An object without it was sealed under its own data key.
const MetaOrigin = "s3seal-src"

const originLabel = "s3seal v2 origin\x00"

// OriginSize is the length of an origin's encoding: DEK (32) || oid (16)
// || u32be(part) || stream id (8).
const OriginSize = KeySize + OIDSize + 4 + StreamIDSize

// Origin names a sealed stream by the key it was sealed under: the data
// key and oid of the object (or upload) that wrote it, and the stream (part
// number and stream id; the zero Stream for a single-stream object). A
// copy that the store makes of that stream's ciphertext, without s3seal
// reading it, is opened with the Origin's key as that stream: the store
// moves the bytes, s3seal moves the key. An Origin is always a whole
// stream.
type Origin struct {
	DEK    [KeySize]byte
	OID    [OIDSize]byte
	Stream Stream
}

// OriginOf is the origin of stream s sealed under dk.
func OriginOf(dk *DataKey, s Stream) Origin {
	return Origin{DEK: dk.dek, OID: dk.oid, Stream: s}
}

// DataKey returns the data key that opens the origin's stream.
func (o Origin) DataKey() (*DataKey, error) {
	return Config{}.DataKeyFrom(o.DEK[:], o.OID)
}

func (o Origin) check() error {
	if o.Stream.Part > MaxParts {
		return newErr(ErrCorrupt, "origin part %d out of range", o.Stream.Part)
	}
	return nil
}

func appendOrigin(b []byte, o Origin) []byte {
	b = append(b, o.DEK[:]...)
	b = append(b, o.OID[:]...)
	b = binary.BigEndian.AppendUint32(b, o.Stream.Part)
	return append(b, o.Stream.ID[:]...)
}

// parseOrigin reads one origin encoding from the start of b.
func parseOrigin(b []byte) (Origin, []byte, error) {
	if len(b) < OriginSize {
		return Origin{}, nil, newErr(ErrCorrupt, "origin is %d bytes", len(b))
	}
	o := Origin{DEK: [KeySize]byte(b), OID: [OIDSize]byte(b[KeySize:])}
	o.Stream.Part = binary.BigEndian.Uint32(b[KeySize+OIDSize:])
	o.Stream.ID = [StreamIDSize]byte(b[KeySize+OIDSize+4:])
	return o, b[OriginSize:], o.check()
}

// SealOrigin seals o with dk for the value of [MetaOrigin]: base64url
// without padding of nonce (12) || AES-256-GCM(DEK, origin encoding, AAD =
// "s3seal v2 origin\x00" || oid). The origin is bound to dk's object as
// its sealed metadata is; a customer-keyed object has none.
func SealOrigin(dk *DataKey, o Origin) (string, error) {
	if dk.derived {
		return "", newErr(ErrKeyring, "a content key derived from a customer key seals no origin")
	}
	if err := o.check(); err != nil {
		return "", err
	}
	sealed, err := dk.sealBlob(appendOrigin(nil, o), dk.blobAAD(originLabel, nil))
	if err != nil {
		return "", err
	}
	return b64url.EncodeToString(sealed), nil
}

// OpenOrigin opens a [MetaOrigin] value sealed by SealOrigin for dk's
// object: [ErrAuth] when it was sealed for another, [ErrCorrupt] when it
// is malformed.
func OpenOrigin(dk *DataKey, v string) (Origin, error) {
	const sealedLen = nonceSize + OriginSize + tagSize
	if b64url.EncodedLen(sealedLen) != len(v) {
		return Origin{}, newErr(ErrCorrupt, "%s is %d characters", MetaOrigin, len(v))
	}
	sealed, err := b64url.DecodeString(v)
	if err != nil {
		return Origin{}, newErr(ErrCorrupt, "%s is not base64url", MetaOrigin)
	}
	b, err := dk.openBlob(sealed, dk.blobAAD(originLabel, nil), "origin")
	if err != nil {
		return Origin{}, err
	}
	o, rest, err := parseOrigin(b)
	if err == nil && len(rest) != 0 {
		err = newErr(ErrCorrupt, "origin is %d bytes", len(b))
	}
	return o, err
}
