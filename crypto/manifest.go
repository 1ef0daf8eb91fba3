package crypto

import (
	"crypto/md5"
	"encoding/binary"
	"encoding/hex"
	"io"
	"strconv"
)

const (
	manifestLabel = "s3seal v1 manifest\x00"
	// manifestV2Label starts the encoding of a manifest in which a part
	// may be a copy of another object's stream (its Origin); the AAD keeps
	// manifestLabel.
	manifestV2Label = "s3seal v2 manifest\x00"
	partLabel       = "s3seal v1 part\x00"

	// MaxParts is S3's bound on the parts of one upload, and the highest
	// part number.
	MaxParts = 10000
	// MaxETagLen bounds a backend part ETag kept in a part record.
	MaxETagLen = 128
)

// ManifestPart is one part of a completed multipart object.
type ManifestPart struct {
	Stream    Stream // part number and stream id of the part's sealed stream
	PlainSize int64
	PlainMD5  [16]byte
	Checksums map[string]string // the part's checksums, as for a Binding
	// Origin, when set, says the part's bytes are a copy of another
	// object's stream, opened with the Origin's key as its stream; Stream
	// then still names the part's record (its number and stream id).
	Origin *Origin
}

// Key returns the data key and stream that open the part's bytes: the
// object's own (dk) or its Origin's.
func (p ManifestPart) Key(dk *DataKey) (*DataKey, Stream, error) {
	if p.Origin == nil {
		return dk, p.Stream, nil
	}
	ok, err := p.Origin.DataKey()
	return ok, p.Origin.Stream, err
}

// Manifest describes a completed multipart object: its parts in ascending
// part number, and the checksums of the whole object (a composite value
// ends in "-N", as S3 prints it). It is sealed with the object's data key
// ([SealManifest]) and stored beside the object; docs/FORMAT.md says where.
type Manifest struct {
	Parts     []ManifestPart
	Checksums map[string]string
}

// Size is the plaintext size of the object.
func (m Manifest) Size() int64 {
	var n int64
	for _, p := range m.Parts {
		n += p.PlainSize
	}
	return n
}

// CipherSize is the size of the object in the store: each part is its own
// sealed stream.
func (m Manifest) CipherSize() int64 {
	var n int64
	for _, p := range m.Parts {
		n += CiphertextSize(p.PlainSize)
	}
	return n
}

// ETag is S3's multipart ETag of the plaintext: the hex MD5 of the
// concatenated binary part MD5s, then "-" and the number of parts.
func (m Manifest) ETag() string {
	h := md5.New()
	for _, p := range m.Parts {
		h.Write(p.PlainMD5[:])
	}
	return hex.EncodeToString(h.Sum(nil)) + "-" + strconv.Itoa(len(m.Parts))
}

// PartAt returns the index of the part holding plaintext offset off (0 <=
// off < Size()), the plaintext offset where that part starts, and the
// ciphertext offset where its stream starts in the object. Parts are
// searched in order; a multipart object has at most MaxParts.
func (m Manifest) PartAt(off int64) (i int, plainStart, cipherStart int64) {
	for i = range m.Parts {
		if n := m.Parts[i].PlainSize; off < plainStart+n {
			return i, plainStart, cipherStart
		}
		plainStart += m.Parts[i].PlainSize
		cipherStart += CiphertextSize(m.Parts[i].PlainSize)
	}
	return len(m.Parts), plainStart, cipherStart
}

func (m Manifest) check() error {
	if len(m.Parts) == 0 || len(m.Parts) > MaxParts {
		return newErr(ErrCorrupt, "manifest with %d parts", len(m.Parts))
	}
	var total int64
	for i, p := range m.Parts {
		if p.Stream.Part == 0 || p.Stream.Part > MaxParts || (i > 0 && p.Stream.Part <= m.Parts[i-1].Stream.Part) {
			return newErr(ErrCorrupt, "manifest part %d: part number %d out of order", i, p.Stream.Part)
		}
		if p.PlainSize < 0 || p.PlainSize > MaxPlainSize-total {
			return newErr(ErrCorrupt, "manifest part %d: size %d out of range", i, p.PlainSize)
		}
		total += p.PlainSize
		if err := checkChecksums(p.Checksums); err != nil {
			return err
		}
		if p.Origin != nil {
			if err := p.Origin.check(); err != nil {
				return err
			}
		}
	}
	return checkChecksums(m.Checksums)
}

// SealManifest seals m with dk: nonce (12, from dk's Config.Rand) ||
// AES-256-GCM(DEK, manifest encoding, AAD = "s3seal v1 manifest\x00" ||
// oid). It fails with [ErrCorrupt] for an invalid manifest.
func SealManifest(dk *DataKey, m Manifest) ([]byte, error) {
	if err := m.check(); err != nil {
		return nil, err
	}
	return dk.sealBlob(encodeManifest(m), dk.blobAAD(manifestLabel, nil))
}

