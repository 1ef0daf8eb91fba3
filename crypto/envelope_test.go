package crypto

import (
	"bytes"
	"crypto/md5"
	"encoding/hex"
	"errors"
	"maps"
	"reflect"
	"slices"
	"strings"
	"testing"
)

func TestWrapUnwrap(t *testing.T) {
	kr := testKeyring(t, "k1", "k1", "k2")
	dk := testDataKey(t, "wrap")
	for _, b := range []Binding{
		{PlainSize: 0, PlainMD5: md5.Sum(nil)},
		{PlainSize: 12345, PlainMD5: [16]byte{1, 2, 3}},
		{PlainSize: MaxPlainSize},
		{PlainSize: 7, Checksums: map[string]string{"crc32": "AAAAAA==", "sha256": "x+/="}},
		{Multipart: true},
	} {
		for _, id := range []string{"", "k1", "k2"} {
			env, err := kr.Wrap(dk, id, b)
			if err != nil {
				t.Fatal(err)
			}
			if len(env.Wrapped) != WrappedSize || env.OID != dk.OID() || !reflect.DeepEqual(env.Binding, b) {
				t.Fatalf("envelope %+v", env)
			}
			got, err := kr.Unwrap(env)
			if err != nil {
				t.Fatal(err)
			}
			if got.dek != dk.dek || got.OID() != dk.OID() {
				t.Fatal("unwrapped a different key")
			}
			// Metadata round trip.
			env2, enc, err := ParseMetadata(env.Metadata())
			if err != nil || !enc || env2.KeyID != env.KeyID || env2.OID != env.OID ||
				!bytes.Equal(env2.Wrapped, env.Wrapped) || !reflect.DeepEqual(env2.Binding, env.Binding) {
				t.Fatalf("metadata round trip: %+v, %v, %v", env2, enc, err)
			}
		}
	}
	// Two wraps of one key differ (random nonce).
	e1, _ := kr.Wrap(dk, "", Binding{})
	e2, _ := kr.Wrap(dk, "", Binding{})
	if bytes.Equal(e1.Wrapped, e2.Wrapped) {
		t.Fatal("two wraps are identical")
	}
	// Invalid bindings.
	for _, b := range []Binding{{PlainSize: -1}, {PlainSize: MaxPlainSize + 1}, {Multipart: true, PlainSize: 1}, {Multipart: true, PlainMD5: [16]byte{1}}} {
		if _, err := kr.Wrap(dk, "", b); !errors.Is(err, ErrCorrupt) {
			t.Errorf("Wrap(%+v): %v", b, err)
		}
		env := e1
		env.Binding = b
		if _, err := kr.Unwrap(env); !errors.Is(err, ErrCorrupt) {
			t.Errorf("Unwrap(%+v): %v", b, err)
		}
	}
}

// TestEnvelopeTamper changes each value bound into a wrapped key; every
// change makes Unwrap fail.
func TestEnvelopeTamper(t *testing.T) {
	kr := testKeyring(t, "k1", "k1", "k2")
	dkA, dkB := testDataKey(t, "env A"), testDataKey(t, "env B")
	bA := Binding{PlainSize: 1000, PlainMD5: md5.Sum([]byte("A"))}
	envA, _ := kr.Wrap(dkA, "k1", bA)
	envB, _ := kr.Wrap(dkB, "k1", Binding{PlainSize: 1000, PlainMD5: md5.Sum([]byte("B"))})
	mpA, _ := kr.Wrap(dkA, "k1", Binding{Multipart: true})

	cases := map[string]func(e *Envelope){
		"size +1":             func(e *Envelope) { e.Binding.PlainSize++ },
		"size 0":              func(e *Envelope) { e.Binding.PlainSize = 0 },
		"md5":                 func(e *Envelope) { e.Binding.PlainMD5[3] ^= 1 },
		"single to multipart": func(e *Envelope) { e.Binding = Binding{Multipart: true} },
		"key id k2":           func(e *Envelope) { e.KeyID = "k2" },
		"oid of B":            func(e *Envelope) { e.OID = envB.OID },
		"wrapped of B":        func(e *Envelope) { e.Wrapped = envB.Wrapped },
		"wrapped nonce":       func(e *Envelope) { e.Wrapped = bytes.Clone(e.Wrapped); e.Wrapped[0] ^= 1 },
		"wrapped ct":          func(e *Envelope) { e.Wrapped = bytes.Clone(e.Wrapped); e.Wrapped[20] ^= 1 },
		"wrapped tag":         func(e *Envelope) { e.Wrapped = bytes.Clone(e.Wrapped); e.Wrapped[59] ^= 1 },
		"binding of B":        func(e *Envelope) { e.Binding = envB.Binding },
	}
	for name, change := range cases {
		env := envA
		change(&env)
		if _, err := kr.Unwrap(env); !errors.Is(err, ErrAuth) {
			t.Errorf("%s: %v, want ErrAuth", name, err)
		}
		// And through the metadata, as an attacker would change it.
		env2, _, err := ParseMetadata(env.Metadata())
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if _, err := kr.Unwrap(env2); !errors.Is(err, ErrAuth) {
			t.Errorf("%s via metadata: %v, want ErrAuth", name, err)
		}
	}
	mp := mpA
	mp.Binding = bA
	if _, err := kr.Unwrap(mp); !errors.Is(err, ErrAuth) {
		t.Errorf("multipart to single: %v", err)
	}
	short := envA
	short.Wrapped = envA.Wrapped[:59]
	if _, err := kr.Unwrap(short); !errors.Is(err, ErrCorrupt) {
		t.Errorf("short wrapped key: %v", err)
	}
	unknown := envA
	unknown.KeyID = "k9"
	if _, err := kr.Unwrap(unknown); !errors.Is(err, ErrUnknownKey) {
		t.Errorf("unknown key id: %v", err)
	}
}

