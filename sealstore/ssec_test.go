package sealstore

import (
	"bytes"
	"encoding/base64"
	"io"
	"strings"
	"testing"

	"github.com/s3seal/s3seal/backend"
	"github.com/s3seal/s3seal/crypto"
)

func customerKeyOf(t *testing.T, b byte) *crypto.CustomerKey {
	t.Helper()
	ck, err := crypto.NewCustomerKey(bytes.Repeat([]byte{b}, 32))
	if err != nil {
		t.Fatal(err)
	}
	return ck
}

func (f *fixture) read(t *testing.T, st *Store, in ReadInput) ([]byte, error) {
	t.Helper()
	in.Bucket = bucket
	_, rd, err := st.Read(f.ctx, in)
	if err != nil {
		return nil, err
	}
	defer rd.Close()
	return io.ReadAll(io.LimitReader(rd, rd.Len))
}

// wantReadRefused checks that a read and a Stat with ck are refused with
// code and that the content was not served.
func (f *fixture) wantReadRefused(t *testing.T, key string, ck *crypto.CustomerKey, code string) {
	t.Helper()
	if got, err := f.read(t, f.st, ReadInput{Key: key, CustomerKey: ck}); errorCode(err) != code {
		t.Errorf("read %s: %d bytes, %v; want %s", key, len(got), err, code)
	}
	if got, err := f.read(t, f.st, ReadInput{Key: key, CustomerKey: ck, Range: &Range{First: 1, Last: 5}}); errorCode(err) != code {
		t.Errorf("ranged read %s: %d bytes, %v; want %s", key, len(got), err, code)
	}
	if _, err := f.st.Stat(f.ctx, ReadInput{Bucket: bucket, Key: key, CustomerKey: ck}); errorCode(err) != code {
		t.Errorf("stat %s: %v; want %s", key, err, code)
	}
}

// TestCustomerKeyObjects: an object PUT with a customer key is read only
// with that key (400 without, 403 with another), a key is refused for an
// object without one, the store never sees the key, and listings and
// HEADs without the key keep the plaintext size.
func TestCustomerKeyObjects(t *testing.T) {
	f := newFixture(t)
	ck, other := customerKeyOf(t, 1), customerKeyOf(t, 2)
	data := randBytes(3*65536+100, 21)
	info, err := f.st.Put(f.ctx, PutInput{Bucket: bucket, Key: "c", Body: bytes.NewReader(data), Size: int64(len(data)), CustomerKey: ck})
	if err != nil {
		t.Fatal(err)
	}
	if !info.CustomerKeyed || info.ETag != md5hex(data) {
		t.Fatalf("put: keyed %v, etag %s", info.CustomerKeyed, info.ETag)
	}
	f.put(t, "plain", []byte("plain object"))

	got, err := f.read(t, f.st, ReadInput{Key: "c", CustomerKey: ck})
	if err != nil || !bytes.Equal(got, data) {
		t.Fatalf("read with the key: %v", err)
	}
	got, err = f.read(t, f.st, ReadInput{Key: "c", CustomerKey: ck, Range: &Range{First: 65530, Last: 131080}})
	if err != nil || !bytes.Equal(got, data[65530:131081]) {
		t.Fatalf("ranged read with the key: %v", err)
	}
	f.wantReadRefused(t, "c", nil, "InvalidRequest")
	f.wantReadRefused(t, "c", other, "AccessDenied")
	f.wantReadRefused(t, "plain", ck, "InvalidRequest")
	if _, _, err := f.get(t, "c", nil); errorCode(err) != "InvalidRequest" {
		t.Errorf("Get without a key: %v", err)
	}

	// Internal reads need no key: HEAD and the listing report plaintext.
	hi, err := f.st.Head(f.ctx, bucket, "c")
	if err != nil || hi.Size != int64(len(data)) || !hi.CustomerKeyed {
		t.Fatalf("head: %+v, %v", hi, err)
	}
	page, err := f.st.List(f.ctx, backend.ListInput{Bucket: bucket, Prefix: "c"})
	if err != nil || len(page.Entries) != 1 || page.Entries[0].Size != int64(len(data)) || page.Entries[0].ETag != md5hex(data) {
		t.Fatalf("list: %+v, %v", page.Entries, err)
	}

	// What the store holds: a check value, never the key or its MD5.
	bi, err := f.be.HeadObject(f.ctx, bucket, "c")
	if err != nil {
		t.Fatal(err)
	}
	if bi.Meta[crypto.MetaSSEC] == "" {
		t.Fatalf("no %s in %v", crypto.MetaSSEC, bi.Meta)
	}
	raw := bytes.Repeat([]byte{1}, 32)
	for k, v := range bi.Meta {
		for _, secret := range []string{base64.StdEncoding.EncodeToString(raw), base64.RawURLEncoding.EncodeToString(raw), ck.MD5()} {
			if strings.Contains(v, secret) {
				t.Errorf("metadata %s holds the customer key or its MD5", k)
			}
		}
	}
}

