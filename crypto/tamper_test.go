package crypto

import (
	"bytes"
	"errors"
	"fmt"
	"testing"
)

// tamperFixture is a 4-segment object A (part 0), another object B of the
// same size under its own key, and parts 3 and 4 of a multipart upload
// under A's key.
type tamperFixture struct {
	dkA, dkB             *DataKey
	plainA, plainB       []byte
	ctA, ctB, ctP3, ctP4 []byte
}

const tamperSize = 3*S + 500

func newTamperFixture(t *testing.T) *tamperFixture {
	f := &tamperFixture{
		dkA:    testDataKey(t, "A"),
		dkB:    testDataKey(t, "B"),
		plainA: randomPlain(tamperSize, "plain A"),
		plainB: randomPlain(tamperSize, "plain B"),
	}
	f.ctA = seal(t, f.dkA, 0, f.plainA, 0)
	f.ctB = seal(t, f.dkB, 0, f.plainB, 0)
	f.ctP3 = seal(t, f.dkA, 3, f.plainA, 0)
	f.ctP4 = seal(t, f.dkA, 4, f.plainA, 0)
	return f
}

func seg(ct []byte, i int) []byte {
	end := min((i+1)*sealedSegSize, len(ct))
	return ct[i*sealedSegSize : end]
}

func join(parts ...[]byte) []byte { return bytes.Join(parts, nil) }

func TestTamper(t *testing.T) {
	f := newTamperFixture(t)
	nseg := int(Segments(tamperSize))
	type tcase struct {
		name      string
		ct        []byte
		dk        *DataKey
		part      uint32
		plainSize int64
		firstBad  int  // index of the first segment that must fail
		wantAuth  bool // must match ErrAuth (else ErrCorrupt is enough)
	}
	var cases []tcase
	add := func(name string, ct []byte, firstBad int, wantAuth bool) {
		cases = append(cases, tcase{name, ct, f.dkA, 0, tamperSize, firstBad, wantAuth})
	}

	// A flipped bit in the nonce, the ciphertext or the tag of each segment.
	for i := range nseg {
		segLen := len(seg(f.ctA, i))
		for _, pos := range []struct {
			what string
			off  int
		}{{"nonce", 0}, {"nonce", 11}, {"ct", 12}, {"ct", segLen / 2}, {"tag", segLen - 16}, {"tag", segLen - 1}} {
			ct := bytes.Clone(f.ctA)
			ct[i*sealedSegSize+pos.off] ^= 0x80
			add(fmt.Sprintf("flip %s byte %d of segment %d", pos.what, pos.off, i), ct, i, true)
		}
	}
	// Reordered, duplicated, dropped segments.
	s0, s1, s2, s3 := seg(f.ctA, 0), seg(f.ctA, 1), seg(f.ctA, 2), seg(f.ctA, 3)
	add("swap segments 0 and 1", join(s1, s0, s2, s3), 0, true)
	add("swap segments 1 and 2", join(s0, s2, s1, s3), 1, true)
	add("segment 1 repeated as 2", join(s0, s1, s1, s3), 2, true)
	add("drop segment 1", join(s0, s2, s3), 1, true)
	// Truncation at a segment boundary and inside a segment.
	add("drop the last segment", join(s0, s1, s2), 3, false)
	add("only the first segment", s0, 1, false)
	add("empty ciphertext", nil, 0, false)
	for _, cut := range []int{1, 12, 28, 100, sealedSegSize - 1, sealedSegSize + 1, 3*sealedSegSize + 20, len(f.ctA) - 1} {
		add(fmt.Sprintf("truncated to %d bytes", cut), f.ctA[:cut], cut/sealedSegSize, false)
	}
	// Extension after the final segment.
	add("one byte appended", join(f.ctA, []byte{0}), nseg-1, false)
	add("final segment appended again", join(f.ctA, s3), nseg-1, false)
	add("full segment appended", join(f.ctA, s2), nseg-1, false)
	add("28 zero bytes appended", join(f.ctA, make([]byte, 28)), nseg-1, false)
	// Segments from elsewhere.
	add("segment 1 of object B", join(s0, seg(f.ctB, 1), s2, s3), 1, true)
	add("segment 2 of part 3 (same key)", join(s0, s1, seg(f.ctP3, 2), s3), 2, true)
	add("object B", f.ctB, 0, true)
	add("part 3 read as the object", f.ctP3, 0, true)
	// A stream cut short whose size is also claimed short: the new last
	// segment has final = 0.
	cases = append(cases, tcase{"drop last segment, claim its size", join(s0, s1, s2), f.dkA, 0, 3 * S, 2, true})
	// A wrong key, part or size.
	cases = append(cases,
		tcase{"key of object B", f.ctA, f.dkB, 0, tamperSize, 0, true},
		tcase{"part 1 instead of 0", f.ctA, f.dkA, 1, tamperSize, 0, true},
		tcase{"part 3 read as part 4", f.ctP3, f.dkA, 4, tamperSize, 0, true},
		tcase{"part 4 with a segment of part 3", join(seg(f.ctP4, 0), seg(f.ctP3, 1), seg(f.ctP4, 2), seg(f.ctP4, 3)), f.dkA, 4, tamperSize, 1, true},
		tcase{"size claimed one byte short", f.ctA, f.dkA, 0, tamperSize - 1, 3, false},
		tcase{"size claimed one byte long", f.ctA, f.dkA, 0, tamperSize + 1, 3, false},
		tcase{"size claimed 3 segments", f.ctA, f.dkA, 0, 3 * S, 2, true},
		tcase{"size claimed 5 segments", f.ctA, f.dkA, 0, 4*S + 1, 3, false},
	)

	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			want := f.plainA // every stream of A holds plainA
			got, err := openAll(tc.dk, tc.part, tc.ct, tc.plainSize)
			mustFailAuthentic(t, "whole read", got, err, want, tc.firstBad*S)
			if tc.wantAuth && !errors.Is(err, ErrAuth) {
				t.Errorf("error %v does not match ErrAuth", err)
			}
			// Every range that covers the first bad segment fails too.
			bad := int64(tc.firstBad) * S
			if bad >= tc.plainSize {
				bad = tc.plainSize - 1
			}
			for _, r := range [][2]int64{{bad, 1}, {0, bad + 1}, {bad, tc.plainSize - bad}} {
				got, err := open(tc.dk, tc.part, tc.ct, tc.plainSize, r[0], r[1])
				mustFailAuthentic(t, fmt.Sprintf("range [%d,+%d)", r[0], r[1]), got, err, want[r[0]:], int(int64(tc.firstBad)*S-r[0]))
			}
		})
	}
}

// TestTamperDoesNotAffectOtherRanges: a damaged segment fails only the
// ranges that cover it (that is what makes ranges cheap), and those fail.
func TestTamperDoesNotAffectOtherRanges(t *testing.T) {
	f := newTamperFixture(t)
	ct := bytes.Clone(f.ctA)
	ct[2*sealedSegSize+100] ^= 1
	if got, err := open(f.dkA, 0, ct, tamperSize, 10, S); err != nil || !bytes.Equal(got, f.plainA[10:10+S]) {
		t.Fatalf("range before the damage: %v", err)
	}
	if _, err := open(f.dkA, 0, ct, tamperSize, 2*S-1, 2); !errors.Is(err, ErrAuth) {
		t.Fatalf("range over the damage: %v", err)
	}
}
