package sealstore

import (
	"bytes"
	"crypto/md5"
	"errors"
	"fmt"
	"io"
	"testing"

	"github.com/s3seal/s3seal/backend"
)

const mib = 1 << 20

// mpETag is S3's multipart ETag of the given parts' plaintexts.
func mpETag(parts ...[]byte) string {
	h := md5.New()
	for _, p := range parts {
		s := md5.Sum(p)
		h.Write(s[:])
	}
	return fmt.Sprintf("%x-%d", h.Sum(nil), len(parts))
}

func (f *fixture) create(t *testing.T, key string) string {
	t.Helper()
	id, err := f.st.CreateMultipart(f.ctx, CreateMultipartInput{Bucket: bucket, Key: key,
		Meta: map[string]string{"color": "red"}, Headers: backend.Headers{ContentType: "text/x-mp"}})
	if err != nil {
		t.Fatal(err)
	}
	return id
}

func (f *fixture) part(t *testing.T, st *Store, key, id string, n int, data []byte) PartInfo {
	t.Helper()
	pi, err := st.UploadPart(f.ctx, UploadPartInput{Bucket: bucket, Key: key, UploadID: id, PartNumber: n,
		Body: bytes.NewReader(data), Size: int64(len(data))})
	if err != nil {
		t.Fatalf("part %d: %v", n, err)
	}
	if pi.ETag != md5hex(data) {
		t.Fatalf("part %d: etag %s, want %s", n, pi.ETag, md5hex(data))
	}
	return pi
}

func completeParts(nums []int, etags []string) []CompletePart {
	ps := make([]CompletePart, len(nums))
	for i := range nums {
		ps[i] = CompletePart{PartNumber: nums[i], ETag: `"` + etags[i] + `"`}
	}
	return ps
}

// reservedKeys lists what s3seal keeps under its reserved prefix.
func (f *fixture) reservedKeys(t *testing.T, prefix string) []string {
	t.Helper()
	out, err := f.be.ListObjects(f.ctx, backend.ListInput{Bucket: bucket, V2: true, Prefix: prefix})
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, e := range out.Entries {
		keys = append(keys, e.Key)
	}
	return keys
}

func TestMultipartRoundTrip(t *testing.T) {
	f := newFixture(t)
	p1, p2, p3 := randBytes(5*mib+3, 1), randBytes(5*mib, 2), randBytes(1, 3) // misaligned first part
	id := f.create(t, "mp")
	// Parts out of order, and part 3 from another Store (another process)
	// over the same backend.
	other, err := New(Direct(f.be), f.kr, Options{SpoolDir: t.TempDir(), BackendChecksum: true})
	if err != nil {
		t.Fatal(err)
	}
	e3 := f.part(t, other, "mp", id, 3, p3)
	e1 := f.part(t, f.st, "mp", id, 1, p1)
	e2 := f.part(t, f.st, "mp", id, 2, p2)
	if len(f.reservedKeys(t, uploadsPrefix)) != 4 {
		t.Fatalf("upload state: %v", f.reservedKeys(t, uploadsPrefix))
	}
	// Completed by the other process, which never saw parts 1 and 2.
	info, err := other.CompleteMultipart(f.ctx, CompleteInput{ExpectSize: -1, Bucket: bucket, Key: "mp", UploadID: id,
		Parts: completeParts([]int{1, 2, 3}, []string{e1.ETag, e2.ETag, e3.ETag})})
	if err != nil {
		t.Fatal(err)
	}
	whole := append(append(bytes.Clone(p1), p2...), p3...)
	want := mpETag(p1, p2, p3)
	if info.ETag != want || info.Size != int64(len(whole)) {
		t.Fatalf("complete: %s %d, want %s %d", info.ETag, info.Size, want, len(whole))
	}
	if keys := f.reservedKeys(t, uploadsPrefix); len(keys) != 0 {
		t.Fatalf("upload state left: %v", keys)
	}
	if keys := f.reservedKeys(t, manifestsPrefix); len(keys) != 1 {
		t.Fatalf("manifests: %v", keys)
	}

	// A fresh Store (a restart) reads it: HEAD, GET, ranges, parts, listing.
	fresh, _ := New(Direct(f.be), f.kr, Options{SpoolDir: t.TempDir()})
	h, err := fresh.Head(f.ctx, bucket, "mp")
	if err != nil || h.ETag != want || h.Size != int64(len(whole)) || h.PartsCount != 3 || h.Meta["color"] != "red" || h.Headers.ContentType != "text/x-mp" {
		t.Fatalf("head: %+v, %v", h, err)
	}
	f.st = fresh
	if _, got, err := f.get(t, "mp", nil); err != nil || !bytes.Equal(got, whole) {
		t.Fatalf("get: %d bytes, %v", len(got), err)
	}
	size := int64(len(whole))
	for _, r := range []Range{
		{First: 0, Last: 0}, {First: 5*mib + 2, Last: 5*mib + 3}, // across parts 1 and 2
		{First: 65536 - 1, Last: 65536}, {First: 5*mib + 3 + 65535, Last: 5*mib + 3 + 65536},
		{First: 10*mib + 2, Last: -1}, {First: -1, SuffixLen: 2}, {First: 1000, Last: 10*mib + 2}, // parts 1 to 3
		{First: 0, Last: -1},
	} {
		info, got, err := f.get(t, "mp", &r)
		off, n, _ := r.Resolve(size)
		if err != nil || !bytes.Equal(got, whole[off:off+n]) || info.Size != size {
			t.Errorf("range %+v: %d bytes, %v", r, len(got), err)
		}
	}
	for i, p := range [][]byte{p1, p2, p3} {
		if _, got, err := f.get(t, "mp", &Range{Part: i + 1}); err != nil || !bytes.Equal(got, p) {
			t.Errorf("part %d: %d bytes, %v", i+1, len(got), err)
		}
	}
	if _, _, err := f.get(t, "mp", &Range{Part: 4}); !isCode(err, "InvalidPartNumber") {
		t.Errorf("part 4: %v", err)
	}
	page, err := fresh.List(f.ctx, backend.ListInput{Bucket: bucket, MaxKeys: 1000})
	if err != nil || len(page.Entries) != 1 || page.Entries[0].ETag != want || page.Entries[0].Size != size {
		t.Fatalf("list: %+v, %v", page.Entries, err)
	}

	// Delete takes the manifest with it.
	if err := fresh.Delete(f.ctx, bucket, "mp"); err != nil {
		t.Fatal(err)
	}
	if keys := f.reservedKeys(t, manifestsPrefix); len(keys) != 0 {
		t.Fatalf("manifest left after delete: %v", keys)
	}
}