// TestCustomerKeyCopies: a copy reads its source with the source's key
// and seals the copy with its own key, or none.
func TestCustomerKeyCopies(t *testing.T) {
	f := newFixture(t)
	a, b := customerKeyOf(t, 1), customerKeyOf(t, 2)
	data := randBytes(70000, 22)
	if _, err := f.st.Put(f.ctx, PutInput{Bucket: bucket, Key: "src", Body: bytes.NewReader(data), Size: int64(len(data)), CustomerKey: a}); err != nil {
		t.Fatal(err)
	}
	copyTo := func(key string, src, dst *crypto.CustomerKey) error {
		_, err := f.st.Copy(f.ctx, CopyInput{SrcBucket: bucket, SrcKey: "src", Bucket: bucket, Key: key, SrcCustomerKey: src, CustomerKey: dst})
		return err
	}
	if err := copyTo("x", nil, nil); errorCode(err) != "InvalidRequest" {
		t.Errorf("copy without the source's key: %v", err)
	}
	if err := copyTo("x", b, nil); errorCode(err) != "AccessDenied" {
		t.Errorf("copy with another source key: %v", err)
	}
	if err := copyTo("plain", a, nil); err != nil {
		t.Fatal(err)
	}
	if err := copyTo("rekeyed", a, b); err != nil {
		t.Fatal(err)
	}
	if _, err := f.st.Copy(f.ctx, CopyInput{SrcBucket: bucket, SrcKey: "src", Bucket: bucket, Key: "src", SrcCustomerKey: a, CustomerKey: b}); err != nil {
		t.Fatalf("copy onto itself with a new key: %v", err)
	}
	for key, ck := range map[string]*crypto.CustomerKey{"plain": nil, "rekeyed": b, "src": b} {
		if got, err := f.read(t, f.st, ReadInput{Key: key, CustomerKey: ck}); err != nil || !bytes.Equal(got, data) {
			t.Errorf("%s: %v", key, err)
		}
	}
	f.wantReadRefused(t, "rekeyed", a, "AccessDenied")
	f.wantReadRefused(t, "src", a, "AccessDenied")
}

