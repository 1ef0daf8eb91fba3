package sealstore

import (
	"bytes"
	"context"
	"errors"
	"io"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/s3seal/s3seal/backend"
	"github.com/s3seal/s3seal/checksum"
	"github.com/s3seal/s3seal/crypto"
)

// bytesStore counts the object bytes s3seal moves to and from the store:
// bodies it sends (PUTs, parts) and bodies it reads (GETs), but for its
// own objects under ReservedPrefix (manifests, part records).
type bytesStore struct {
	backend.Store
	sent, read atomic.Int64
}

func (b *bytesStore) PutObject(ctx context.Context, in backend.PutInput) (backend.PutOutput, error) {
	if !strings.HasPrefix(in.Key, ReservedPrefix) {
		b.sent.Add(in.Size)
	}
	return b.Store.PutObject(ctx, in)
}

func (b *bytesStore) UploadPart(ctx context.Context, in backend.UploadPartInput) (string, error) {
	b.sent.Add(in.Size)
	return b.Store.UploadPart(ctx, in)
}

func (b *bytesStore) GetObject(ctx context.Context, in backend.GetInput) (*backend.Object, error) {
	obj, err := b.Store.GetObject(ctx, in)
	if err == nil && !strings.HasPrefix(in.Key, ReservedPrefix) {
		obj.Body = &countedBody{obj.Body, &b.read}
	}
	return obj, err
}

type countedBody struct {
	io.ReadCloser
	n *atomic.Int64
}

func (c *countedBody) Read(p []byte) (int, error) {
	n, err := c.ReadCloser.Read(p)
	c.n.Add(int64(n))
	return n, err
}

// moved is what the store saw s3seal send and read since the last call.
func (b *bytesStore) moved() int64 { return b.sent.Swap(0) + b.read.Swap(0) }

// copyFixtures are a Store over the embedded store and one over moto
// (when installed). moto ignores x-amz-copy-source-if-match, so its copies
// read their source (storeHonoursCopyConditions): storeMakesCopies says
// which fixture's copies the store makes.
func copyFixtures(t *testing.T) map[string]*fixture {
	fs := map[string]*fixture{"embedded": newFixture(t)}
	if testing.Short() {
		return fs
	}
	fs["moto"] = motoFixture(t)
	return fs
}

func storeMakesCopies(name string) bool { return name == "embedded" }

// wantMoved checks what a copy moved through s3seal: nothing where the
// store makes copies, at least the object's bytes where it does not.
func wantMoved(t *testing.T, name string, bs *bytesStore, size int) {
	t.Helper()
	n := bs.moved()
	if storeMakesCopies(name) && n != 0 {
		t.Errorf("the copy moved %d object bytes through s3seal", n)
	}
	if !storeMakesCopies(name) && n < int64(size) {
		t.Errorf("over a store that ignores copy conditions the copy moved %d bytes, fewer than its %d", n, size)
	}
}

func countBytes(t *testing.T, f *fixture) (*Store, *bytesStore) {
	t.Helper()
	bs := &bytesStore{Store: f.be}
	st, err := New(Direct(bs), f.kr, Options{SpoolDir: t.TempDir(), OwnerPendingAge: 1})
	if err != nil {
		t.Fatal(err)
	}
	return st, bs
}