func TestMultipartRules(t *testing.T) {
	f := newFixture(t)
	big, small := randBytes(5*mib, 4), randBytes(100, 5)
	id := f.create(t, "rules")
	e1 := f.part(t, f.st, "rules", id, 1, small)
	e2 := f.part(t, f.st, "rules", id, 2, big)
	complete := func(nums []int, etags []string) error {
		_, err := f.st.CompleteMultipart(f.ctx, CompleteInput{ExpectSize: -1, Bucket: bucket, Key: "rules", UploadID: id, Parts: completeParts(nums, etags)})
		return err
	}
	if err := complete([]int{2, 1}, []string{e2.ETag, e1.ETag}); !isCode(err, "InvalidPartOrder") {
		t.Errorf("out of order: %v", err)
	}
	if err := complete([]int{1, 2}, []string{e1.ETag, e2.ETag}); !isCode(err, "EntityTooSmall") || err.Error() != "EntityTooSmall: Your proposed upload is smaller than the minimum allowed size" {
		t.Errorf("small first part: %v", err)
	}
	if err := complete([]int{2, 3}, []string{e2.ETag, e1.ETag}); !isCode(err, "InvalidPart") {
		t.Errorf("unknown part: %v", err)
	}
	if err := complete([]int{2}, []string{e1.ETag}); !isCode(err, "InvalidPart") {
		t.Errorf("wrong ETag: %v", err)
	}
	if err := complete(nil, nil); !isCode(err, "MalformedXML") {
		t.Errorf("no parts: %v", err)
	}
	// Re-upload part 1 with 5 MiB: the last upload wins; the old ETag is
	// no longer a part.
	big1 := randBytes(5*mib, 6)
	n1 := f.part(t, f.st, "rules", id, 1, big1)
	if err := complete([]int{1, 2}, []string{e1.ETag, e2.ETag}); !isCode(err, "InvalidPart") {
		t.Errorf("replaced part's old ETag: %v", err)
	}
	page, err := f.st.ListParts(f.ctx, bucket, "rules", id, 0, 1000)
	if err != nil || len(page.Parts) != 2 || page.Parts[0].ETag != n1.ETag || page.Parts[0].Size != 5*mib || page.Parts[1].ETag != e2.ETag {
		t.Fatalf("list parts: %+v, %v", page, err)
	}
	if page, _ := f.st.ListParts(f.ctx, bucket, "rules", id, 1, 1); len(page.Parts) != 1 || page.Parts[0].PartNumber != 2 || page.IsTruncated {
		t.Fatalf("list parts after marker 1: %+v", page)
	}
	if err := complete([]int{1, 2}, []string{n1.ETag, e2.ETag}); err != nil {
		t.Fatal(err)
	}
	if _, got, err := f.get(t, "rules", nil); err != nil || !bytes.Equal(got, append(bytes.Clone(big1), big...)) {
		t.Fatalf("get: %v", err)
	}
	// The upload is gone now.
	if _, err := f.st.UploadPart(f.ctx, UploadPartInput{Bucket: bucket, Key: "rules", UploadID: id, PartNumber: 3, Body: bytes.NewReader(nil)}); !isCode(err, "NoSuchUpload") {
		t.Errorf("part after completion: %v", err)
	}
	// A repeat of the completion answers its object, as S3 does
	// (TestCompleteRepeatedAfterSuccess); with other parts the upload is over.
	if err := complete([]int{1, 2}, []string{n1.ETag, e2.ETag}); err != nil {
		t.Errorf("completion again: %v", err)
	}
	if err := complete([]int{1}, []string{n1.ETag}); !isCode(err, "NoSuchUpload") {
		t.Errorf("completion again with other parts: %v", err)
	}
	for _, n := range []int{0, 10001} {
		if _, err := f.st.UploadPart(f.ctx, UploadPartInput{Bucket: bucket, Key: "rules", UploadID: id, PartNumber: n, Body: bytes.NewReader(nil)}); !isCode(err, "InvalidArgument") {
			t.Errorf("part number %d: %v", n, err)
		}
	}
}