// TestSwappedEnvelopes: the metadata of object A with the ciphertext of
// object B does not decrypt.
func TestSwappedEnvelopes(t *testing.T) {
	kr := testKeyring(t, "k1", "k1")
	f := newTamperFixture(t)
	envA, _ := kr.Wrap(f.dkA, "", Binding{PlainSize: tamperSize, PlainMD5: md5.Sum(f.plainA)})
	dk, err := kr.Unwrap(envA)
	if err != nil {
		t.Fatal(err)
	}
	got, err := openAll(dk, 0, f.ctB, tamperSize)
	mustFailAuthentic(t, "A's envelope, B's ciphertext", got, err, f.plainA, 0)
	if !errors.Is(err, ErrAuth) {
		t.Fatal(err)
	}
}

func TestMetadata(t *testing.T) {
	kr := testKeyring(t, "k1", "k1")
	dk, _ := Config{Rand: newDetRand("meta")}.DataKeyFrom(key(5), [16]byte{0xfb, 0xff})
	env, _ := kr.Wrap(dk, "", Binding{PlainSize: 42, PlainMD5: md5.Sum([]byte("x"))})
	m := env.Metadata()
	want := []string{"s3seal-dek", "s3seal-kid", "s3seal-md5", "s3seal-oid", "s3seal-size", "s3seal-v"}
	if got := strings.Join(sortedKeys(m), ","); got != strings.Join(want, ",") {
		t.Fatalf("keys %s", got)
	}
	if m["s3seal-v"] != "1" || m["s3seal-kid"] != "k1" || len(m["s3seal-oid"]) != 22 || len(m["s3seal-dek"]) != 80 ||
		m["s3seal-size"] != "42" || m["s3seal-md5"] != hex.EncodeToString(env.Binding.PlainMD5[:]) {
		t.Fatalf("metadata %v", m)
	}
	if !strings.HasPrefix(m["s3seal-oid"], "-_8") { // base64url alphabet
		t.Fatalf("oid %s is not base64url", m["s3seal-oid"])
	}
	mpEnv, _ := kr.Wrap(dk, "", Binding{Multipart: true})
	mm := mpEnv.Metadata()
	if mm["s3seal-mp"] != "1" || len(mm) != 5 || mm["s3seal-size"] != "" {
		t.Fatalf("multipart metadata %v", mm)
	}

	// Keys are compared case-insensitively; other keys are ignored.
	upper := map[string]string{"Content-Note": "hi"}
	for k, v := range m {
		upper[strings.ToUpper(k[:1])+k[1:]] = v
	}
	if got, enc, err := ParseMetadata(upper); err != nil || !enc || !reflect.DeepEqual(got.Binding, env.Binding) {
		t.Fatalf("mixed case: %v", err)
	}
	// Not encrypted.
	for _, plain := range []map[string]string{nil, {}, {"owner": "me", "s3sealx": "1"}} {
		if _, enc, err := ParseMetadata(plain); enc || err != nil {
			t.Errorf("plain %v: %v, %v", plain, enc, err)
		}
	}

	with := func(k, v string) map[string]string {
		c := maps.Clone(m)
		c[k] = v
		return c
	}
	without := func(k string) map[string]string {
		c := maps.Clone(m)
		delete(c, k)
		return c
	}
	corrupt := map[string]map[string]string{
		"stray key without v":  {"s3seal-kid": "k1"},
		"v missing":            without("s3seal-v"),
		"kid missing":          without("s3seal-kid"),
		"oid missing":          without("s3seal-oid"),
		"dek missing":          without("s3seal-dek"),
		"size missing":         without("s3seal-size"),
		"md5 missing":          without("s3seal-md5"),
		"kid invalid":          with("s3seal-kid", "k 1"),
		"kid empty":            with("s3seal-kid", ""),
		"oid short":            with("s3seal-oid", m["s3seal-oid"][:21]),
		"oid padded":           with("s3seal-oid", m["s3seal-oid"]+"=="),
		"oid std alphabet":     with("s3seal-oid", "+/8"+m["s3seal-oid"][3:]),
		"oid non-canonical":    with("s3seal-oid", m["s3seal-oid"][:21]+"B"),
		"dek short":            with("s3seal-dek", m["s3seal-dek"][:76]),
		"dek garbage":          with("s3seal-dek", strings.Repeat("!", 80)),
		"size negative":        with("s3seal-size", "-1"),
		"size plus":            with("s3seal-size", "+42"),
		"size leading zero":    with("s3seal-size", "042"),
		"size empty":           with("s3seal-size", ""),
		"size hex":             with("s3seal-size", "0x2a"),
		"size space":           with("s3seal-size", " 42"),
		"size too big":         with("s3seal-size", "4611686018427387905"),
		"size overflow":        with("s3seal-size", "99999999999999999999"),
		"md5 upper":            with("s3seal-md5", strings.ToUpper(m["s3seal-md5"])),
		"md5 short":            with("s3seal-md5", m["s3seal-md5"][:30]),
		"md5 not hex":          with("s3seal-md5", strings.Repeat("g", 32)),
		"mp and size":          with("s3seal-mp", "1"),
		"mp not 1":             with("s3seal-mp", "true"),
		"unknown s3seal key":   with("s3seal-extra", "x"),
		"same key twice":       with("S3SEAL-KID", "k1"),
		"only mp, no size/md5": {"s3seal-v": "1", "s3seal-kid": "k1", "s3seal-oid": m["s3seal-oid"], "s3seal-dek": m["s3seal-dek"], "s3seal-mp": "0"},
	}
	for name, meta := range corrupt {
		_, enc, err := ParseMetadata(meta)
		if !errors.Is(err, ErrCorrupt) || !enc {
			t.Errorf("%s: %v, %v, want ErrCorrupt and encrypted", name, enc, err)
		}
	}
	for _, v := range []string{"2", "0", "", "1.0", " 1"} {
		if _, enc, err := ParseMetadata(with("s3seal-v", v)); !errors.Is(err, ErrVersion) || !enc {
			t.Errorf("version %q: %v", v, err)
		}
	}
}

