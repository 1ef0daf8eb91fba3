package sealstore

import (
	"bytes"
	"context"
	"fmt"
	"runtime"
	"testing"

	"github.com/s3seal/s3seal/backend"
	"github.com/s3seal/s3seal/crypto"
)

// TestManifestCacheMemory: the manifests of 10,000-part objects (a 50 GB
// object in 5 MiB parts, with CRC64NVME part checksums) are cached within
// the cache's part budget, whatever the number of objects read, without
// the per-part checksum maps (4 MB for each such manifest).
// The objects are crafted at the backend (empty parts, so the test stays
// small); the manifests are those a real upload produces.
func TestManifestCacheMemory(t *testing.T) {
	f := newFixture(t)
	const objects, parts = 40, crypto.MaxParts
	for i := 0; i < objects; i++ {
		dk, err := crypto.NewDataKey()
		if err != nil {
			t.Fatal(err)
		}
		key := fmt.Sprintf("big-%d", i)
		env, err := f.kr.Wrap(context.Background(), dk, "", crypto.Name{Bucket: bucket, Key: key}, crypto.Binding{Multipart: true})
		if err != nil {
			t.Fatal(err)
		}
		if env.SealedMeta, err = crypto.SealObjectMeta(dk, crypto.ObjectMeta{}); err != nil {
			t.Fatal(err)
		}
		var m crypto.Manifest
		for p := 1; p <= parts; p++ {
			m.Parts = append(m.Parts, crypto.ManifestPart{Stream: crypto.Stream{Part: uint32(p), ID: [8]byte{byte(p), byte(p >> 8), 1}},
				PlainSize: 0, Checksums: map[string]string{"crc64nvme": "AAAAAAAAAAA="}})
		}
		sealed, err := crypto.SealManifest(dk, m)
		if err != nil {
			t.Fatal(err)
		}
		body := make([]byte, m.CipherSize())
		out, err := f.be.PutObject(f.ctx, backend.PutInput{Bucket: bucket, Key: key, Body: bytes.NewReader(body), Size: int64(len(body)), Meta: env.Metadata()})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.be.PutObject(f.ctx, backend.PutInput{Bucket: bucket, Key: manifestKey(dk.OID(), out.ETag), Body: bytes.NewReader(sealed), Size: int64(len(sealed))}); err != nil {
			t.Fatal(err)
		}
	}
	const budget = 100_000 // parts: ten of these manifests
	fresh, _ := New(Direct(f.be), f.kr, Options{SpoolDir: t.TempDir(), ManifestCacheParts: budget})
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	for i := 0; i < objects; i++ {
		if h, err := fresh.Head(f.ctx, bucket, fmt.Sprintf("big-%d", i)); err != nil || h.PartsCount != parts {
			t.Fatalf("head %d: %+v %v", i, h, err)
		}
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	retained := int64(after.HeapAlloc) - int64(before.HeapAlloc)
	t.Logf("retained heap after reading %d objects of %d parts with a budget of %d parts: %d KiB", objects, parts, budget, retained>>10)
	runtime.KeepAlive(fresh)
	if retained > 100*budget { // 100 bytes a cached part
		t.Errorf("the manifest cache holds %d MiB for a budget of %d parts", retained>>20, budget)
	}
	if got := fresh.manifests.parts.Load(); got > budget || got < budget-parts {
		t.Errorf("cache counts %d parts, budget %d", got, budget)
	}
}