// TestCustomerKeyMultipart: every part must carry the upload's key; the
// object reads with it across part boundaries, and UploadPartCopy takes
// the source's key apart from the upload's.
func TestCustomerKeyMultipart(t *testing.T) {
	f := newFixture(t)
	ck, other := customerKeyOf(t, 3), customerKeyOf(t, 4)
	id, err := f.st.CreateMultipart(f.ctx, CreateMultipartInput{Bucket: bucket, Key: "mp", CustomerKey: ck})
	if err != nil {
		t.Fatal(err)
	}
	p1, p2 := randBytes(MinPartSize+3, 23), randBytes(70000, 24)
	part := func(n int, data []byte, key *crypto.CustomerKey) (PartInfo, error) {
		return f.st.UploadPart(f.ctx, UploadPartInput{Bucket: bucket, Key: "mp", UploadID: id, PartNumber: n,
			Body: bytes.NewReader(data), Size: int64(len(data)), CustomerKey: key})
	}
	if _, err := part(1, p1, nil); errorCode(err) != "InvalidRequest" {
		t.Errorf("part without the key: %v", err)
	}
	if _, err := part(1, p1, other); errorCode(err) != "InvalidRequest" {
		t.Errorf("part with another key: %v", err)
	}
	e1, err := part(1, p1, ck)
	if err != nil {
		t.Fatal(err)
	}
	// Part 2 is copied from a source sealed with another key.
	if _, err := f.st.Put(f.ctx, PutInput{Bucket: bucket, Key: "psrc", Body: bytes.NewReader(p2), Size: int64(len(p2)), CustomerKey: other}); err != nil {
		t.Fatal(err)
	}
	e2, err := f.st.UploadPartCopy(f.ctx, UploadPartCopyInput{SrcBucket: bucket, SrcKey: "psrc", Bucket: bucket, Key: "mp", UploadID: id,
		PartNumber: 2, SrcCustomerKey: other, CustomerKey: ck})
	if err != nil {
		t.Fatal(err)
	}
	parts := completeParts([]int{1, 2}, []string{e1.ETag, e2.ETag})
	if _, err := f.st.CompleteMultipart(f.ctx, CompleteInput{ExpectSize: -1, Bucket: bucket, Key: "mp", UploadID: id, Parts: parts, CustomerKey: other}); errorCode(err) != "InvalidRequest" {
		t.Errorf("complete with another key: %v", err)
	}
	info, err := f.st.CompleteMultipart(f.ctx, CompleteInput{ExpectSize: -1, Bucket: bucket, Key: "mp", UploadID: id, Parts: parts, CustomerKey: ck})
	if err != nil {
		t.Fatal(err)
	}
	want := append(append([]byte{}, p1...), p2...)
	if info.Size != int64(len(want)) {
		t.Fatalf("size %d", info.Size)
	}
	got, err := f.read(t, f.st, ReadInput{Key: "mp", CustomerKey: ck, Range: &Range{First: MinPartSize - 10, Last: MinPartSize + 100}})
	if err != nil || !bytes.Equal(got, want[MinPartSize-10:MinPartSize+101]) {
		t.Fatalf("range across parts: %v", err)
	}
	if got, err := f.read(t, f.st, ReadInput{Key: "mp", CustomerKey: ck}); err != nil || !bytes.Equal(got, want) {
		t.Fatalf("whole: %v", err)
	}
	f.wantReadRefused(t, "mp", nil, "InvalidRequest")
	f.wantReadRefused(t, "mp", other, "AccessDenied")

	// An upload without a key refuses one on its parts.
	plainID := f.create(t, "mp2")
	if _, err := f.st.UploadPart(f.ctx, UploadPartInput{Bucket: bucket, Key: "mp2", UploadID: plainID, PartNumber: 1,
		Body: bytes.NewReader(p2), Size: int64(len(p2)), CustomerKey: ck}); errorCode(err) != "InvalidRequest" {
		t.Errorf("keyed part of an upload without a key: %v", err)
	}
}