// encodeManifest is the manifest encoding of a checked m: version 1 when
// no part has an origin (what every s3seal reads), else version 2, whose
// parts each end in u8(0), or u8(1) and the origin's encoding.
func encodeManifest(m Manifest) []byte {
	v2 := false
	for _, p := range m.Parts {
		v2 = v2 || p.Origin != nil
	}
	label := manifestLabel
	if v2 {
		label = manifestV2Label
	}
	b := binary.BigEndian.AppendUint32([]byte(label), uint32(len(m.Parts)))
	for _, p := range m.Parts {
		b = binary.BigEndian.AppendUint32(b, p.Stream.Part)
		b = append(b, p.Stream.ID[:]...)
		b = binary.BigEndian.AppendUint64(b, uint64(p.PlainSize))
		b = append(b, p.PlainMD5[:]...)
		b = appendChecksumBlock(b, p.Checksums)
		switch {
		case !v2:
		case p.Origin == nil:
			b = append(b, 0)
		default:
			b = appendOrigin(append(b, 1), *p.Origin)
		}
	}
	return appendChecksumBlock(b, m.Checksums)
}

// OpenManifest opens a manifest sealed by SealManifest for dk's object. It
// fails with [ErrAuth] when sealed was not made with dk for this oid and
// [ErrCorrupt] when it is malformed.
func OpenManifest(dk *DataKey, sealed []byte) (Manifest, error) {
	b, err := dk.openBlob(sealed, dk.blobAAD(manifestLabel, nil), "manifest")
	if err != nil {
		return Manifest{}, err
	}
	return decodeManifest(b)
}

// decodeManifest parses a manifest encoding; only a canonical, valid one
// is accepted.
func decodeManifest(b []byte) (Manifest, error) {
	var err error
	bad := newErr(ErrCorrupt, "malformed manifest")
	rest, ok := cutPrefix(b, manifestLabel)
	v2 := false
	if !ok {
		rest, v2 = cutPrefix(b, manifestV2Label)
	}
	if (!ok && !v2) || len(rest) < 4 {
		return Manifest{}, bad
	}
	n := binary.BigEndian.Uint32(rest)
	rest = rest[4:]
	if n == 0 || n > MaxParts {
		return Manifest{}, bad
	}
	m := Manifest{Parts: make([]ManifestPart, n)}
	for i := range m.Parts {
		const fixed = 4 + StreamIDSize + 8 + 16
		if len(rest) < fixed {
			return Manifest{}, bad
		}
		p := &m.Parts[i]
		p.Stream.Part = binary.BigEndian.Uint32(rest)
		p.Stream.ID = [StreamIDSize]byte(rest[4:])
		p.PlainSize = int64(binary.BigEndian.Uint64(rest[4+StreamIDSize:]))
		p.PlainMD5 = [16]byte(rest[4+StreamIDSize+8:])
		if p.Checksums, rest, err = parseChecksumBlock(rest[fixed:]); err != nil {
			return Manifest{}, err
		}
		if !v2 {
			continue
		}
		if len(rest) < 1 || rest[0] > 1 {
			return Manifest{}, bad
		}
		borrowed := rest[0] == 1
		if rest = rest[1:]; borrowed {
			var o Origin
			if o, rest, err = parseOrigin(rest); err != nil {
				return Manifest{}, err
			}
			p.Origin = &o
		}
	}
	if m.Checksums, rest, err = parseChecksumBlock(rest); err != nil {
		return Manifest{}, err
	}
	if len(rest) != 0 {
		return Manifest{}, bad
	}
	return m, m.check()
}

// PartRecord is what s3seal records about one uploaded part while the
// upload is in progress: which sealed stream it is, its plaintext size, MD5
// and checksums, and the ETag the store gave the part's ciphertext (which
// tells which of several uploads of one part number the store kept).
type PartRecord struct {
	Stream      Stream
	PlainSize   int64
	PlainMD5    [16]byte
	BackendETag string // 1 to MaxETagLen printable ASCII bytes
	Checksums   map[string]string
	// Origin, when set, says the part is a copy the store made of another
	// object's stream (UploadPartCopy of a whole stream).
	Origin *Origin
}

// SealPartRecord seals r with dk: nonce || AES-256-GCM(DEK, record
// encoding, AAD = "s3seal v1 part\x00" || oid || u32be(part)).
func SealPartRecord(dk *DataKey, r PartRecord) ([]byte, error) {
	if r.Stream.Part == 0 || r.Stream.Part > MaxParts || r.PlainSize < 0 || r.PlainSize > MaxPlainSize ||
		!validChecksumValue(r.BackendETag) || len(r.BackendETag) > MaxETagLen {
		return nil, newErr(ErrCorrupt, "invalid part record for part %d", r.Stream.Part)
	}
	if err := checkChecksums(r.Checksums); err != nil {
		return nil, err
	}
	if r.Origin != nil {
		if err := r.Origin.check(); err != nil {
			return nil, err
		}
	}
	return dk.sealBlob(encodePartRecord(r), dk.blobAAD(partLabel, binary.BigEndian.AppendUint32(nil, r.Stream.Part)))
}