func TestMultipartAbort(t *testing.T) {
	f := newFixture(t)
	id := f.create(t, "ab")
	f.part(t, f.st, "ab", id, 1, randBytes(1000, 7))
	if err := f.st.AbortMultipart(f.ctx, bucket, "ab", id); err != nil {
		t.Fatal(err)
	}
	if keys := f.reservedKeys(t, ReservedPrefix); len(keys) != 0 {
		t.Fatalf("state left after abort: %v", keys)
	}
	if _, err := f.st.UploadPart(f.ctx, UploadPartInput{Bucket: bucket, Key: "ab", UploadID: id, PartNumber: 2, Body: bytes.NewReader(nil)}); !isCode(err, "NoSuchUpload") {
		t.Errorf("part after abort: %v", err)
	}
	if err := f.st.AbortMultipart(f.ctx, bucket, "ab", "no-such-upload"); !isCode(err, "NoSuchUpload") {
		t.Errorf("abort of an unknown upload: %v", err)
	}
}

// TestMultipartEdges: an empty last part, one part only, part 10000, and
// an overwrite that takes the old manifest away.
func TestMultipartEdges(t *testing.T) {
	f := newFixture(t)
	cases := []struct {
		name  string
		nums  []int
		sizes []int
	}{
		{"empty last part", []int{1, 2}, []int{5 * mib, 0}},
		{"one empty part", []int{1}, []int{0}},
		{"part 10000", []int{9999, 10000}, []int{5*mib + 1, 65537}},
		{"last part 64 KiB - 1", []int{1, 2}, []int{5 * mib, 65535}},
	}
	for i, c := range cases {
		id := f.create(t, "edge")
		var etags []string
		var parts [][]byte
		for j, n := range c.nums {
			p := randBytes(c.sizes[j], uint64(100*i+j))
			parts = append(parts, p)
			etags = append(etags, f.part(t, f.st, "edge", id, n, p).ETag)
		}
		info, err := f.st.CompleteMultipart(f.ctx, CompleteInput{ExpectSize: -1, Bucket: bucket, Key: "edge", UploadID: id, Parts: completeParts(c.nums, etags)})
		if err != nil || info.ETag != mpETag(parts...) {
			t.Fatalf("%s: %v", c.name, err)
		}
		if _, got, err := f.get(t, "edge", nil); err != nil || !bytes.Equal(got, bytes.Join(parts, nil)) {
			t.Fatalf("%s: get %d bytes, %v", c.name, len(got), err)
		}
		// Each completion overwrote the last: one manifest at a time.
		if keys := f.reservedKeys(t, manifestsPrefix); len(keys) != 1 {
			t.Fatalf("%s: manifests %v", c.name, keys)
		}
	}
}