// A copy of a single-stream object is made by the store: s3seal moves
// none of its bytes, the copy reads back byte for byte with the source's
// ETag and checksum and its own metadata, outlives its source, and a copy
// of the copy names the first object's stream.
func TestCopyOfSingleStreamMovesNoBytes(t *testing.T) {
	for name, f := range copyFixtures(t) {
		t.Run(name, func(t *testing.T) {
			st, bs := countBytes(t, f)
			data := randBytes(3*crypto.SegmentSize+77, 41)
			src, err := f.st.Put(f.ctx, PutInput{Bucket: bucket, Key: "src", Body: bytes.NewReader(data), Size: int64(len(data)),
				Finalize: func() (map[string]string, error) { return map[string]string{"crc64nvme": "c2FtcGxlIHN1bQ=="}, nil }})
			if err != nil {
				t.Fatal(err)
			}
			bs.moved()
			info, err := st.Copy(f.ctx, CopyInput{SrcBucket: bucket, SrcKey: "src", Bucket: bucket, Key: "dst",
				ReplaceMeta: true, Meta: map[string]string{"color": "green"}, Headers: backend.Headers{ContentType: "text/x-copy"}})
			if err != nil {
				t.Fatal(err)
			}
			wantMoved(t, name, bs, len(data))
			if storeMakesCopies(name) && (info.ETag != src.ETag || info.Checksums["crc64nvme"] == "" || info.Checksums["crc64nvme"] != src.Checksums["crc64nvme"]) {
				t.Errorf("copy ETag %s checksums %v, source %s %v", info.ETag, info.Checksums, src.ETag, src.Checksums)
			}
			meta := f.backendMeta(t, "dst")
			if storeMakesCopies(name) && (meta[crypto.MetaOrigin] == "" || meta[crypto.MetaOID] == f.backendMeta(t, "src")[crypto.MetaOID]) {
				t.Fatalf("the copy has no origin or the source's oid: %v", meta)
			}
			f.st.cache.Purge()
			if _, err := st.Copy(f.ctx, CopyInput{SrcBucket: bucket, SrcKey: "dst", Bucket: bucket, Key: "dst2"}); err != nil {
				t.Fatal(err)
			}
			if err := f.st.Delete(f.ctx, bucket, "src"); err != nil {
				t.Fatal(err)
			}
			for _, k := range []string{"dst", "dst2"} {
				gi, got, err := f.get(t, k, nil)
				if err != nil || !bytes.Equal(got, data) || gi.ETag != src.ETag {
					t.Fatalf("%s read back %d bytes, ETag %s: %v", k, len(got), gi.ETag, err)
				}
				if gi.Meta["color"] != "green" || gi.Headers.ContentType != "text/x-copy" {
					t.Errorf("%s metadata %v %q", k, gi.Meta, gi.Headers.ContentType)
				}
			}
			_, rng, err := f.get(t, "dst2", &Range{First: crypto.SegmentSize - 3, Last: 2*crypto.SegmentSize + 5})
			if err != nil || !bytes.Equal(rng, data[crypto.SegmentSize-3:2*crypto.SegmentSize+6]) {
				t.Fatalf("range of the copy's copy: %v", err)
			}
		})
	}
}

