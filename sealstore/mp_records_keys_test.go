package sealstore

import (
	"bytes"
	"context"
	"crypto/sha512"
	"encoding/base64"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/s3seal/s3seal/backend"
	"github.com/s3seal/s3seal/backend/embedded"
	"github.com/s3seal/s3seal/crypto"
)

// stateGets counts backend GETs of s3seal's upload state (record bodies).
type stateGets struct {
	backend.Store
	gets atomic.Int64
}

func (g *stateGets) GetObject(ctx context.Context, in backend.GetInput) (*backend.Object, error) {
	if strings.HasPrefix(in.Key, uploadsPrefix) {
		g.gets.Add(1)
	}
	return g.Store.GetObject(ctx, in)
}

// toBodyRecords rewrites every part record of the upload under prefix the
// way s3seal wrote records too long for its former 222-byte key limit: an
// object "<part>.~<base64url of the nonce>" whose body is the record.
func toBodyRecords(t *testing.T, be backend.Store, prefix string) int {
	t.Helper()
	ctx := context.Background()
	out, err := be.ListObjects(ctx, backend.ListInput{Bucket: bucket, V2: true, Prefix: prefix})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, e := range out.Entries {
		part, sealed, inBody, ok := parseRecordKey(prefix, e.Key)
		if !ok || inBody {
			continue
		}
		key := fmt.Sprintf("%s%05d.~%s", prefix, part, b64url.EncodeToString(sealed[:12]))
		if _, err := be.PutObject(ctx, backend.PutInput{Bucket: bucket, Key: key, Body: bytes.NewReader(sealed), Size: int64(len(sealed))}); err != nil {
			t.Fatal(err)
		}
		if err := be.DeleteObject(ctx, bucket, e.Key); err != nil {
			t.Fatal(err)
		}
		n++
	}
	return n
}

// longChecksum returns a part checksum of alg for data, as a client sends
// it (the xxHash value need not be right: s3seal only keeps it).
func longChecksum(alg string, data []byte) string {
	if alg == "sha512" {
		sum := sha512.Sum512(data)
		return base64.StdEncoding.EncodeToString(sum[:])
	}
	return base64.StdEncoding.EncodeToString(bytes.Repeat(data[:1], 16))
}