// TestCustomerKeyRewrapAndVerify: rewrap moves SSE-C objects to a new
// master key without the customer key, they still read with the customer
// key under the new keyring alone, and a deep verify checks what it can.
func TestCustomerKeyRewrapAndVerify(t *testing.T) {
	f := newFixture(t)
	k1, k2 := mustKey(t), mustKey(t)
	both, _ := crypto.NewKeyring("k1", map[string][]byte{"k1": k1, "k2": k2})
	only2, _ := crypto.NewKeyring("k2", map[string][]byte{"k2": k2})
	f.st, _ = New(Direct(f.be), both, Options{SpoolDir: t.TempDir(), BackendChecksum: true})
	ck := customerKeyOf(t, 5)
	data := randBytes(1000, 25)
	if _, err := f.st.Put(f.ctx, PutInput{Bucket: bucket, Key: "v/c", Body: bytes.NewReader(data), Size: int64(len(data)), CustomerKey: ck}); err != nil {
		t.Fatal(err)
	}
	id, err := f.st.CreateMultipart(f.ctx, CreateMultipartInput{Bucket: bucket, Key: "v/mp", CustomerKey: ck})
	if err != nil {
		t.Fatal(err)
	}
	e, err := f.st.UploadPart(f.ctx, UploadPartInput{Bucket: bucket, Key: "v/mp", UploadID: id, PartNumber: 1,
		Body: bytes.NewReader(data), Size: int64(len(data)), CustomerKey: ck})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.st.CompleteMultipart(f.ctx, CompleteInput{ExpectSize: -1, Bucket: bucket, Key: "v/mp", UploadID: id,
		Parts: completeParts([]int{1}, []string{e.ETag})}); err != nil {
		t.Fatalf("complete without the key: %v", err)
	}
	var res []RewrapResult
	if err := f.st.Rewrap(f.ctx, bucket, RewrapOptions{Prefix: "v/", To: "k2", NoWriters: true}, func(r RewrapResult) { res = append(res, r) }); err != nil {
		t.Fatal(err)
	}
	for _, r := range res {
		if r.Status != RewrapDone || r.Err != nil {
			t.Errorf("rewrap %s: %s %v", r.Key, r.Status, r.Err)
		}
	}
	st2, _ := New(Direct(f.be), only2, Options{SpoolDir: t.TempDir()})
	for _, key := range []string{"v/c", "v/mp"} {
		if got, err := f.read(t, st2, ReadInput{Key: key, CustomerKey: ck}); err != nil || !bytes.Equal(got, data) {
			t.Errorf("%s after rewrap: %v", key, err)
		}
	}
	var found []VerifyResult
	if err := st2.Verify(f.ctx, bucket, VerifyOptions{Prefix: "v/", Deep: true}, func(r VerifyResult) { found = append(found, r) }); err != nil {
		t.Fatal(err)
	}
	if len(found) != 2 {
		t.Fatalf("verify found %+v", found)
	}
	for _, r := range found {
		if r.Status != VerifyOK || !r.CustomerKeyed || r.KeyID != "k2" {
			t.Errorf("verify %s: %+v", r.Key, r)
		}
	}
}

// TestUploadReportsBackendEncryption: the SSE-KMS an upload was created
// with is reported with each part and by the completion, from the upload
// state (any s3seal process serving the upload knows it).
func TestUploadReportsBackendEncryption(t *testing.T) {
	f := newFixture(t)
	sse := backend.Headers{SSE: "aws:kms", SSEKMSKeyID: "testkey-1", SSEBucketKey: true}
	id, err := f.st.CreateMultipart(f.ctx, CreateMultipartInput{Bucket: bucket, Key: "kms", Headers: sse})
	if err != nil {
		t.Fatal(err)
	}
	st2, _ := New(Direct(f.be), f.kr, Options{SpoolDir: t.TempDir()}) // another process: no cached upload
	data := randBytes(100, 26)
	pi, err := st2.UploadPart(f.ctx, UploadPartInput{Bucket: bucket, Key: "kms", UploadID: id, PartNumber: 1,
		Body: bytes.NewReader(data), Size: int64(len(data))})
	if err != nil {
		t.Fatal(err)
	}
	if pi.Encryption != sse {
		t.Errorf("part reports %+v, want %+v", pi.Encryption, sse)
	}
	info, err := st2.CompleteMultipart(f.ctx, CompleteInput{ExpectSize: -1, Bucket: bucket, Key: "kms", UploadID: id,
		Parts: completeParts([]int{1}, []string{pi.ETag})})
	if err != nil {
		t.Fatal(err)
	}
	if info.Headers.SSE != sse.SSE || info.Headers.SSEKMSKeyID != sse.SSEKMSKeyID {
		t.Errorf("completion reports %+v", info.Headers)
	}
}

