package crypto

import (
	"errors"
	"maps"
	"testing"
)

func TestUserMetaSealOpen(t *testing.T) {
	dk, err := NewDataKey()
	if err != nil {
		t.Fatal(err)
	}
	other, _ := NewDataKey()
	m := map[string]string{"md5chksum": "1B2M2Y8AsgTpgAmY7PhCfg==", "s3cmd-attrs": "md5:d41d8cd98f00b204e9800998ecf8427e", "e": ""}
	v, err := SealUserMeta(dk, m)
	if err != nil {
		t.Fatal(err)
	}
	got, err := OpenUserMeta(dk, v)
	if err != nil || !maps.Equal(got, m) {
		t.Fatalf("open: %v, %v", got, err)
	}
	if v, err := SealUserMeta(dk, nil); v != "" || err != nil {
		t.Errorf("no entries: %q, %v", v, err)
	}
	if _, err := OpenUserMeta(other, v); !errors.Is(err, ErrAuth) {
		t.Errorf("another object's key: %v", err)
	}
	// A changed character in the middle always changes the decoded bytes
	// (the last character may carry only padding bits, and may already be
	// the replacement).
	mid := len(v) / 2
	flip := "A"
	if v[mid] == 'A' {
		flip = "B"
	}
	for _, bad := range []string{"", "!!!", v[:mid] + flip + v[mid+1:], v + "AA"} {
		if _, err := OpenUserMeta(dk, bad); err == nil {
			t.Errorf("%q opened", bad)
		}
	}
	if _, err := SealUserMeta(dk, map[string]string{"Upper": "x"}); err == nil {
		t.Error("a key not in lower case was sealed")
	}
	// Non-canonical encodings are refused even when authentic.
	for _, enc := range [][]byte{{0}, {2, 1, 'b', 0, 0, 1, 'a', 0, 0}, {1, 1, 'a', 0, 0, 9}} {
		sealed, _ := dk.sealBlob(enc, dk.blobAAD(userMetaLabel, nil))
		if _, err := OpenUserMeta(dk, b64url.EncodeToString(sealed)); !errors.Is(err, ErrCorrupt) {
			t.Errorf("%v: %v", enc, err)
		}
	}
}