// TestMultipartTamper: what the store might do to a multipart object.
func TestMultipartTamper(t *testing.T) {
	f := newFixture(t)
	p1, p2 := randBytes(5*mib, 8), randBytes(1000, 9)
	id := f.create(t, "t")
	e1, e2 := f.part(t, f.st, "t", id, 1, p1), f.part(t, f.st, "t", id, 2, p2)
	if _, err := f.st.CompleteMultipart(f.ctx, CompleteInput{ExpectSize: -1, Bucket: bucket, Key: "t", UploadID: id,
		Parts: completeParts([]int{1, 2}, []string{e1.ETag, e2.ETag})}); err != nil {
		t.Fatal(err)
	}
	obj, err := f.be.GetObject(f.ctx, backend.GetInput{Bucket: bucket, Key: "t"})
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := io.ReadAll(obj.Body)
	obj.Body.Close()
	mkeys := f.reservedKeys(t, manifestsPrefix)
	fresh := func() *Store { s, _ := New(Direct(f.be), f.kr, Options{SpoolDir: t.TempDir()}); return s }

	// Copied to another key: the name is bound.
	if _, err := f.be.PutObject(f.ctx, backend.PutInput{Bucket: bucket, Key: "copy", Body: bytes.NewReader(raw),
		Size: int64(len(raw)), Meta: obj.Info.Meta}); err != nil {
		t.Fatal(err)
	}
	if _, err := fresh().Head(f.ctx, bucket, "copy"); !errors.Is(err, ErrIntegrity) {
		t.Errorf("copied under another key: %v", err)
	}
	// Cut by one segment's worth, or extended.
	for name, b := range map[string][]byte{"cut": raw[:len(raw)-1028], "extended": append(bytes.Clone(raw), raw[:100]...)} {
		if _, err := f.be.PutObject(f.ctx, backend.PutInput{Bucket: bucket, Key: "t", Body: bytes.NewReader(b),
			Size: int64(len(b)), Meta: obj.Info.Meta}); err != nil {
			t.Fatal(err)
		}
		if _, err := fresh().Head(f.ctx, bucket, "t"); !errors.Is(err, ErrIntegrity) {
			t.Errorf("%s: %v", name, err)
		}
	}
	// The manifest gone.
	if _, err := f.be.PutObject(f.ctx, backend.PutInput{Bucket: bucket, Key: "t", Body: bytes.NewReader(raw),
		Size: int64(len(raw)), Meta: obj.Info.Meta}); err != nil {
		t.Fatal(err)
	}
	if err := f.be.DeleteObject(f.ctx, bucket, mkeys[0]); err != nil {
		t.Fatal(err)
	}
	if _, err := fresh().Head(f.ctx, bucket, "t"); !errors.Is(err, ErrIntegrity) {
		t.Errorf("manifest deleted: %v", err)
	}
}

// completeSmall makes a one-part multipart object at key.
func (f *fixture) completeSmall(t *testing.T, key string, data []byte) {
	t.Helper()
	id := f.create(t, key)
	e := f.part(t, f.st, key, id, 1, data)
	if _, err := f.st.CompleteMultipart(f.ctx, CompleteInput{ExpectSize: -1, Bucket: bucket, Key: key, UploadID: id,
		Parts: completeParts([]int{1}, []string{e.ETag})}); err != nil {
		t.Fatal(err)
	}
}

// TestManifestFollowsObject: a PUT over a multipart object, a copy over
// one and DeleteObjects take its manifest away; nothing else does.
func TestManifestFollowsObject(t *testing.T) {
	f := newFixture(t)
	count := func() int { return len(f.reservedKeys(t, manifestsPrefix)) }
	for _, k := range []string{"put", "copy", "del1", "del2", "keep"} {
		f.completeSmall(t, k, randBytes(100, 11))
	}
	if count() != 5 {
		t.Fatalf("%d manifests", count())
	}
	f.put(t, "put", []byte("single"))
	if _, err := f.st.Copy(f.ctx, CopyInput{SrcBucket: bucket, SrcKey: "put", Bucket: bucket, Key: "copy"}); err != nil {
		t.Fatal(err)
	}
	if count() != 3 {
		t.Fatalf("after PUT and copy over multipart objects: %d manifests, want 3", count())
	}
	res, err := f.st.DeleteObjects(f.ctx, bucket, []string{"del1", "del2", "missing"})
	if err != nil || len(res) != 3 {
		t.Fatalf("DeleteObjects: %v, %v", res, err)
	}
	if count() != 1 {
		t.Fatalf("after DeleteObjects: %d manifests, want 1", count())
	}
	if _, got, err := f.get(t, "keep", nil); err != nil || !bytes.Equal(got, randBytes(100, 11)) {
		t.Fatalf("the untouched multipart object: %v", err)
	}
}
