package crypto

import "fmt"

const (
	// SegmentSize is the plaintext size of every segment but the last of a
	// stream.
	SegmentSize = 65536

	// SegmentOverhead is what sealing adds to each segment: a 12-byte nonce
	// and a 16-byte GCM tag.
	SegmentOverhead = nonceSize + tagSize

	// MaxPlainSize is the largest stream size this package handles (4 EiB,
	// far above any S3 object); it keeps every ciphertext size within int64.
	MaxPlainSize = 1 << 62

	nonceSize     = 12
	tagSize       = 16
	sealedSegSize = SegmentSize + SegmentOverhead // 65564
)

// Segments returns the number of segments of a stream of plain bytes:
// max(1, ceil(plain/SegmentSize)). An empty stream is one empty segment.
//
// It panics if plain is negative or above [MaxPlainSize]; sizes from the
// outside must be checked first (ParseMetadata does).
func Segments(plain int64) int64 {
	checkPlain(plain)
	if plain == 0 {
		return 1
	}
	return (plain + SegmentSize - 1) / SegmentSize
}

// CiphertextSize returns the stored size of a stream of plain bytes:
// plain + SegmentOverhead*Segments(plain). It panics like [Segments].
func CiphertextSize(plain int64) int64 {
	return plain + SegmentOverhead*Segments(plain)
}

// PlaintextSize is the inverse of [CiphertextSize]. It returns an error
// matching [ErrCorrupt] for a size that no plaintext size maps to: below
// one empty segment, a last segment with no room for a byte of plaintext
// (only an empty stream has an empty segment), or above
// CiphertextSize(MaxPlainSize).
func PlaintextSize(cipher int64) (int64, error) {
	full, rem := cipher/sealedSegSize, cipher%sealedSegSize
	var p int64
	switch {
	case cipher < SegmentOverhead:
		return 0, newErr(ErrCorrupt, "ciphertext size %d is below one segment", cipher)
	case rem == 0:
		p = cipher - full*SegmentOverhead
	case rem > SegmentOverhead || (rem == SegmentOverhead && full == 0):
		p = cipher - (full+1)*SegmentOverhead
	default:
		return 0, newErr(ErrCorrupt, "no plaintext has ciphertext size %d", cipher)
	}
	if p > MaxPlainSize {
		return 0, newErr(ErrCorrupt, "ciphertext size %d is too large", cipher)
	}
	return p, nil
}

// CipherRange maps the plaintext range [off, off+length) of a stream of
// plainSize bytes to the ciphertext range [cOff, cOff+cLen) that holds
// exactly the segments covering it; that is the range to fetch from the
// backend and to hand to [NewReader].
//
// The caller guarantees 0 <= off, 0 <= length and off+length <= plainSize.
// An empty stream (plainSize == 0, hence off == 0 and length == 0) maps to
// its one empty segment, (0, SegmentOverhead), so that reading it still
// authenticates it. Any other empty range (length == 0) needs no segment and
// maps to (0, 0). CipherRange panics if the guarantees do not hold.
func CipherRange(plainSize, off, length int64) (cOff, cLen int64) {
	checkPlain(plainSize)
	if off < 0 || length < 0 || off > plainSize || length > plainSize-off {
		panic(fmt.Sprintf("s3seal/crypto: CipherRange(%d, %d, %d): range out of bounds", plainSize, off, length))
	}
	if plainSize == 0 {
		return 0, SegmentOverhead
	}
	if length == 0 {
		return 0, 0
	}
	first := off / SegmentSize
	last := (off + length - 1) / SegmentSize
	cOff = first * sealedSegSize
	end := (last + 1) * sealedSegSize
	if total := CiphertextSize(plainSize); end > total {
		end = total
	}
	return cOff, end - cOff
}

// segPlainLen returns the plaintext length of segment i of a stream of
// plainSize bytes (i < Segments(plainSize)).
func segPlainLen(plainSize, i int64) int {
	if rest := plainSize - i*SegmentSize; rest < SegmentSize {
		return int(rest)
	}
	return SegmentSize
}

func checkPlain(plain int64) {
	if plain < 0 || plain > MaxPlainSize {
		panic(fmt.Sprintf("s3seal/crypto: plaintext size %d out of range [0, MaxPlainSize]", plain))
	}
}
