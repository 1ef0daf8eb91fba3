package crypto

import (
	"bytes"
	"errors"
	"io"
	"reflect"
	"strings"
	"testing"
)

func TestManifestRoundTrip(t *testing.T) {
	dk := testDataKey(t, "manifest")
	m := vecManifest()
	sealed, err := SealManifest(dk, m)
	if err != nil {
		t.Fatal(err)
	}
	got, err := OpenManifest(dk, sealed)
	if err != nil || !reflect.DeepEqual(got, m) {
		t.Fatalf("%+v, %v", got, err)
	}
	if m.Size() != 10<<20+4 || m.CipherSize() != CiphertextSize(5<<20)+CiphertextSize(5<<20+3)+CiphertextSize(1) {
		t.Fatalf("size %d, cipher size %d", m.Size(), m.CipherSize())
	}
	if e := m.ETag(); !strings.HasSuffix(e, "-3") || len(e) != 34 {
		t.Fatalf("etag %s", e)
	}
	for _, c := range []struct {
		off                        int64
		i                          int
		plainStart, cipherStartOff int64
	}{
		{0, 0, 0, 0}, {5<<20 - 1, 0, 0, 0}, {5 << 20, 1, 5 << 20, CiphertextSize(5 << 20)},
		{10<<20 + 3, 2, 10<<20 + 3, CiphertextSize(5<<20) + CiphertextSize(5<<20+3)},
	} {
		i, ps, cs := m.PartAt(c.off)
		if i != c.i || ps != c.plainStart || cs != c.cipherStartOff {
			t.Errorf("PartAt(%d) = %d, %d, %d", c.off, i, ps, cs)
		}
	}
	// Two seals of one manifest differ (random nonce).
	again, _ := SealManifest(dk, m)
	if bytes.Equal(again, sealed) {
		t.Fatal("two seals are identical")
	}
}

func TestManifestInvalid(t *testing.T) {
	dk := testDataKey(t, "manifest invalid")
	part := func(n uint32, size int64) ManifestPart { return ManifestPart{Stream: Stream{Part: n}, PlainSize: size} }
	for name, m := range map[string]Manifest{
		"no parts":        {},
		"part 0":          {Parts: []ManifestPart{part(0, 1)}},
		"part 10001":      {Parts: []ManifestPart{part(10001, 1)}},
		"out of order":    {Parts: []ManifestPart{part(2, 1), part(1, 1)}},
		"repeated":        {Parts: []ManifestPart{part(1, 1), part(1, 1)}},
		"negative size":   {Parts: []ManifestPart{part(1, -1)}},
		"sizes overflow":  {Parts: []ManifestPart{part(1, MaxPlainSize), part(2, 1)}},
		"bad checksum":    {Parts: []ManifestPart{part(1, 1)}, Checksums: map[string]string{"CRC": "x"}},
		"bad part cksum":  {Parts: []ManifestPart{{Stream: Stream{Part: 1}, Checksums: map[string]string{"crc32": ""}}}},
		"too many cksums": {Parts: []ManifestPart{part(1, 1)}, Checksums: map[string]string{"a": "1", "b": "1", "c": "1", "d": "1", "e": "1"}},
	} {
		if _, err := SealManifest(dk, m); !errors.Is(err, ErrCorrupt) {
			t.Errorf("%s: %v", name, err)
		}
	}
	// A validly sealed but malformed encoding is refused too.
	for name, msg := range map[string][]byte{
		"empty":       nil,
		"label only":  []byte(manifestLabel),
		"zero parts":  append([]byte(manifestLabel), 0, 0, 0, 0, 0),
		"cut part":    append([]byte(manifestLabel), 0, 0, 0, 1, 0, 0, 0, 1),
		"wrong label": append([]byte("s3seal v1 manifesx\x00"), 0, 0, 0, 1),
	} {
		sealed, _ := dk.sealBlob(msg, dk.blobAAD(manifestLabel, nil))
		if _, err := OpenManifest(dk, sealed); !errors.Is(err, ErrCorrupt) || errors.Is(err, ErrAuth) {
			t.Errorf("%s: %v", name, err)
		}
	}
	good, _ := SealManifest(dk, Manifest{Parts: []ManifestPart{part(1, 1)}})
	for name, b := range map[string][]byte{"short": good[:20], "cut tag": good[:len(good)-1], "extended": append(bytes.Clone(good), 0)} {
		if _, err := OpenManifest(dk, b); !errors.Is(err, ErrCorrupt) {
			t.Errorf("%s: %v", name, err)
		}
	}
}

func TestPartRecordRoundTrip(t *testing.T) {
	dk := testDataKey(t, "record")
	r := vecPartRecord()
	sealed, err := SealPartRecord(dk, r)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := OpenPartRecord(dk, r.Stream.Part, sealed); err != nil || !reflect.DeepEqual(got, r) {
		t.Fatalf("%+v, %v", got, err)
	}
	other := testDataKey(t, "other upload")
	if _, err := OpenPartRecord(other, r.Stream.Part, sealed); !errors.Is(err, ErrAuth) {
		t.Fatalf("record of another upload: %v", err)
	}
	for name, bad := range map[string]PartRecord{
		"part 0":     {Stream: Stream{Part: 0}, BackendETag: "e"},
		"no etag":    {Stream: Stream{Part: 1}},
		"long etag":  {Stream: Stream{Part: 1}, BackendETag: strings.Repeat("e", MaxETagLen+1)},
		"space etag": {Stream: Stream{Part: 1}, BackendETag: "a b"},
		"negative":   {Stream: Stream{Part: 1}, BackendETag: "e", PlainSize: -1},
	} {
		if _, err := SealPartRecord(dk, bad); !errors.Is(err, ErrCorrupt) {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// TestStreamIDBound: a part sealed as one upload attempt (stream id) does
// not open as another attempt of the same part, nor as another part.
func TestStreamIDBound(t *testing.T) {
	dk := testDataKey(t, "stream id")
	a := Stream{Part: 4, ID: [8]byte{1}}
	var buf bytes.Buffer
	w := NewWriter(&buf, dk, a)
	w.Write(pattern(1000))
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	for name, s := range map[string]Stream{"ok": a, "other id": {Part: 4, ID: [8]byte{2}}, "other part": {Part: 5, ID: a.ID}, "single": {}} {
		r, err := NewReader(bytes.NewReader(buf.Bytes()), dk, s, 1000, 0, 1000)
		if err != nil {
			t.Fatal(err)
		}
		got, err := io.ReadAll(r)
		if name == "ok" {
			if err != nil || !bytes.Equal(got, pattern(1000)) {
				t.Fatalf("ok: %v", err)
			}
		} else if !errors.Is(err, ErrAuth) || len(got) != 0 {
			t.Errorf("%s: %d bytes, %v", name, len(got), err)
		}
	}
}
