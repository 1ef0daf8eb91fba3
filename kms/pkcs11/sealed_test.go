//go:build pkcs11 && cgo

package pkcs11

import (
	"bytes"
	"encoding/hex"
	"slices"
	"testing"

	"github.com/s3seal/s3seal/kms"
)

func TestCompareIDs(t *testing.T) {
	// Each is smaller than the next.
	ids := []string{"", "01", "0002", "000100", "02ff", "ff00", "010000"}
	for i := range ids {
		for j := range ids {
			a, _ := hex.DecodeString(ids[i])
			b, _ := hex.DecodeString(ids[j])
			got := compareIDs(a, b)
			if (i < j && got >= 0) || (i > j && got <= 0) || (i == j && got != 0) {
				t.Errorf("compareIDs(%s, %s) = %d", ids[i], ids[j], got)
			}
		}
	}
	if compareIDs([]byte{0, 0, 5}, []byte{5}) != 0 {
		t.Error("leading zero bytes count")
	}
}

func TestParseSealed(t *testing.T) {
	good := slices.Concat(header([]byte{0x02, 0x01}), bytes.Repeat([]byte{7}, ivSize+keySize+tagSize))
	s, err := parseSealed(good)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(s.id, []byte{2, 1}) || len(s.iv) != ivSize || len(s.ct) != keySize+tagSize || !bytes.Equal(s.header, []byte{1, 2, 2, 1}) {
		t.Errorf("parsed %+v", s)
	}
	for name, b := range map[string][]byte{
		"empty":     nil,
		"version 2": append([]byte{2}, good[1:]...),
		"no id":     slices.Concat([]byte{1, 0}, good[4:]),
		"short":     good[:len(good)-1],
		"long":      append(good, 0),
		"id only":   good[:4],
	} {
		if _, err := parseSealed(b); kindOf(err) != kms.Invalid {
			t.Errorf("%s: %v, want Invalid", name, err)
		}
	}
}

// TestAdditionalData holds the encoding the package comment gives.
func TestAdditionalData(t *testing.T) {
	got := additionalData([]byte{1, 1, 9}, "ab", map[string]string{"y": "", "x": "vw"})
	want := "010109" + "00000002" + "6162" + "00000002" +
		"00000001" + "78" + "00000002" + "7677" +
		"00000001" + "79" + "00000000"
	if hex.EncodeToString(got) != want {
		t.Errorf("additionalData = %x\nwant            %s", got, want)
	}
	if got := additionalData([]byte{1, 1, 9}, "ab", nil); hex.EncodeToString(got) != "010109"+"00000002"+"6162"+"00000000" {
		t.Errorf("additionalData without a context = %x", got)
	}
}