func encodePartRecord(r PartRecord) []byte {
	b := append([]byte(nil), r.Stream.ID[:]...)
	b = binary.BigEndian.AppendUint64(b, uint64(r.PlainSize))
	b = append(b, r.PlainMD5[:]...)
	b = append(b, byte(len(r.BackendETag)))
	b = append(b, r.BackendETag...)
	b = appendChecksumBlock(b, r.Checksums)
	if r.Origin != nil {
		b = appendOrigin(append(b, 1), *r.Origin)
	}
	return b
}

// OpenPartRecord opens a record sealed by SealPartRecord for part of dk's
// upload.
func OpenPartRecord(dk *DataKey, part uint32, sealed []byte) (PartRecord, error) {
	b, err := dk.openBlob(sealed, dk.blobAAD(partLabel, binary.BigEndian.AppendUint32(nil, part)), "part record")
	if err != nil {
		return PartRecord{}, err
	}
	return decodePartRecord(part, b)
}

// decodePartRecord parses the record encoding of part.
func decodePartRecord(part uint32, b []byte) (PartRecord, error) {
	var err error
	bad := newErr(ErrCorrupt, "malformed part record")
	const fixed = StreamIDSize + 8 + 16
	if len(b) < fixed {
		return PartRecord{}, bad
	}
	r := PartRecord{Stream: Stream{Part: part, ID: [StreamIDSize]byte(b)}}
	r.PlainSize = int64(binary.BigEndian.Uint64(b[StreamIDSize:]))
	r.PlainMD5 = [16]byte(b[StreamIDSize+8:])
	etag, rest, ok := cutLenPrefixed(b[fixed:])
	if !ok || !validChecksumValue(etag) || r.PlainSize < 0 || r.PlainSize > MaxPlainSize {
		return PartRecord{}, bad
	}
	r.BackendETag = etag
	if r.Checksums, rest, err = parseChecksumBlock(rest); err != nil {
		return PartRecord{}, err
	}
	if len(rest) > 0 && rest[0] == 1 {
		// A copy of another object's stream (records without it are
		// read by every s3seal; one with it is refused by an s3seal that
		// predates origins, as malformed).
		var o Origin
		if o, rest, err = parseOrigin(rest[1:]); err != nil {
			return PartRecord{}, err
		}
		r.Origin = &o
	}
	if len(rest) != 0 {
		return PartRecord{}, bad
	}
	return r, nil
}

// blobAAD = label || oid || extra.
func (dk *DataKey) blobAAD(label string, extra []byte) []byte {
	a := append([]byte(label), dk.oid[:]...)
	return append(a, extra...)
}

// sealBlob seals a small message with the DEK under a random nonce.
func (dk *DataKey) sealBlob(msg, aad []byte) ([]byte, error) {
	out := make([]byte, nonceSize, nonceSize+len(msg)+tagSize)
	if _, err := io.ReadFull(dk.rand, out); err != nil {
		return nil, err
	}
	return dk.aead.Seal(out, out[:nonceSize], msg, aad), nil
}

func (dk *DataKey) openBlob(sealed, aad []byte, what string) ([]byte, error) {
	if len(sealed) < nonceSize+tagSize {
		return nil, newErr(ErrCorrupt, "%s is %d bytes", what, len(sealed))
	}
	b, err := dk.aead.Open(nil, sealed[:nonceSize], sealed[nonceSize:], aad)
	if err != nil {
		return nil, newErr(ErrAuth, "%s", what)
	}
	return b, nil
}

func cutPrefix(b []byte, prefix string) ([]byte, bool) {
	if len(b) < len(prefix) || string(b[:len(prefix)]) != prefix {
		return nil, false
	}
	return b[len(prefix):], true
}

// CipherRange returns the ciphertext range of the object that holds the
// plaintext range [off, off+length): from the first segment that range
// touches, in its part, to the end of the last one. length must be > 0
// and the range inside the object.
func (m Manifest) CipherRange(off, length int64) (cOff, cLen int64) {
	i, ps, cs := m.PartAt(off)
	a, _ := CipherRange(m.Parts[i].PlainSize, off-ps, min(length, ps+m.Parts[i].PlainSize-off))
	cOff = cs + a
	end := off + length - 1
	j, ps, cs := m.PartAt(end)
	b, bl := CipherRange(m.Parts[j].PlainSize, end-ps, 1)
	return cOff, cs + b + bl - cOff
}
