package crypto

import (
	"bytes"
	"errors"
	"sync"
	"testing"
)

// fuzzBase is the object the fuzzer edits: three segments (part 1) and a
// second object under another key whose segments the edits may splice in.
var fuzzBase = sync.OnceValue(func() (b struct {
	dk          *DataKey
	plain       []byte
	ct, otherCT []byte
}) {
	b.dk, _ = Config{Rand: newDetRand("fuzz key")}.NewDataKey()
	other, _ := Config{Rand: newDetRand("fuzz other key")}.NewDataKey()
	b.plain = randomPlain(fuzzSize, "fuzz plain")
	b.ct = seal(&testing.T{}, b.dk, 1, b.plain, 0)
	b.otherCT = seal(&testing.T{}, other, 1, b.plain, 0)
	return b
})

const fuzzSize = 2*S + 100

// applyEdits edits ct by 5-byte records: op, a 24-bit position, a value.
func applyEdits(ct, other, edits []byte) []byte {
	ct = bytes.Clone(ct)
	for ; len(edits) >= 5; edits = edits[5:] {
		op, v := edits[0], edits[4]
		pos := int(edits[1])<<16 | int(edits[2])<<8 | int(edits[3])
		nseg := len(ct)/sealedSegSize + 1
		switch op % 8 {
		case 0: // flip bits
			if len(ct) > 0 {
				ct[pos%len(ct)] ^= v | 1
			}
		case 1: // truncate
			ct = ct[:pos%(len(ct)+1)]
		case 2: // append bytes
			ct = append(ct, bytes.Repeat([]byte{v}, int(v)%40+1)...)
		case 3: // swap two segments
			i, j := pos%nseg, int(v)%nseg
			if i > j {
				i, j = j, i
			}
			if i != j && (j+1)*sealedSegSize <= len(ct) {
				si, sj := bytes.Clone(seg(ct, i)), bytes.Clone(seg(ct, j))
				copy(ct[i*sealedSegSize:], sj)
				copy(ct[j*sealedSegSize:], si)
			}
		case 4: // delete a byte
			if len(ct) > 0 {
				p := pos % len(ct)
				ct = append(ct[:p], ct[p+1:]...)
			}
		case 5: // insert a byte
			p := pos % (len(ct) + 1)
			ct = append(ct[:p], append([]byte{v}, ct[p:]...)...)
		case 6: // a segment of the other object at the same index
			i := pos % nseg
			if (i+1)*sealedSegSize <= min(len(ct), len(other)) {
				copy(ct[i*sealedSegSize:], seg(other, i))
			}
		case 7: // repeat a segment at the end
			if i := pos % nseg; i*sealedSegSize < len(ct) {
				ct = append(ct, bytes.Clone(seg(ct, i))...)
			}
		}
	}
	return ct
}

// FuzzReader: whatever is done to the ciphertext, and whatever size, part
// and range are claimed, the reader never panics, and every byte it returns
// is the authentic plaintext at that offset; any failure matches
// ErrCorrupt. Edits that amount to no change may succeed; random bytes
// (raw = true) never do.
func FuzzReader(f *testing.F) {
	f.Add([]byte{}, false, int32(0), uint8(1), uint32(0), uint32(fuzzSize))
	f.Add([]byte{}, false, int32(0), uint8(1), uint32(S-5), uint32(10))
	f.Add([]byte{0, 0, 0, 20, 1}, false, int32(0), uint8(1), uint32(0), uint32(fuzzSize))
	f.Add([]byte{0, 0, 1, 20, 1}, false, int32(0), uint8(1), uint32(S), uint32(S))
	f.Add([]byte{0, 0x02, 0x00, 0x40, 0x80}, false, int32(0), uint8(1), uint32(0), uint32(fuzzSize))
	f.Add([]byte{1, 0, 0x02, 0x00, 0}, false, int32(0), uint8(1), uint32(0), uint32(fuzzSize))
	f.Add([]byte{1, 0x02, 0x00, 0x38, 0}, false, int32(-100), uint8(1), uint32(0), uint32(2*S))
	f.Add([]byte{2, 0, 0, 0, 27}, false, int32(0), uint8(1), uint32(2*S), uint32(100))
	f.Add([]byte{3, 0, 0, 0, 1}, false, int32(0), uint8(1), uint32(0), uint32(fuzzSize))
	f.Add([]byte{4, 0, 0, 5, 0}, false, int32(0), uint8(1), uint32(0), uint32(1))
	f.Add([]byte{5, 0, 0x10, 0, 9}, false, int32(0), uint8(1), uint32(1), uint32(fuzzSize-1))
	f.Add([]byte{6, 0, 0, 1, 0}, false, int32(0), uint8(1), uint32(0), uint32(fuzzSize))
	f.Add([]byte{7, 0, 0, 2, 0}, false, int32(0), uint8(1), uint32(0), uint32(fuzzSize))
	f.Add([]byte{}, false, int32(0), uint8(2), uint32(0), uint32(fuzzSize))
	f.Add([]byte{}, false, int32(1), uint8(1), uint32(0), uint32(fuzzSize))
	f.Add([]byte{}, false, int32(-fuzzSize), uint8(1), uint32(0), uint32(0))
	f.Add(make([]byte, 28), true, int32(0), uint8(1), uint32(0), uint32(0))
	f.Add(bytes.Repeat([]byte{0xab}, 100), true, int32(0), uint8(1), uint32(3), uint32(50))

	f.Fuzz(func(t *testing.T, edits []byte, raw bool, sizeDelta int32, part uint8, off, length uint32) {
		b := fuzzBase()
		var ct []byte
		claimed := int64(fuzzSize) + int64(sizeDelta)
		if raw {
			ct = edits
			claimed = int64(len(edits)) - SegmentOverhead + int64(sizeDelta)
		} else {
			ct = applyEdits(b.ct, b.otherCT, edits)
		}
		claimed = max(claimed, 0)
		o := int64(off) % (claimed + 1)
		l := int64(length) % (claimed - o + 1)
		got, err := open(b.dk, uint32(part), ct, claimed, o, l)
		if err == nil && raw && (claimed == 0 || l > 0) {
			t.Fatalf("random bytes accepted as a stream of %d bytes", claimed)
		}
		if err != nil && !errors.Is(err, ErrCorrupt) {
			t.Fatalf("error %v does not match ErrCorrupt", err)
		}
		if len(got) > 0 && (int64(len(got)) > l || o+int64(len(got)) > fuzzSize || !bytes.Equal(got, b.plain[o:o+int64(len(got))])) {
			t.Fatalf("returned %d bytes at %d that are not the authentic plaintext (err %v)", len(got), o, err)
		}
		if err == nil && int64(len(got)) != l {
			t.Fatalf("returned %d bytes, want %d", len(got), l)
		}
	})
}
