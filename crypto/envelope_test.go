package crypto

import (
	"bytes"
	"context"
	"crypto/md5"
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
		{PlainSize: 7, Checksums: map[string]string{"crc32": "AAAAAA=="}},
		{PlainSize: 7, Checksums: map[string]string{"crc32": "AAAAAA==", "sha256": "x+/="}},
		{PlainSize: 9, Checksums: map[string]string{"a": strings.Repeat("v", MaxChecksumValue), "b": "1", "c": "2", strings.Repeat("d", 16): "3"}},
		{Multipart: true},
	} {
		for _, id := range []string{"", "k1", "k2"} {
			env, err := kr.Wrap(context.Background(), dk, id, testName, b)
			if err != nil {
				t.Fatal(err)
			}
			env = withObjectMeta(t, dk, env)
			if env.OID != dk.OID() || env.Multipart != b.Multipart || env.PlainSize != b.PlainSize {
				t.Fatalf("envelope %+v", env)
			}
			// Metadata round trip, then unwrap.
			env2, enc, err := ParseMetadata(env.Metadata())
			if err != nil || !enc || !reflect.DeepEqual(env2, env) {
				t.Fatalf("metadata round trip: %+v, %v, %v", env2, enc, err)
			}
			got, gotB, err := kr.Unwrap(context.Background(), env2, testName)
			if err != nil {
				t.Fatal(err)
			}
			b.Version = FormatV2 // the current format, which Wrap takes for 0
			if got.dek != dk.dek || got.OID() != dk.OID() || !reflect.DeepEqual(gotB, b) {
				t.Fatalf("unwrapped %+v", gotB)
			}
		}
	}
	// Two wraps of one key differ (random nonce).
	e1, _ := kr.Wrap(context.Background(), dk, "", testName, Binding{})
	e2, _ := kr.Wrap(context.Background(), dk, "", testName, Binding{})
	if bytes.Equal(e1.Wrapped, e2.Wrapped) {
		t.Fatal("two wraps are identical")
	}
	// Invalid bindings and names.
	five := map[string]string{"a": "1", "b": "1", "c": "1", "d": "1", "e": "1"}
	for _, b := range []Binding{{PlainSize: -1}, {PlainSize: MaxPlainSize + 1}, {Multipart: true, PlainSize: 1},
		{Multipart: true, PlainMD5: [16]byte{1}}, {Checksums: five}, {Multipart: true, Checksums: map[string]string{"a": "1"}}} {
		if _, err := kr.Wrap(context.Background(), dk, "", testName, b); !errors.Is(err, ErrCorrupt) {
			t.Errorf("Wrap(%+v): %v", b, err)
		}
	}
	for _, n := range []Name{{}, {Bucket: "b"}, {Key: "k"}, {Bucket: "b", Key: strings.Repeat("k", MaxKeyLen+1)}} {
		if _, err := kr.Wrap(context.Background(), dk, "", n, Binding{}); !errors.Is(err, ErrCorrupt) {
			t.Errorf("Wrap(name %q/%d bytes): %v", n.Bucket, len(n.Key), err)
		}
		if _, _, err := kr.Unwrap(context.Background(), e1, n); !errors.Is(err, ErrCorrupt) {
			t.Errorf("Unwrap(name %q/%d bytes): %v", n.Bucket, len(n.Key), err)
		}
	}
	if _, err := kr.Wrap(context.Background(), dk, "", Name{Bucket: "b", Key: strings.Repeat("k", MaxKeyLen)}, Binding{}); err != nil {
		t.Errorf("longest key: %v", err)
	}
}