// A copy of a multipart object is a multipart upload of parts the store
// copies: no byte through s3seal, the source's ETag and checksum, and a
// part copied by UploadPartCopy from a whole part or a whole object is
// made by the store too.
func TestCopyOfMultipartMovesNoBytes(t *testing.T) {
	for name, f := range copyFixtures(t) {
		t.Run(name, func(t *testing.T) {
			st, bs := countBytes(t, f)
			p1, p2 := randBytes(MinPartSize+3, 42), randBytes(100<<10, 43)
			src := f.twoParts(t, "mp", p1, p2)
			e1 := md5hex(p1)
			whole := append(append([]byte{}, p1...), p2...)
			bs.moved()
			info, err := st.Copy(f.ctx, CopyInput{SrcBucket: bucket, SrcKey: "mp", Bucket: bucket, Key: "mpcopy"})
			if err != nil {
				t.Fatal(err)
			}
			wantMoved(t, name, bs, len(whole))
			if storeMakesCopies(name) && (info.ETag != src.ETag || len(info.Checksums) != len(src.Checksums) || info.Checksums["crc64nvme"] != src.Checksums["crc64nvme"]) {
				t.Errorf("copy ETag %s checksums %v, source %s %v", info.ETag, info.Checksums, src.ETag, src.Checksums)
			}
			single := f.put(t, "single", p2)
			bs.moved()
			dst := f.create(t, "parts")
			pa, err := st.UploadPartCopy(f.ctx, UploadPartCopyInput{SrcBucket: bucket, SrcKey: "mp", Range: &Range{First: 0, Last: int64(len(p1)) - 1},
				Bucket: bucket, Key: "parts", UploadID: dst, PartNumber: 1})
			if err != nil {
				t.Fatal(err)
			}
			pb, err := st.UploadPartCopy(f.ctx, UploadPartCopyInput{SrcBucket: bucket, SrcKey: "single", Bucket: bucket, Key: "parts", UploadID: dst, PartNumber: 2})
			if err != nil {
				t.Fatal(err)
			}
			wantMoved(t, name, bs, len(p1)+len(p2))
			if pa.ETag != e1 || pb.ETag != single.ETag {
				t.Errorf("part copies answered %s %s, want %s %s", pa.ETag, pb.ETag, e1, single.ETag)
			}
			if _, err := f.st.CompleteMultipart(f.ctx, CompleteInput{Bucket: bucket, Key: "parts", UploadID: dst,
				Parts: completeParts([]int{1, 2}, []string{pa.ETag, pb.ETag}), ExpectSize: -1}); err != nil {
				t.Fatal(err)
			}
			for _, k := range []string{"mp", "single"} {
				if err := f.st.Delete(f.ctx, bucket, k); err != nil {
					t.Fatal(err)
				}
			}
			f.st.manifests.lru.Purge()
			for _, k := range []string{"mpcopy", "parts"} {
				if _, got, err := f.get(t, k, nil); err != nil || !bytes.Equal(got, whole) {
					t.Fatalf("%s read back %d bytes unlike its source: %v", k, len(got), err)
				}
			}
			// A part range that is not a whole stream is read and sealed.
			bs.moved()
			third := f.create(t, "third")
			if _, err := st.UploadPartCopy(f.ctx, UploadPartCopyInput{SrcBucket: bucket, SrcKey: "parts", Range: &Range{First: 1, Last: 1000},
				Bucket: bucket, Key: "third", UploadID: third, PartNumber: 1}); err != nil {
				t.Fatal(err)
			}
			if n := bs.moved(); n == 0 {
				t.Error("a range inside a stream was copied without reading it")
			}
		})
	}
}