// TestHostileStoreOnSSEC: whatever a hostile store does to an SSE-C
// object's metadata or bodies, s3seal never serves bytes without the right
// customer key and never serves wrong bytes.
func TestHostileStoreOnSSEC(t *testing.T) {
	f := newFixture(t)
	ckA, ckB := customerKeyOf(t, 0xA), customerKeyOf(t, 0xB)
	data := randBytes(2*65536+7, 91)
	other := randBytes(2*65536+7, 92)
	put := func(key string, d []byte, ck *crypto.CustomerKey) {
		t.Helper()
		if _, err := f.st.Put(f.ctx, PutInput{Bucket: bucket, Key: key, Body: bytes.NewReader(d), Size: int64(len(d)), CustomerKey: ck}); err != nil {
			t.Fatal(err)
		}
	}
	raw := func(key string) ([]byte, map[string]string) {
		t.Helper()
		obj, err := f.be.GetObject(f.ctx, backend.GetInput{Bucket: bucket, Key: key})
		if err != nil {
			t.Fatal(err)
		}
		defer obj.Body.Close()
		b, _ := io.ReadAll(obj.Body)
		m := map[string]string{}
		for k, v := range obj.Info.Meta {
			m[k] = v
		}
		return b, m
	}
	store := func(key string, body []byte, meta map[string]string) {
		t.Helper()
		if _, err := f.be.PutObject(f.ctx, backend.PutInput{Bucket: bucket, Key: key, Body: bytes.NewReader(body), Size: int64(len(body)), Meta: meta}); err != nil {
			t.Fatal(err)
		}
	}
	// never: no read of key with any of the keys serves anything but want
	// (want nil: nothing at all).
	never := func(what, key string, want []byte) {
		t.Helper()
		for _, ck := range []*crypto.CustomerKey{nil, ckA, ckB} {
			for _, rng := range []*Range{nil, {First: 0, Last: 9}, {First: 65530, Last: 65600}} {
				got, err := f.read(t, f.st, ReadInput{Key: key, CustomerKey: ck, Range: rng})
				if err == nil && (want == nil || !bytes.Equal(got, want) && (rng == nil || !bytes.Equal(got, want[rng.First:rng.Last+1]))) {
					t.Errorf("%s: read with key %v range %v served %d bytes", what, ck != nil, rng, len(got))
				}
			}
		}
	}

	put("a", data, ckA)
	put("b", other, ckB)
	put("p", other, nil)
	aBody, aMeta := raw("a")
	bBody, bMeta := raw("b")
	pBody, pMeta := raw("p")

	// Downgrade: strip the check value.
	m := map[string]string{}
	for k, v := range aMeta {
		if k != crypto.MetaSSEC {
			m[k] = v
		}
	}
	store("a", aBody, m)
	never("stripped check", "a", nil)
	// Another object's check value, and a mixed-case duplicate of it.
	m[crypto.MetaSSEC] = bMeta[crypto.MetaSSEC]
	store("a", aBody, m)
	never("swapped check", "a", nil)
	m[crypto.MetaSSEC] = aMeta[crypto.MetaSSEC]
	m[strings.ToUpper(crypto.MetaSSEC)] = bMeta[crypto.MetaSSEC]
	store("a", aBody, m)
	never("duplicate check", "a", data)
	// Another object's body under a's envelope; b's whole object under a's name.
	store("a", bBody, aMeta)
	never("swapped body", "a", nil)
	store("a", bBody, bMeta)
	never("moved object", "a", nil)
	// A's body under the plain object's envelope, and the reverse.
	store("a", aBody, pMeta)
	never("plain envelope", "a", nil)
	store("p", pBody, aMeta)
	never("ssec envelope on plain body", "p", nil)
	// Truncated body.
	store("a", aBody[:len(aBody)-20], aMeta)
	never("cut body", "a", nil)
	// Restored: reads again with A only.
	store("a", aBody, aMeta)
	if got, err := f.read(t, f.st, ReadInput{Key: "a", CustomerKey: ckA}); err != nil || !bytes.Equal(got, data) {
		t.Fatalf("restored: %v", err)
	}
}
