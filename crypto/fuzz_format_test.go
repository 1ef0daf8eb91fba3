package crypto

import (
	"bytes"
	"context"
	"errors"
	"testing"
)

// FuzzDecodeManifest: the manifest decoder never panics, refuses with
// ErrCorrupt only, and accepts only canonical encodings (what it accepts
// encodes back to the same bytes).
func FuzzDecodeManifest(f *testing.F) {
	f.Add(encodeManifest(vecManifest()))
	f.Add(encodeManifest(Manifest{Parts: []ManifestPart{{Stream: Stream{Part: 1}}}}))
	f.Add([]byte(manifestLabel))
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := decodeManifest(b)
		if err != nil {
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("error of another kind: %v", err)
			}
			return
		}
		if again := encodeManifest(m); !bytes.Equal(again, b) {
			t.Fatalf("accepted a non-canonical encoding:\n%x\nencodes as\n%x", b, again)
		}
	})
}

// FuzzDecodePartRecord: likewise for part records.
func FuzzDecodePartRecord(f *testing.F) {
	f.Add(uint32(2), encodePartRecord(vecPartRecord()))
	f.Add(uint32(1), encodePartRecord(PartRecord{Stream: Stream{Part: 1}, BackendETag: "e"}))
	f.Fuzz(func(t *testing.T, part uint32, b []byte) {
		r, err := decodePartRecord(part, b)
		if err != nil {
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("error of another kind: %v", err)
			}
			return
		}
		if again := encodePartRecord(r); !bytes.Equal(again, b) {
			t.Fatalf("accepted a non-canonical encoding:\n%x\nencodes as\n%x", b, again)
		}
	})
}

// FuzzUnwrapMetadata: whatever metadata the store returns, parsing and
// unwrapping never panic, an error is one of the package's kinds, and only
// the untouched envelope unwraps, to the binding it was made with.
func FuzzUnwrapMetadata(f *testing.F) {
	kr := testKeyring(f, "k1", "k1")
	dk := testDataKey(f, "fuzz unwrap")
	b := Binding{PlainSize: 5, PlainMD5: [16]byte{1}, Checksums: map[string]string{"crc32": "AAAAAA=="}}
	env, err := kr.Wrap(context.Background(), dk, "", testName, b)
	if err != nil {
		f.Fatal(err)
	}
	m := withObjectMeta(f, dk, env).Metadata()
	f.Add(m[MetaVersion], m[MetaKeyID], m[MetaOID], m[MetaDEK], m[MetaSize], "", m[MetaObject], testName.Key)
	mp, _ := kr.Wrap(context.Background(), dk, "", testName, Binding{Multipart: true})
	mm := withObjectMeta(f, dk, mp).Metadata()
	f.Add(mm[MetaVersion], mm[MetaKeyID], mm[MetaOID], mm[MetaDEK], "", mm[MetaMP], mm[MetaObject], testName.Key)
	f.Add("1", m[MetaKeyID], m[MetaOID], m[MetaDEK], m[MetaSize], "", "", testName.Key)
	f.Fuzz(func(t *testing.T, v, kid, oid, dek, size, mpv, om, key string) {
		meta := map[string]string{}
		for k, val := range map[string]string{MetaVersion: v, MetaKeyID: kid, MetaOID: oid, MetaDEK: dek, MetaSize: size, MetaMP: mpv, MetaObject: om} {
			if val != "" {
				meta[k] = val
			}
		}
		e, enc, err := ParseMetadata(meta)
		if err != nil {
			if !enc || !(errors.Is(err, ErrCorrupt) || errors.Is(err, ErrVersion)) {
				t.Fatalf("parse: %v (encrypted %v)", err, enc)
			}
			return
		}
		if !enc {
			return
		}
		_, got, err := kr.Unwrap(context.Background(), e, Name{Bucket: testName.Bucket, Key: key})
		if err != nil {
			if !errors.Is(err, ErrCorrupt) && !errors.Is(err, ErrUnknownKey) {
				t.Fatalf("unwrap: %v", err)
			}
			return
		}
		switch {
		case key != testName.Key:
			t.Fatalf("unwrapped under another name %q", key)
		case e.Multipart && !bytes.Equal(e.Wrapped, mp.Wrapped), !e.Multipart && !bytes.Equal(e.Wrapped, env.Wrapped):
			t.Fatal("unwrapped a forged wrapped key")
		case !e.Multipart && (got.PlainSize != b.PlainSize || got.PlainMD5 != b.PlainMD5):
			t.Fatalf("unwrapped another binding: %+v", got)
		}
	})
}