// What the store can do to a copy and its source, which share a stream's
// key: swapping their metadata, or their origins, fails the read; serving
// the source's bytes for the copy gives the same bytes; serving the
// bytes of an object that overwrote the source fails the read.
func TestCopySwapsDetectedOrHarmless(t *testing.T) {
	f := newFixture(t)
	data := randBytes(2*crypto.SegmentSize+5, 44)
	f.put(t, "src", data)
	if _, err := f.st.Copy(f.ctx, CopyInput{SrcBucket: bucket, SrcKey: "src", Bucket: bucket, Key: "dst",
		ReplaceMeta: true, Meta: map[string]string{"color": "green"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.st.Copy(f.ctx, CopyInput{SrcBucket: bucket, SrcKey: "src", Bucket: bucket, Key: "other"}); err != nil {
		t.Fatal(err)
	}
	srcMeta, dstMeta, otherMeta := f.backendMeta(t, "src"), f.backendMeta(t, "dst"), f.backendMeta(t, "other")
	fails := func(what string) {
		t.Helper()
		f.st.cache.Purge()
		if _, _, err := f.get(t, "dst", nil); !errors.Is(err, ErrIntegrity) {
			t.Errorf("%s: read of the copy = %v, want an integrity error", what, err)
		}
	}
	withMeta := func(k, v string) map[string]string {
		m := map[string]string{}
		for a, b := range dstMeta {
			m[a] = b
		}
		m[k] = v
		return m
	}
	keep := func(b []byte) []byte { return b }
	f.rewrite(t, "dst", keep, withMeta(crypto.MetaObject, srcMeta[crypto.MetaObject]))
	fails("the source's sealed metadata on the copy")
	f.rewrite(t, "dst", keep, withMeta(crypto.MetaOrigin, otherMeta[crypto.MetaOrigin]))
	fails("another copy's origin on the copy")
	noOrigin := withMeta(crypto.MetaOrigin, "")
	delete(noOrigin, crypto.MetaOrigin)
	f.rewrite(t, "dst", keep, noOrigin)
	fails("the copy without its origin")
	srcBody := func([]byte) []byte {
		obj, err := f.be.GetObject(f.ctx, backend.GetInput{Bucket: bucket, Key: "src"})
		if err != nil {
			t.Fatal(err)
		}
		defer obj.Body.Close()
		b, _ := io.ReadAll(obj.Body)
		return b
	}
	f.rewrite(t, "dst", srcBody, dstMeta)
	f.st.cache.Purge()
	if _, got, err := f.get(t, "dst", nil); err != nil || !bytes.Equal(got, data) {
		t.Errorf("the source's bytes under the copy's envelope: %v, same bytes %v", err, bytes.Equal(got, data))
	}
	f.put(t, "src", data) // the same plaintext, written again: another key
	f.rewrite(t, "dst", srcBody, dstMeta)
	fails("the overwritten source's bytes on the copy")
}

// A copy that the store cannot make keeps the reading path: a customer
// key on either side, a condition on the destination, a checksum the
// source lacks.
func TestCopyThatMustReadTheSource(t *testing.T) {
	f := newFixture(t)
	st, bs := countBytes(t, f)
	data := randBytes(100<<10, 45)
	f.put(t, "src", data)
	ck, err := crypto.NewCustomerKey(randBytes(32, 46))
	if err != nil {
		t.Fatal(err)
	}
	cases := map[string]CopyInput{
		"customer key":     {CustomerKey: ck},
		"condition":        {Cond: &Condition{IfNoneMatch: true}},
		"another checksum": {ChecksumAlgorithm: "sha256", Observe: io.Discard, Finalize: func() (map[string]string, error) { return nil, nil }},
	}
	for name, in := range cases {
		in.SrcBucket, in.SrcKey, in.Bucket, in.Key = bucket, "src", bucket, "dst-"+name
		bs.moved()
		if _, err := st.Copy(f.ctx, in); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if n := bs.moved(); n < int64(len(data)) {
			t.Errorf("%s: the copy moved %d bytes; it must read and seal the source", name, n)
		}
	}
}

// An upload without an algorithm made of parts the store copied from the
// parts of an upload that named CRC32 (the aws CLI's copy of its own
// upload) gets their COMPOSITE CRC32, as its source has; a part uploaded
// beside them, without the default, leaves the object without one.
func TestObjectChecksumsOfCopiedParts(t *testing.T) {
	p1, p2 := []byte("first"), []byte("second")
	o := &crypto.Origin{}
	parts := []crypto.ManifestPart{
		{Stream: crypto.Stream{Part: 1}, PlainSize: int64(len(p1)), Checksums: map[string]string{"crc32": sumOf(checksum.CRC32, p1)}, Origin: o},
		{Stream: crypto.Stream{Part: 2}, PlainSize: int64(len(p2)), Checksums: map[string]string{"crc32": sumOf(checksum.CRC32, p2)}, Origin: o},
	}
	want, err := checksum.Combine(checksum.CRC32, checksum.Composite, []checksum.PartSum{
		{Size: int64(len(p1)), Value: sumOf(checksum.CRC32, p1)}, {Size: int64(len(p2)), Value: sumOf(checksum.CRC32, p2)}})
	if err != nil {
		t.Fatal(err)
	}
	if got, err := objectChecksums("", "", parts); err != nil || len(got) != 1 || got["crc32"] != want {
		t.Errorf("copied parts with CRC32: %v %v, want crc32 %s", got, err, want)
	}
	parts[1].Origin = nil
	if got, err := objectChecksums("", "", parts); err != nil || got != nil {
		t.Errorf("a part of its own without CRC64NVME: %v %v, want no checksum", got, err)
	}
}

// twoParts completes a multipart object of the parts p1 and p2 at key.
func (f *fixture) twoParts(t *testing.T, key string, p1, p2 []byte) ObjectInfo {
	t.Helper()
	id := f.create(t, key)
	e1, e2 := f.part(t, f.st, key, id, 1, p1).ETag, f.part(t, f.st, key, id, 2, p2).ETag
	info, err := f.st.CompleteMultipart(f.ctx, CompleteInput{Bucket: bucket, Key: key, UploadID: id,
		Parts: completeParts([]int{1, 2}, []string{e1, e2}), ExpectSize: -1})
	if err != nil {
		t.Fatal(err)
	}
	return info
}