// testLongRecordsInKeys uploads two parts with SHA-512 or XXHASH128
// checksums; if legacy, rewrites their records as the former code did (in
// bodies). It checks where the records are, that ListParts shows the
// checksums with the expected number of record GETs, and that the upload
// completes and reads back.
func testLongRecordsInKeys(t *testing.T, f *fixture, alg string, legacy bool) {
	g := &stateGets{Store: f.be}
	st, err := New(Direct(g), f.kr, Options{SpoolDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	key := "long/" + alg
	id, err := st.CreateMultipart(f.ctx, CreateMultipartInput{Bucket: bucket, Key: key, ChecksumAlgorithm: alg, ChecksumType: "COMPOSITE"})
	if err != nil {
		t.Fatal(err)
	}
	datas := [][]byte{bytes.Repeat([]byte("x"), 5*mib), []byte("tail")}
	var parts []CompletePart
	for i, d := range datas {
		sum := longChecksum(alg, d)
		pi, err := st.UploadPart(f.ctx, UploadPartInput{Bucket: bucket, Key: key, UploadID: id, PartNumber: i + 1,
			Body: bytes.NewReader(d), Size: int64(len(d)),
			Finalize: func() (map[string]string, error) { return map[string]string{alg: sum}, nil }})
		if err != nil {
			t.Fatalf("part %d: %v", i+1, err)
		}
		parts = append(parts, CompletePart{PartNumber: i + 1, ETag: `"` + pi.ETag + `"`})
	}
	prefix := uploadPrefix(bucket, key, id)
	records := 0
	for _, k := range f.reservedKeys(t, prefix) {
		if len(k) > maxRecordKey {
			t.Errorf("state key of %d bytes", len(k))
		}
		for _, seg := range strings.Split(k, "/") {
			if len(seg) > maxKeySegment {
				t.Errorf("state key segment of %d bytes: %s", len(seg), k)
			}
		}
		if _, _, inBody, ok := parseRecordKey(prefix, k); ok {
			records++
			if inBody {
				t.Errorf("%s record kept in a body: %s", alg, k)
			}
		}
	}
	if records != 2 {
		t.Fatalf("%d records in keys, want 2", records)
	}
	wantGets := int64(0)
	if legacy {
		if n := toBodyRecords(t, f.be, prefix); n != 2 {
			t.Fatalf("rewrote %d records into bodies", n)
		}
		wantGets = 2
	}
	page, err := st.ListParts(f.ctx, bucket, key, id, 0, 1000)
	if err != nil || len(page.Parts) != 2 {
		t.Fatalf("ListParts: %+v, %v", page, err)
	}
	for i, p := range page.Parts {
		if p.Checksums[alg] != longChecksum(alg, datas[i]) {
			t.Errorf("ListParts part %d: checksums %v", i+1, p.Checksums)
		}
	}
	if n := g.gets.Swap(0); n != wantGets {
		t.Errorf("ListParts of 2 %s parts made %d record GETs, want %d", alg, n, wantGets)
	}
	if _, err := st.CompleteMultipart(f.ctx, CompleteInput{Bucket: bucket, Key: key, UploadID: id, Parts: parts, ExpectSize: -1}); err != nil {
		t.Fatal(err)
	}
	if n := g.gets.Load(); n != wantGets {
		t.Errorf("completing 2 %s parts made %d record GETs, want %d", alg, n, wantGets)
	}
	if left := f.reservedKeys(t, prefix); len(left) != 0 {
		t.Errorf("upload state left: %v", left)
	}
	_, got, err := f.getWith(st, key)
	if err != nil || !bytes.Equal(got, append(bytes.Clone(datas[0]), datas[1]...)) {
		t.Fatalf("read back: %d bytes, %v", len(got), err)
	}
	_, attrs, err := st.Attributes(f.ctx, bucket, key, "", nil)
	if err != nil || len(attrs) != 2 || attrs[0].Checksums[alg] != longChecksum(alg, datas[0]) {
		t.Fatalf("attributes: %+v, %v", attrs, err)
	}
}

// Part records with SHA-512 and XXHASH128 checksums are kept in keys (a
// SHA-512 one cut into segments of at most 255 bytes), so ListParts and
// completion read no record; records written in bodies by earlier s3seal
// still list and complete.
func TestLongRecordsInKeys(t *testing.T) {
	for _, alg := range []string{"sha512", "xxhash128"} {
		for _, legacy := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/legacy=%v", alg, legacy), func(t *testing.T) {
				testLongRecordsInKeys(t, newFixture(t), alg, legacy)
			})
		}
	}
}

func TestLongRecordsInKeysMoto(t *testing.T) {
	f := motoFixture(t)
	for _, alg := range []string{"sha512", "xxhash128"} {
		for _, legacy := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/legacy=%v", alg, legacy), func(t *testing.T) {
				testLongRecordsInKeys(t, f, alg, legacy)
			})
		}
	}
}

