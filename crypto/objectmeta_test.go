package crypto

import (
	"bytes"
	"context"
	"crypto/md5"
	"encoding/binary"
	"errors"
	"reflect"
	"strings"
	"testing"
)

func TestObjectMetaSealOpen(t *testing.T) {
	dk, other := testDataKey(t, "om"), testDataKey(t, "om other")
	m := ObjectMeta{
		User:        map[string]string{"diagnosis": "flu", "e": "", "mtime": "1700000000.5"},
		ContentType: "text/html", ContentEncoding: "gzip", ContentDisposition: "inline", ContentLanguage: "de",
		CacheControl: "max-age=60", Expires: "Wed, 21 Oct 2015 07:28:00 GMT", WebsiteRedirect: "/x",
	}
	for _, in := range []ObjectMeta{{}, {ContentType: "a/b"}, {User: map[string]string{"k": "v"}}, m} {
		v, err := SealObjectMeta(dk, in)
		if err != nil {
			t.Fatal(err)
		}
		got, err := OpenObjectMeta(dk, v)
		if err != nil || !reflect.DeepEqual(got, in) {
			t.Fatalf("open: %+v, %v, want %+v", got, err, in)
		}
		// The store sees none of the values.
		for _, val := range []string{"flu", "text/html", "gzip", "1700000000.5", "diagnosis"} {
			if strings.Contains(v, val) {
				t.Fatalf("%q readable in %s", val, v)
			}
		}
		if _, err := OpenObjectMeta(other, v); !errors.Is(err, ErrAuth) {
			t.Errorf("another object's key: %v", err)
		}
	}
	v, _ := SealObjectMeta(dk, m)
	raw, _ := b64url.DecodeString(v)
	for i := range raw {
		c := bytes.Clone(raw)
		c[i] ^= 0x20
		if _, err := OpenObjectMeta(dk, b64url.EncodeToString(c)); !errors.Is(err, ErrAuth) {
			t.Fatalf("byte %d flipped: %v", i, err)
		}
	}
	// Sealed under another label (format 1's user metadata, the upload
	// settings) it does not open as object metadata, nor the reverse.
	um, _ := SealUserMeta(dk, map[string]string{"k": "v"})
	if _, err := OpenObjectMeta(dk, um); !errors.Is(err, ErrAuth) {
		t.Errorf("format 1 user metadata opened as object metadata: %v", err)
	}
	if _, err := OpenUserMeta(dk, v); !errors.Is(err, ErrAuth) {
		t.Errorf("object metadata opened as format 1 user metadata: %v", err)
	}
	// A format 2 object whose s3seal-meta the store removed has "".
	for name, bad := range map[string]string{"removed": "", "padded": v + "==", "not base64": "!!", "huge": strings.Repeat("A", 20000)} {
		if _, err := OpenObjectMeta(dk, bad); !errors.Is(err, ErrCorrupt) {
			t.Errorf("%s: %v", name, err)
		}
	}
	for name, bad := range map[string]ObjectMeta{
		"upper-case key": {User: map[string]string{"Key": "v"}},
		"empty key":      {User: map[string]string{"": "v"}},
		"too large":      {User: map[string]string{"k": strings.Repeat("v", MaxObjectMeta)}},
	} {
		if _, err := SealObjectMeta(dk, bad); !errors.Is(err, ErrCorrupt) {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// TestObjectMetaLimit: EncodedSize is the encoding's length, and
// SealObjectMeta takes exactly MaxObjectMeta bytes and refuses one more.
func TestObjectMetaLimit(t *testing.T) {
	dk := testDataKey(t, "om limit")
	base := ObjectMeta{ContentType: "application/octet-stream", User: map[string]string{"mtime": "1700000000.123456789"}}
	at := base
	at.User = map[string]string{"mtime": base.User["mtime"], "pad": ""}
	at.User["pad"] = strings.Repeat("x", MaxObjectMeta-at.EncodedSize())
	if at.EncodedSize() != MaxObjectMeta {
		t.Fatalf("EncodedSize %d", at.EncodedSize())
	}
	v, err := SealObjectMeta(dk, at)
	if err != nil {
		t.Fatalf("at the limit: %v", err)
	}
	raw, _ := b64url.DecodeString(v)
	if len(raw) != nonceSize+MaxObjectMeta+tagSize {
		t.Fatalf("sealed %d bytes", len(raw))
	}
	at.User["pad"] += "x"
	if _, err := SealObjectMeta(dk, at); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("one byte past the limit: %v", err)
	}
}

// TestObjectMetaFitsS3Limit: a format 2 object's metadata, with
// MaxObjectMeta bytes of sealed object metadata and every other key at its
// longest, fits S3's 2 KB of user metadata (keys plus values), and one
// more base64 character group would not.
func TestObjectMetaFitsS3Limit(t *testing.T) {
	kid := strings.Repeat("k", 64)
	kr := testKeyring(t, kid, kid)
	dk := testDataKey(t, "om s3 limit")
	ck := testCustomerKey(t, 7)
	check, err := dk.CustomerCheck(ck)
	if err != nil {
		t.Fatal(err)
	}
	// 5 TiB is S3's largest object (13 digits); s3seal writes a single
	// stream of at most its PUT limit, 5 GiB by default.
	env, err := kr.Wrap(context.Background(), dk, kid, testName, Binding{PlainSize: 5 << 40, PlainMD5: md5.Sum(nil), CustomerCheck: check,
		Checksums: map[string]string{"sha512": strings.Repeat("A", 86) + "=="}})
	if err != nil {
		t.Fatal(err)
	}
	m := ObjectMeta{User: map[string]string{"pad": ""}}
	m.User["pad"] = strings.Repeat("x", MaxObjectMeta-m.EncodedSize())
	if env.SealedMeta, err = SealObjectMeta(dk, m); err != nil {
		t.Fatal(err)
	}
	total := 0
	for k, v := range env.Metadata() {
		total += len(k) + len(v)
	}
	if total > 2048 || total+4 <= 2048 {
		t.Fatalf("the longest format 2 metadata is %d bytes of S3's 2048: MaxObjectMeta is not the most that fits", total)
	}
	t.Logf("longest format 2 metadata: %d bytes", total)
}

// TestObjectMetaCanonical: only the encoding SealObjectMeta writes is
// read; every other, even sealed by the right key, is refused.
func TestObjectMetaCanonical(t *testing.T) {
	u16 := func(n int) []byte { return binary.BigEndian.AppendUint16(nil, uint16(n)) }
	entry := func(k, v string) []byte {
		return append(append(append(u16(len(k)), k...), u16(len(v))...), v...)
	}
	hdr := func(id byte, v string) []byte { return append(append([]byte{id}, u16(len(v))...), v...) }
	cat := func(parts ...[]byte) []byte { return bytes.Join(parts, nil) }
	good := cat([]byte{1}, hdr(1, "a/b"), u16(1), entry("k", "v"))
	if m, ok := decodeObjectMeta(good); !ok || m.ContentType != "a/b" || m.User["k"] != "v" {
		t.Fatalf("good encoding: %+v %v", m, ok)
	}
	for name, b := range map[string][]byte{
		"empty":              nil,
		"no user count":      {0},
		"trailing byte":      append(bytes.Clone(good), 0),
		"header id 0":        cat([]byte{1}, hdr(0, "x"), u16(0)),
		"header id 8":        cat([]byte{1}, hdr(8, "x"), u16(0)),
		"headers descending": cat([]byte{2}, hdr(2, "x"), hdr(1, "y"), u16(0)),
		"header twice":       cat([]byte{2}, hdr(1, "x"), hdr(1, "y"), u16(0)),
		"empty header":       cat([]byte{1}, hdr(1, ""), u16(0)),
		"keys descending":    cat([]byte{0}, u16(2), entry("b", ""), entry("a", "")),
		"key twice":          cat([]byte{0}, u16(2), entry("a", ""), entry("a", "")),
		"empty key":          cat([]byte{0}, u16(1), entry("", "v")),
		"upper-case key":     cat([]byte{0}, u16(1), entry("K", "v")),
		"short value":        cat([]byte{0}, u16(1), u16(1), []byte("k"), u16(5), []byte("v")),
		"count too high":     cat([]byte{0}, u16(2), entry("a", "")),
	} {
		if _, ok := decodeObjectMeta(b); ok {
			t.Errorf("%s: accepted", name)
		}
	}
}