// TestEnvelopeTamper changes each value bound into a wrapped key; every
// change makes Unwrap fail.
func TestEnvelopeTamper(t *testing.T) {
	kr := testKeyring(t, "k1", "k1", "k2")
	dkA, dkB := testDataKey(t, "env A"), testDataKey(t, "env B")
	envA, _ := kr.Wrap(context.Background(), dkA, "k1", testName, Binding{PlainSize: 1000, PlainMD5: md5.Sum([]byte("A"))})
	envB, _ := kr.Wrap(context.Background(), dkB, "k1", testName, Binding{PlainSize: 1000, PlainMD5: md5.Sum([]byte("B"))})
	mpA, _ := kr.Wrap(context.Background(), dkA, "k1", testName, Binding{Multipart: true})
	envA, envB, mpA = withObjectMeta(t, dkA, envA), withObjectMeta(t, dkB, envB), withObjectMeta(t, dkA, mpA)

	cases := map[string]func(e *Envelope){
		"size +1":             func(e *Envelope) { e.PlainSize++ },
		"size 0":              func(e *Envelope) { e.PlainSize = 0 },
		"single to multipart": func(e *Envelope) { e.Multipart, e.PlainSize = true, 0 },
		"key id k2":           func(e *Envelope) { e.KeyID = "k2" },
		"oid of B":            func(e *Envelope) { e.OID = envB.OID },
		"wrapped of B":        func(e *Envelope) { e.Wrapped = envB.Wrapped },
		"wrapped nonce":       func(e *Envelope) { e.Wrapped = bytes.Clone(e.Wrapped); e.Wrapped[0] ^= 1 },
		"wrapped ct":          func(e *Envelope) { e.Wrapped = bytes.Clone(e.Wrapped); e.Wrapped[20] ^= 1 },
		"wrapped md5":         func(e *Envelope) { e.Wrapped = bytes.Clone(e.Wrapped); e.Wrapped[12+KeySize+3] ^= 1 },
		"wrapped tag":         func(e *Envelope) { e.Wrapped = bytes.Clone(e.Wrapped); e.Wrapped[len(e.Wrapped)-1] ^= 1 },
		"multipart of A":      func(e *Envelope) { *e = mpA; e.PlainSize = 1000; e.Multipart = false },
		// A format 2 object passed off as format 1, whose metadata and
		// headers are read in the clear.
		"format 1": func(e *Envelope) { e.Version, e.SealedMeta = FormatV1, "" },
	}
	for name, change := range cases {
		env := envA
		change(&env)
		// Through the metadata, as an attacker would change it.
		env2, _, err := ParseMetadata(env.Metadata())
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		want := ErrAuth
		if env.Multipart { // refused by its length before any decryption
			want = ErrCorrupt
		}
		if _, _, err := kr.Unwrap(context.Background(), env2, testName); !errors.Is(err, want) {
			t.Errorf("%s: %v, want %v", name, err, want)
		}
	}
	// The name is bound: the same envelope under another key or bucket
	// (the store copied the object there) does not unwrap.
	for _, n := range []Name{
		{Bucket: testName.Bucket, Key: testName.Key + "x"},
		{Bucket: testName.Bucket, Key: "dir/objec"},
		{Bucket: testName.Bucket + "2", Key: testName.Key},
		{Bucket: "bucketd", Key: "ir/object"}, // same bytes, other split
	} {
		if _, _, err := kr.Unwrap(context.Background(), envA, n); !errors.Is(err, ErrAuth) {
			t.Errorf("name %+v: %v, want ErrAuth", n, err)
		}
	}
	short := envA
	short.Wrapped = envA.Wrapped[:wrappedMin-1]
	if _, _, err := kr.Unwrap(context.Background(), short, testName); !errors.Is(err, ErrCorrupt) {
		t.Errorf("short wrapped key: %v", err)
	}
	long := mpA
	long.Wrapped = append(bytes.Clone(mpA.Wrapped), 0)
	if _, _, err := kr.Unwrap(context.Background(), long, testName); !errors.Is(err, ErrCorrupt) {
		t.Errorf("multipart wrapped key with a byte more: %v", err)
	}
	unknown := envA
	unknown.KeyID = "k9"
	if _, _, err := kr.Unwrap(context.Background(), unknown, testName); !errors.Is(err, ErrUnknownKey) {
		t.Errorf("unknown key id: %v", err)
	}
}