// The longest record a part can have (MaxChecksums checksums of the
// longest names and values, the longest backend ETag) does not fit in
// S3's 1024-byte keys: it is kept in a body. Records that fit round-trip
// through their keys, every segment at most 255 bytes.
func TestRecordObjectLimits(t *testing.T) {
	prefix := uploadPrefix(bucket, "k", "id")
	for _, n := range []int{0, 100, 186, 187, 300, 500, 723, 724, 725, 776} {
		sealed := bytes.Repeat([]byte{0xfb}, n)
		key, body := recordObject(prefix, 10000, sealed)
		part, got, inBody, ok := parseRecordKey(prefix, key)
		if !ok || part != 10000 {
			t.Fatalf("%d bytes: key %q does not parse", n, key)
		}
		if (body != nil) != (n > 724) { // FORMAT.md: a record over 724 bytes is in a body
			t.Fatalf("%d bytes: body %v, key of %d bytes", n, body != nil, len(key))
		}
		if body != nil {
			if !inBody || !bytes.Equal(body, sealed) || len(recordKey(prefix, 10000, sealed)) <= maxRecordKey {
				t.Fatalf("%d bytes: body record %q", n, key)
			}
			continue
		}
		if inBody || !bytes.Equal(got, sealed) || len(key) > maxRecordKey {
			t.Fatalf("%d bytes: key %q (%d bytes) gives %d bytes", n, key, len(key), len(got))
		}
		for _, seg := range strings.Split(key, "/") {
			if len(seg) > maxKeySegment || seg == "" {
				t.Fatalf("%d bytes: segment of %d bytes in %q", n, len(seg), key)
			}
		}
		// .s3seal/uploads/<u>/ has three; 186 bytes are 248 in base64url.
		if cut := strings.Count(key, "/") > 3; cut != (n > 186) {
			t.Fatalf("%d bytes: cut %v: %q", n, cut, key)
		}
	}
	const longest = 12 + 16 + crypto.StreamIDSize + 8 + 16 + 1 + crypto.MaxETagLen + 1 + crypto.MaxChecksums*(1+16+1+crypto.MaxChecksumValue)
	if k, body := recordObject(prefix, 1, make([]byte, longest)); body == nil {
		t.Fatalf("the longest record (%d bytes) in a key of %d bytes", longest, len(k))
	}
}

// getCounter counts backend GETs.
type getCounter struct {
	backend.Store
	gets atomic.Int64
}

func (g *getCounter) GetObject(ctx context.Context, in backend.GetInput) (*backend.Object, error) {
	g.gets.Add(1)
	return g.Store.GetObject(ctx, in)
}

// TestLongRecordsReadOncePerPage: a part record too long for a key (SHA512
// or XXHASH128 part checksums) is kept in an object's body and read with a
// backend GET; a ListParts page of 10 parts costs at most 10 GETs (the
// records of its own parts), not one per part of the whole upload. An
// upload with CRC32 records (in the keys) is the control.
func TestLongRecordsReadOncePerPage(t *testing.T) {
	for _, alg := range []string{"crc32", "sha512"} {
		be, closer, err := embedded.NewStore(t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		defer closer.Close()
		g := &getCounter{Store: be}
		key, _ := crypto.GenerateKey()
		kr, _ := crypto.NewKeyring("k1", map[string][]byte{"k1": key})
		st, err := New(Direct(g), kr, Options{SpoolDir: t.TempDir(), BackendChecksum: true})
		if err != nil {
			t.Fatal(err)
		}
		ctx := context.Background()
		if err := be.CreateBucket(ctx, bucket); err != nil {
			t.Fatal(err)
		}
		id, err := st.CreateMultipart(ctx, CreateMultipartInput{Bucket: bucket, Key: "k", ChecksumAlgorithm: alg, ChecksumType: "COMPOSITE"})
		if err != nil {
			t.Fatal(err)
		}
		const n = 60
		for i := 1; i <= n; i++ {
			data := []byte(fmt.Sprintf("part %d", i))
			sum := sha512.Sum512(data)
			val := base64.StdEncoding.EncodeToString(sum[:])
			if alg == "crc32" {
				val = "AAAAAA=="
			}
			if _, err := st.UploadPart(ctx, UploadPartInput{Bucket: bucket, Key: "k", UploadID: id, PartNumber: i,
				Body: bytes.NewReader(data), Size: int64(len(data)),
				Finalize: func() (map[string]string, error) { return map[string]string{alg: val}, nil }}); err != nil {
				t.Fatal(err)
			}
		}
		before := g.gets.Load()
		page, err := st.ListParts(ctx, bucket, "k", id, 0, 10)
		if err != nil || len(page.Parts) != 10 {
			t.Fatalf("%s: ListParts %d parts, %v", alg, len(page.Parts), err)
		}
		gets := g.gets.Load() - before
		t.Logf("%s: one ListParts page of 10 (upload of %d parts) made %d backend GETs", alg, n, gets)
		if gets > 10 {
			t.Errorf("EXPECTED a page of 10 parts to cost at most 10 backend reads; %s upload of %d parts: %d sequential GETs", alg, n, gets)
		}
	}
}