func sortedKeys(m map[string]string) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}

func TestIsReservedMetaKey(t *testing.T) {
	for k, want := range map[string]bool{
		"s3seal-v": true, "S3SEAL-KID": true, "\u017f3seal-v": false, "s3\u017feal-v": false, "S3seal-anything": true, "s3seal-": true,
		"s3seal": false, "s3sealv": false, "x-amz-meta-s3seal-v": false, "": false, "my-s3seal-x": false,
	} {
		if IsReservedMetaKey(k) != want {
			t.Errorf("IsReservedMetaKey(%q) != %v", k, want)
		}
	}
}

func TestChecksumsAreBound(t *testing.T) {
	kr := testKeyring(t, "k1", "k1")
	dk := testDataKey(t, "cks")
	env, err := kr.Wrap(dk, "", Binding{PlainSize: 3, Checksums: map[string]string{"crc64nvme": "AAAAAAAAAAA="}})
	if err != nil {
		t.Fatal(err)
	}
	for name, mutate := range map[string]func(map[string]string){
		"value changed":  func(m map[string]string) { m["s3seal-checksum-crc64nvme"] = "AQAAAAAAAAA=" },
		"checksum added": func(m map[string]string) { m["s3seal-checksum-crc32"] = "AAAAAA==" },
		"checksum gone":  func(m map[string]string) { delete(m, "s3seal-checksum-crc64nvme") },
		"algorithm moved": func(m map[string]string) {
			m["s3seal-checksum-crc32c"] = m["s3seal-checksum-crc64nvme"]
			delete(m, "s3seal-checksum-crc64nvme")
		},
	} {
		m := env.Metadata()
		mutate(m)
		e2, _, err := ParseMetadata(m)
		if err == nil {
			_, err = kr.Unwrap(e2)
		}
		if !errors.Is(err, ErrAuth) && !errors.Is(err, ErrCorrupt) {
			t.Errorf("%s: err = %v, want an authentication failure", name, err)
		}
	}
	for _, bad := range []map[string]string{{"CRC32": "x"}, {"crc32": ""}, {"crc32": "a b"}, {"": "x"}} {
		if _, err := kr.Wrap(dk, "", Binding{Checksums: bad}); err == nil {
			t.Errorf("checksums %q accepted", bad)
		}
	}
	m := env.Metadata()
	m["s3seal-mp"] = "1"
	delete(m, "s3seal-size")
	delete(m, "s3seal-md5")
	if _, _, err := ParseMetadata(m); !errors.Is(err, ErrCorrupt) {
		t.Errorf("multipart metadata with a checksum: %v", err)
	}
}