// TestSwappedEnvelopes: the metadata of object A with the ciphertext of
// object B does not decrypt.
func TestSwappedEnvelopes(t *testing.T) {
	kr := testKeyring(t, "k1", "k1")
	f := newTamperFixture(t)
	envA, _ := kr.Wrap(context.Background(), f.dkA, "", testName, Binding{PlainSize: tamperSize, PlainMD5: md5.Sum(f.plainA)})
	dk, _, err := kr.Unwrap(context.Background(), envA, testName)
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
	sum := md5.Sum([]byte("x"))
	env, _ := kr.Wrap(context.Background(), dk, "", testName, Binding{PlainSize: 42, PlainMD5: sum, Checksums: map[string]string{"crc32": "AAAAAA=="}})
	env = withObjectMeta(t, dk, env)
	m := env.Metadata()
	want := []string{"s3seal-dek", "s3seal-kid", "s3seal-meta", "s3seal-oid", "s3seal-size", "s3seal-v"}
	if got := strings.Join(sortedKeys(m), ","); got != strings.Join(want, ",") {
		t.Fatalf("keys %s", got)
	}
	if m["s3seal-v"] != "2" || m["s3seal-kid"] != "k1" || len(m["s3seal-oid"]) != 22 || m["s3seal-size"] != "42" {
		t.Fatalf("metadata %v", m)
	}
	// The MD5 and the checksum are sealed: nothing in the clear metadata
	// shows them.
	for _, v := range m {
		if strings.Contains(v, "AAAAAA==") || strings.Contains(v, "9dd4e461268c8034f5c8564e155c67a6") {
			t.Fatalf("fingerprint in clear metadata: %v", m)
		}
	}
	if !strings.HasPrefix(m["s3seal-oid"], "-_8") { // base64url alphabet
		t.Fatalf("oid %s is not base64url", m["s3seal-oid"])
	}
	mpEnv, _ := kr.Wrap(context.Background(), dk, "", testName, Binding{Multipart: true})
	mpEnv = withObjectMeta(t, dk, mpEnv)
	mm := mpEnv.Metadata()
	if mm["s3seal-mp"] != "1" || len(mm) != 6 || mm["s3seal-size"] != "" || len(mm["s3seal-dek"]) != 80 {
		t.Fatalf("multipart metadata %v", mm)
	}

	// Keys are compared case-insensitively; other keys are ignored.
	upper := map[string]string{"Content-Note": "hi"}
	for k, v := range m {
		upper[strings.ToUpper(k[:1])+k[1:]] = v
	}
	if got, enc, err := ParseMetadata(upper); err != nil || !enc || !reflect.DeepEqual(got, env) {
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
		"stray key without v":   {"s3seal-kid": "k1"},
		"v missing":             without("s3seal-v"),
		"kid missing":           without("s3seal-kid"),
		"oid missing":           without("s3seal-oid"),
		"dek missing":           without("s3seal-dek"),
		"size missing":          without("s3seal-size"),
		"kid invalid":           with("s3seal-kid", "k 1"),
		"kid empty":             with("s3seal-kid", ""),
		"oid short":             with("s3seal-oid", m["s3seal-oid"][:21]),
		"oid padded":            with("s3seal-oid", m["s3seal-oid"]+"=="),
		"oid std alphabet":      with("s3seal-oid", "+/8"+m["s3seal-oid"][3:]),
		"oid non-canonical":     with("s3seal-oid", m["s3seal-oid"][:21]+"B"),
		"dek short":             with("s3seal-dek", m["s3seal-dek"][:79]),
		"dek too long":          with("s3seal-dek", strings.Repeat("A", 1000)),
		"dek garbage":           with("s3seal-dek", strings.Repeat("!", 100)),
		"dek padded":            with("s3seal-dek", mm["s3seal-dek"]+"=="),
		"size negative":         with("s3seal-size", "-1"),
		"size plus":             with("s3seal-size", "+42"),
		"size leading zero":     with("s3seal-size", "042"),
		"size empty":            with("s3seal-size", ""),
		"size hex":              with("s3seal-size", "0x2a"),
		"size space":            with("s3seal-size", " 42"),
		"size too big":          with("s3seal-size", "4611686018427387905"),
		"size overflow":         with("s3seal-size", "99999999999999999999"),
		"mp and size":           with("s3seal-mp", "1"),
		"mp not 1":              with("s3seal-mp", "true"),
		"unknown s3seal key":    with("s3seal-extra", "x"),
		"old md5 key":           with("s3seal-md5", "9dd4e461268c8034f5c8564e155c67a6"),
		"old checksum key":      with("s3seal-checksum-crc32", "AAAAAA=="),
		"same key twice":        with("S3SEAL-KID", "k1"),
		"only mp, no size":      {"s3seal-v": "1", "s3seal-kid": "k1", "s3seal-oid": m["s3seal-oid"], "s3seal-dek": m["s3seal-dek"], "s3seal-mp": "0"},
		"neither mp nor a size": without("s3seal-size"),
		"format 2 with um":      with("s3seal-um", "x"),
		"format 1 with meta":    with("s3seal-v", "1"),
	}
	for name, meta := range corrupt {
		_, enc, err := ParseMetadata(meta)
		if !errors.Is(err, ErrCorrupt) || !enc {
			t.Errorf("%s: %v, %v, want ErrCorrupt and encrypted", name, enc, err)
		}
	}
	for _, v := range []string{"3", "0", "", "1.0", " 1", "02"} {
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

// TestChecksumBlock: the sealed checksum encoding is canonical; anything
// else is refused even under a valid seal.
func TestChecksumBlock(t *testing.T) {
	cs := map[string]string{"crc32": "AAAAAA==", "sha1": "x"}
	b := appendChecksumBlock(nil, cs)
	got, rest, err := parseChecksumBlock(append(bytes.Clone(b), 9))
	if err != nil || !reflect.DeepEqual(got, cs) || !bytes.Equal(rest, []byte{9}) {
		t.Fatalf("round trip: %v %v %v", got, rest, err)
	}
	if got, _, err := parseChecksumBlock([]byte{0}); err != nil || got != nil {
		t.Fatalf("empty block: %v %v", got, err)
	}
	for name, bad := range map[string][]byte{
		"empty":          nil,
		"too many":       {5},
		"unsorted":       append([]byte{2}, append(lp("sha1", "x"), lp("crc32", "y")...)...),
		"repeated":       append([]byte{2}, append(lp("crc32", "x"), lp("crc32", "y")...)...),
		"upper name":     append([]byte{1}, lp("CRC32", "x")...),
		"empty value":    append([]byte{1}, lp("crc32", "")...),
		"space in value": append([]byte{1}, lp("crc32", "a b")...),
		"cut name":       {1, 5, 'c', 'r'},
		"cut value":      append([]byte{1}, append(lp("crc32", "")[:6], 4, 'a')...),
	} {
		if _, _, err := parseChecksumBlock(bad); !errors.Is(err, ErrCorrupt) {
			t.Errorf("%s: %v", name, err)
		}
	}
}

func lp(name, val string) []byte {
	b := append([]byte{byte(len(name))}, name...)
	b = append(b, byte(len(val)))
	return append(b, val...)
}

// resealPayload is env's wrapped key with payload sealed in place of the
// one Wrap sealed, under the right key, nonce and AAD: what only a
// holder of the master key could write.
func resealPayload(t *testing.T, kr *Keyring, dk *DataKey, env Envelope, payload []byte) []byte {
	t.Helper()
	aead, err := wrapAEAD(kr.keys["k1"], dk.oid)
	if err != nil {
		t.Fatal(err)
	}
	nonce := env.Wrapped[:nonceSize]
	return aead.Seal(bytes.Clone(nonce), nonce, payload, wrapAAD(env, testName))
}

// TestUnwrapRefusesBytesAfterPayload: a wrapped payload that opens under
// the right key but holds one byte more than the sealed fields (after the
// checksum block of a single stream, after the DEK of a multipart object)
// is ErrCorrupt, not a key with the byte ignored.
func TestUnwrapRefusesBytesAfterPayload(t *testing.T) {
	kr := testKeyring(t, "k1", "k1")
	dk := testDataKey(t, "trailing")
	for _, b := range []Binding{
		{Version: FormatV2, PlainSize: 7, Checksums: map[string]string{"crc32": "AAAAAA=="}},
		{Version: FormatV2, PlainSize: 7},
		{Version: FormatV2, Multipart: true},
	} {
		env, err := kr.Wrap(context.Background(), dk, "k1", testName, b)
		if err != nil {
			t.Fatal(err)
		}
		if _, _, err := kr.Unwrap(context.Background(), env, testName); err != nil {
			t.Fatalf("%+v: the exact payload: %v", b, err)
		}
		env.Wrapped = resealPayload(t, kr, dk, env, append(wrapPayload(dk.dek[:], b), 0))
		if _, _, err := kr.Unwrap(context.Background(), env, testName); !errors.Is(err, ErrCorrupt) {
			t.Errorf("%+v: one byte after the payload: %v, want ErrCorrupt", b, err)
		}
	}
}

// TestUnwrapRefusesUnknownVersion: an envelope whose format is neither v1
// nor v2 is ErrVersion, before any key is tried.
func TestUnwrapRefusesUnknownVersion(t *testing.T) {
	kr := testKeyring(t, "k1", "k1")
	env, err := kr.Wrap(context.Background(), testDataKey(t, "version"), "k1", testName, Binding{PlainSize: 7})
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range []int{0, FormatV2 + 1, 255} {
		e := env
		e.Version = v
		if _, _, err := kr.Unwrap(context.Background(), e, testName); !errors.Is(err, ErrVersion) {
			t.Errorf("version %d: %v, want ErrVersion", v, err)
		}
	}
}

// TestUnwrapRefusesSingleStreamWithoutMD5: a single-stream envelope whose
// sealed payload is the DEK alone (a multipart payload) is ErrCorrupt.
func TestUnwrapRefusesSingleStreamWithoutMD5(t *testing.T) {
	kr := testKeyring(t, "k1", "k1")
	dk := testDataKey(t, "short")
	env, err := kr.Wrap(context.Background(), dk, "k1", testName, Binding{PlainSize: 7})
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []int{0, 15} {
		env.Wrapped = resealPayload(t, kr, dk, env, append(bytes.Clone(dk.dek[:]), make([]byte, n)...))
		if _, _, err := kr.Unwrap(context.Background(), env, testName); !errors.Is(err, ErrCorrupt) {
			t.Errorf("payload of the DEK and %d bytes: %v, want ErrCorrupt", n, err)
		}
	}
}

// TestUnwrapRefusesOutOfRangeFields: an envelope whose plaintext size or
// customer key check is out of range is malformed (ErrCorrupt), refused
// before the key is tried, not an authentication failure (ErrAuth, a
// wrong key or a changed binding).
func TestUnwrapRefusesOutOfRangeFields(t *testing.T) {
	kr := testKeyring(t, "k1", "k1")
	env, err := kr.Wrap(context.Background(), testDataKey(t, "range"), "k1", testName, Binding{PlainSize: 7})
	if err != nil {
		t.Fatal(err)
	}
	for name, change := range map[string]func(*Envelope){
		"negative size":            func(e *Envelope) { e.PlainSize = -1 },
		"size past the maximum":    func(e *Envelope) { e.PlainSize = MaxPlainSize + 1 },
		"short customer key check": func(e *Envelope) { e.CustomerCheck = make([]byte, CheckSize-1) },
		"long customer key check":  func(e *Envelope) { e.CustomerCheck = make([]byte, CheckSize+1) },
	} {
		e := env
		change(&e)
		if _, _, err := kr.Unwrap(context.Background(), e, testName); !errors.Is(err, ErrCorrupt) || errors.Is(err, ErrAuth) {
			t.Errorf("%s: %v, want ErrCorrupt without ErrAuth", name, err)
		}
	}
}
