package checksum

import (
	"encoding/base64"
	"encoding/binary"
	"fmt"
)

// Checksum types of a multipart object, as x-amz-checksum-type names them.
const (
	Composite  = "COMPOSITE"
	FullObject = "FULL_OBJECT"
)

// Default is the checksum S3 computes, since 2025, for an object whose
// client named none; a multipart object of an upload created without an
// algorithm gets it as a FULL_OBJECT checksum combined from its parts'.
const Default = CRC64NVME

// DefaultType is the checksum type S3 uses for a multipart upload that
// names algorithm a and no type: FULL_OBJECT for CRC64NVME (its only
// type), COMPOSITE for the others.
func DefaultType(a Algorithm) string {
	if a == CRC64NVME {
		return FullObject
	}
	return Composite
}

// TypeSupported reports whether S3 offers checksum type typ with a:
// FULL_OBJECT for the CRCs, COMPOSITE for all but CRC64NVME.
func TypeSupported(a Algorithm, typ string) bool {
	switch typ {
	case FullObject:
		return a == CRC32 || a == CRC32C || a == CRC64NVME
	case Composite:
		return a != CRC64NVME
	}
	return false
}

// PartSum is one part's plaintext size and checksum (base64, as S3 prints
// it).
type PartSum struct {
	Size  int64
	Value string
}

// Combine returns the checksum of a multipart object from its parts' sums,
// as S3 reports it: COMPOSITE is the checksum of the concatenated binary
// part checksums, then "-" and the number of parts; FULL_OBJECT is the CRC
// of the whole object, computed from the parts' CRCs and sizes.
func Combine(a Algorithm, typ string, parts []PartSum) (string, error) {
	if !TypeSupported(a, typ) {
		return "", fmt.Errorf("checksum type %s is not offered for %s", typ, a)
	}
	raws := make([][]byte, len(parts))
	for i, p := range parts {
		b, err := base64.StdEncoding.Strict().DecodeString(p.Value)
		if err != nil || len(b) != a.Size() {
			return "", fmt.Errorf("part %d has no valid %s checksum", i+1, a)
		}
		raws[i] = b
	}
	if typ == Composite {
		h := a.New()
		for _, b := range raws {
			h.Write(b)
		}
		return fmt.Sprintf("%s-%d", base64.StdEncoding.EncodeToString(h.Sum(nil)), len(parts)), nil
	}
	var poly uint64
	switch a {
	case CRC32:
		poly = 0xedb88320
	case CRC32C:
		poly = 0x82f63b78
	case CRC64NVME:
		poly = crc64NVMEPoly
	}
	width := 8 * a.Size()
	var crc uint64
	for i, b := range raws {
		v := readUint(b)
		if i == 0 {
			crc = v
			continue
		}
		crc = crcCombine(poly, width, crc, v, parts[i].Size)
	}
	out := make([]byte, a.Size())
	if width == 32 {
		binary.BigEndian.PutUint32(out, uint32(crc))
	} else {
		binary.BigEndian.PutUint64(out, crc)
	}
	return base64.StdEncoding.EncodeToString(out), nil
}

func readUint(b []byte) uint64 {
	if len(b) == 4 {
		return uint64(binary.BigEndian.Uint32(b))
	}
	return binary.BigEndian.Uint64(b)
}

// crcCombine returns the CRC of A||B from crc(A), crc(B) and len(B), for a
// reflected CRC of the given width and (reversed) polynomial with all-ones
// initial value and final xor (CRC-32, CRC-32C, CRC-64/NVME): crc(A) is
// advanced over len(B) zero bytes by repeated squaring of the
// one-zero-bit operator over GF(2), then xored with crc(B).
func crcCombine(poly uint64, width int, crcA, crcB uint64, lenB int64) uint64 {
	if lenB == 0 {
		return crcA
	}
	odd := make([]uint64, width)  // operator for one zero bit
	even := make([]uint64, width) // scratch
	odd[0] = poly
	row := uint64(1)
	for n := 1; n < width; n++ {
		odd[n] = row
		row <<= 1
	}
	square := func(dst, m []uint64) {
		for n := range width {
			dst[n] = gf2Times(m, m[n])
		}
	}
	square(even, odd) // two zero bits
	square(odd, even) // four zero bits
	for {
		square(even, odd) // one zero byte, then 4, 16, ... bytes
		if lenB&1 != 0 {
			crcA = gf2Times(even, crcA)
		}
		if lenB >>= 1; lenB == 0 {
			break
		}
		square(odd, even)
		if lenB&1 != 0 {
			crcA = gf2Times(odd, crcA)
		}
		if lenB >>= 1; lenB == 0 {
			break
		}
	}
	return crcA ^ crcB
}

func gf2Times(m []uint64, vec uint64) uint64 {
	var sum uint64
	for i := 0; vec != 0; i, vec = i+1, vec>>1 {
		if vec&1 != 0 {
			sum ^= m[i]
		}
	}
	return sum
}
