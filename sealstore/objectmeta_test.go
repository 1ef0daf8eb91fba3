package sealstore

import (
	"bytes"
	"context"
	"crypto/md5"
	"io"
	"maps"
	"strings"
	"testing"

	"github.com/s3seal/s3seal/backend"
	"github.com/s3seal/s3seal/crypto"
)

// clientMeta is what real clients write beside an object: rclone's mtime
// and md5chksum, s3cmd's attrs, the aws CLI's --metadata, a key with an
// underscore (which stores behind a WSGI server drop as a header name),
// an empty value.
func clientMeta() map[string]string {
	return map[string]string{"mtime": "1700000000.123456789", "md5chksum": "B64MD5DIGEST==",
		"s3cmd-attrs": "atime:1/md5:0123456789abcdef0123456789abcdef/mode:33188", "diagnosis": "flu",
		"key_with_underscore": "underscore-ok", "emptyvalue": ""}
}

// clientHeaders are the content headers a client sets, each a value the
// store must not learn or be able to change.
func clientHeaders() backend.Headers {
	return backend.Headers{ContentType: "text/x-secret-type", ContentEncoding: "x-secret-coding",
		ContentDisposition: `attachment; filename="secret-name.txt"`, ContentLanguage: "x-secret-lang",
		CacheControl: "x-secret-cache", Expires: "Thu, 01 Dec 2094 16:00:00 GMT", WebsiteRedirectLocation: "/secret-redirect"}
}

// secrets are the values of clientMeta and clientHeaders the store must
// not see, and a key name.
var secrets = []string{"1700000000", "B64MD5DIGEST", "0123456789abcdef", "flu", "underscore-ok", "diagnosis",
	"secret-type", "secret-coding", "secret-name", "secret-lang", "secret-cache", "2094", "secret-redirect"}

// backendMeta returns the store's user metadata of key.
func (f *fixture) backendMeta(t *testing.T, key string) map[string]string {
	t.Helper()
	bi, err := f.be.HeadObject(f.ctx, bucket, key)
	if err != nil {
		t.Fatal(err)
	}
	return bi.Meta
}

// nothingInStore fails when the store's metadata or headers of key hold
// any of the secrets.
func (f *fixture) nothingInStore(t *testing.T, key string) {
	t.Helper()
	bi, err := f.be.HeadObject(f.ctx, bucket, key)
	if err != nil {
		t.Fatal(err)
	}
	seen := []string{bi.Headers.ContentType, bi.Headers.ContentEncoding, bi.Headers.ContentDisposition, bi.Headers.ContentLanguage,
		bi.Headers.CacheControl, bi.Headers.Expires, bi.Headers.WebsiteRedirectLocation}
	for k, v := range bi.Meta {
		seen = append(seen, k, v)
	}
	for _, v := range seen {
		for _, s := range secrets {
			if strings.Contains(v, s) {
				t.Errorf("%s: the store sees %q (in %q)", key, s, v)
			}
		}
	}
	if bi.Meta[crypto.MetaVersion] != "2" {
		t.Errorf("%s: written in format %q", key, bi.Meta[crypto.MetaVersion])
	}
}

func (f *fixture) stat(t *testing.T, st *Store, key string, ck *crypto.CustomerKey) ObjectInfo {
	t.Helper()
	info, err := st.Stat(f.ctx, ReadInput{Bucket: bucket, Key: key, CustomerKey: ck})
	if err != nil {
		t.Fatalf("stat %s: %v", key, err)
	}
	return info
}

// contentHeaders is h without what the store keeps for itself.
func contentHeaders(h backend.Headers) backend.Headers {
	return backend.Headers{ContentType: h.ContentType, ContentEncoding: h.ContentEncoding, ContentDisposition: h.ContentDisposition,
		ContentLanguage: h.ContentLanguage, CacheControl: h.CacheControl, Expires: h.Expires, WebsiteRedirectLocation: h.WebsiteRedirectLocation}
}

// wantClientView fails unless info shows exactly meta and the content
// headers of h.
func wantClientView(t *testing.T, what string, info ObjectInfo, meta map[string]string, h backend.Headers) {
	t.Helper()
	if !maps.Equal(info.Meta, meta) || contentHeaders(info.Headers) != contentHeaders(h) {
		t.Errorf("%s: meta %v, headers %+v; want %v, %+v", what, info.Meta, contentHeaders(info.Headers), meta, contentHeaders(h))
	}
}

// TestObjectMetaSealed: no user metadata entry and no content header
// reaches the store, on single PUTs, SSE-C objects, multipart uploads,
// copies (COPY and REPLACE) and rewraps (whole and by parts); clients get
// back exactly what they wrote, with the storage class the store keeps.
func TestObjectMetaSealed(t *testing.T) {
	f := newFixture(t)
	kr := rotationKeyring(t)
	st, _ := New(Direct(f.be), kr, Options{SpoolDir: t.TempDir(), BackendChecksum: true})
	f.st = st
	ck := customerKeyOf(t, 3)
	data := randBytes(70000, 5)
	meta, h := clientMeta(), clientHeaders()
	h.StorageClass = "STANDARD_IA"
	if _, err := st.Put(f.ctx, PutInput{Bucket: bucket, Key: "c", Body: bytes.NewReader(data), Size: int64(len(data)),
		Meta: maps.Clone(meta), Headers: h, CustomerKey: ck}); err != nil {
		t.Fatal(err)
	}
	f.nothingInStore(t, "c")
	info := f.stat(t, st, "c", ck)
	wantClientView(t, "stat", info, meta, h)
	if info.Headers.StorageClass != "STANDARD_IA" {
		t.Errorf("storage class %q", info.Headers.StorageClass)
	}
	info, rd, err := st.Read(f.ctx, ReadInput{Bucket: bucket, Key: "c", CustomerKey: ck})
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(io.LimitReader(rd, rd.Len))
	rd.Close()
	if !bytes.Equal(got, data) {
		t.Errorf("read: %d bytes", len(got))
	}
	wantClientView(t, "read", info, meta, h)

	// Multipart: the upload's metadata is the object's.
	id, err := st.CreateMultipart(f.ctx, CreateMultipartInput{Bucket: bucket, Key: "mp", Meta: maps.Clone(meta), Headers: h})
	if err != nil {
		t.Fatal(err)
	}
	e := f.part(t, st, "mp", id, 1, data)
	if _, err := st.CompleteMultipart(f.ctx, CompleteInput{ExpectSize: -1, Bucket: bucket, Key: "mp", UploadID: id,
		Parts: completeParts([]int{1}, []string{e.ETag})}); err != nil {
		t.Fatal(err)
	}
	f.nothingInStore(t, "mp")
	wantClientView(t, "multipart", f.stat(t, st, "mp", nil), meta, h)

	// COPY keeps the source's metadata (sealed again, with the copy's key).
	if _, err := st.Copy(f.ctx, CopyInput{SrcBucket: bucket, SrcKey: "c", SrcCustomerKey: ck, Bucket: bucket, Key: "copy"}); err != nil {
		t.Fatal(err)
	}
	f.nothingInStore(t, "copy")
	copied := h
	copied.WebsiteRedirectLocation = "" // a copy takes it from the request, never from the source
	wantClientView(t, "COPY", f.stat(t, st, "copy", nil), meta, copied)
	// REPLACE takes the request's.
	repl, rh := map[string]string{"md5chksum": "OTHERDIGEST=="}, backend.Headers{ContentType: "text/x-secret-type-2"}
	if _, err := st.Copy(f.ctx, CopyInput{SrcBucket: bucket, SrcKey: "copy", Bucket: bucket, Key: "copy", ReplaceMeta: true, Meta: maps.Clone(repl), Headers: rh}); err != nil {
		t.Fatal(err)
	}
	f.nothingInStore(t, "copy")
	wantClientView(t, "REPLACE", f.stat(t, st, "copy", nil), repl, rh)

	// Rewraps keep the sealed metadata (same data key), whole and by parts.
	big := randBytes(7<<20, 6)
	if _, err := st.Put(f.ctx, PutInput{Bucket: bucket, Key: "big", Body: bytes.NewReader(big), Size: int64(len(big)), Meta: maps.Clone(meta), Headers: h}); err != nil {
		t.Fatal(err)
	}
	if err := st.Rewrap(f.ctx, bucket, RewrapOptions{To: "k2", MaxCopySize: 6 << 20}, func(r RewrapResult) {
		if r.Err != nil {
			t.Errorf("rewrap %s: %v", r.Key, r.Err)
		}
	}); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"c", "mp", "big"} {
		var key *crypto.CustomerKey
		if k == "c" {
			key = ck
		}
		if f.backendMeta(t, k)[crypto.MetaKeyID] != "k2" {
			t.Fatalf("%s not rewrapped", k)
		}
		f.nothingInStore(t, k)
		wantClientView(t, "after rewrap, "+k, f.stat(t, st, k, key), meta, h)
	}
}

// TestObjectMetaTampered: the store can neither change, move, drop nor
// add to what a format 2 object's client wrote: a sealed value altered,
// taken from another object or removed fails the integrity check; clear
// entries and content headers the store adds are not served.
func TestObjectMetaTampered(t *testing.T) {
	f := newFixture(t)
	meta, h := clientMeta(), clientHeaders()
	put := func(key string, meta map[string]string) {
		t.Helper()
		if _, err := f.st.Put(f.ctx, PutInput{Bucket: bucket, Key: key, Body: strings.NewReader("x"), Size: 1, Meta: maps.Clone(meta), Headers: h}); err != nil {
			t.Fatal(err)
		}
	}
	restore := func(key string, meta map[string]string, h backend.Headers) {
		t.Helper()
		obj, err := f.be.GetObject(f.ctx, backend.GetInput{Bucket: bucket, Key: key})
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(obj.Body)
		obj.Body.Close()
		if _, err := f.be.PutObject(f.ctx, backend.PutInput{Bucket: bucket, Key: key, Body: bytes.NewReader(b), Size: int64(len(b)), Meta: meta, Headers: h}); err != nil {
			t.Fatal(err)
		}
	}
	refused := func(what string) {
		t.Helper()
		if _, err := f.st.Stat(f.ctx, ReadInput{Bucket: bucket, Key: "a"}); errorCode(err) != "InternalError" {
			t.Errorf("%s: %v", what, err)
		}
	}
	put("a", meta)
	put("b", map[string]string{"md5chksum": "B'S DIGEST"})
	am, bm := f.backendMeta(t, "a"), f.backendMeta(t, "b")

	moved := maps.Clone(am)
	moved[crypto.MetaObject] = bm[crypto.MetaObject]
	restore("a", moved, backend.Headers{})
	refused("b's sealed metadata under a's envelope")

	bad := maps.Clone(am)
	v := []byte(am[crypto.MetaObject])
	v[20] ^= 1
	bad[crypto.MetaObject] = string(v)
	restore("a", bad, backend.Headers{})
	refused("altered sealed metadata")

	dropped := maps.Clone(am)
	delete(dropped, crypto.MetaObject)
	restore("a", dropped, backend.Headers{})
	refused("sealed metadata removed")

	// Downgraded to format 1, whose metadata and headers are the store's.
	old := maps.Clone(dropped)
	old[crypto.MetaVersion] = "1"
	maps.Copy(old, map[string]string{"diagnosis": "healthy"})
	restore("a", old, backend.Headers{ContentType: "text/html"})
	refused("passed off as format 1")

	// The store's own entries and headers are not the client's.
	added := maps.Clone(am)
	added["diagnosis"], added["injected"] = "healthy", "1"
	restore("a", added, backend.Headers{ContentType: "text/html", ContentEncoding: "gzip", ContentDisposition: "inline",
		CacheControl: "public", WebsiteRedirectLocation: "https://evil.example/"})
	wantClientView(t, "store-added entries and headers", f.stat(t, f.st, "a", nil), meta, h)
}

// putFormat1 writes an object as an s3seal from before format 2 did:
// the digests and underscore keys sealed in s3seal-um, every other entry
// and the content headers in the clear.
func (f *fixture) putFormat1(t *testing.T, key string, data []byte, meta map[string]string, h backend.Headers) {
	t.Helper()
	dk, err := crypto.NewDataKey()
	if err != nil {
		t.Fatal(err)
	}
	var ct bytes.Buffer
	w := crypto.NewWriter(&ct, dk, crypto.Stream{})
	w.Write(data)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	env, err := f.kr.Wrap(context.Background(), dk, "", crypto.Name{Bucket: bucket, Key: key}, crypto.Binding{Version: crypto.FormatV1,
		PlainSize: int64(len(data)), PlainMD5: md5.Sum(data)})
	if err != nil {
		t.Fatal(err)
	}
	stored, sealed := env.Metadata(), map[string]string{}
	for k, v := range meta {
		if k == "md5chksum" || k == "s3cmd-attrs" || strings.Contains(k, "_") {
			sealed[k] = v
		} else {
			stored[k] = v
		}
	}
	if stored[crypto.MetaUser], err = crypto.SealUserMeta(dk, sealed); err != nil {
		t.Fatal(err)
	}
	if _, err := f.be.PutObject(f.ctx, backend.PutInput{Bucket: bucket, Key: key, Body: bytes.NewReader(ct.Bytes()), Size: int64(ct.Len()), Meta: stored, Headers: h}); err != nil {
		t.Fatal(err)
	}
}

// TestFormat1ObjectsStillRead: an object written before format 2 reads
// as it always did (its sealed entries opened, the rest as the store
// holds them); a rewrap keeps it readable and in format 1; a copy writes
// format 2. Its sealed entries, altered, still fail the integrity check.
func TestFormat1ObjectsStillRead(t *testing.T) {
	f := newFixture(t)
	kr := rotationKeyring(t)
	st, _ := New(Direct(f.be), kr, Options{SpoolDir: t.TempDir()})
	f.kr, f.st = kr, st
	meta, h := clientMeta(), clientHeaders()
	h.Expires = "" // a copy at the store never carries it (backend.CopyInput), so a rewrap loses it
	data := []byte("written in format 1")
	f.putFormat1(t, "old", data, meta, h)
	if _, got, err := f.get(t, "old", nil); err != nil || !bytes.Equal(got, data) {
		t.Fatalf("get: %q %v", got, err)
	}
	wantClientView(t, "format 1", f.stat(t, f.st, "old", nil), meta, h)

	if err := st.Rewrap(f.ctx, bucket, RewrapOptions{To: "k2"}, func(r RewrapResult) {
		if r.Err != nil {
			t.Errorf("rewrap %s: %v", r.Key, r.Err)
		}
	}); err != nil {
		t.Fatal(err)
	}
	if m := f.backendMeta(t, "old"); m[crypto.MetaKeyID] != "k2" || m[crypto.MetaVersion] != "1" {
		t.Fatalf("after rewrap: %v", m)
	}
	wantClientView(t, "format 1 rewrapped", f.stat(t, st, "old", nil), meta, h)

	if _, err := st.Copy(f.ctx, CopyInput{SrcBucket: bucket, SrcKey: "old", Bucket: bucket, Key: "new"}); err != nil {
		t.Fatal(err)
	}
	f.nothingInStore(t, "new")
	copied := h
	copied.WebsiteRedirectLocation = ""
	wantClientView(t, "format 1 copied", f.stat(t, st, "new", nil), meta, copied)

	bad := f.backendMeta(t, "old")
	v := []byte(bad[crypto.MetaUser])
	v[10] ^= 1
	bad[crypto.MetaUser] = string(v)
	f.rewrite(t, "old", func(b []byte) []byte { return b }, bad)
	if _, err := st.Stat(f.ctx, ReadInput{Bucket: bucket, Key: "old"}); errorCode(err) != "InternalError" {
		t.Errorf("altered sealed entries: %v", err)
	}
}

// TestObjectMetaTooLarge: what does not fit sealed in the store's 2 KB is
// refused with MetadataTooLarge before any byte is read, on PUT,
// CreateMultipartUpload and copies; exactly the limit is stored.
func TestObjectMetaTooLarge(t *testing.T) {
	f := newFixture(t)
	h := backend.Headers{ContentType: "application/octet-stream"}
	at := map[string]string{"mtime": "1700000000.123456789", "pad": ""}
	at["pad"] = strings.Repeat("p", crypto.MaxObjectMeta-objectMeta(at, h).EncodedSize())
	if _, err := f.st.Put(f.ctx, PutInput{Bucket: bucket, Key: "at", Body: strings.NewReader("x"), Size: 1, Meta: maps.Clone(at), Headers: h}); err != nil {
		t.Fatalf("at the limit: %v", err)
	}
	wantClientView(t, "at the limit", f.stat(t, f.st, "at", nil), at, h)
	total := 0
	for k, v := range f.backendMeta(t, "at") {
		total += len(k) + len(v)
	}
	if total > 2048 {
		t.Errorf("the store holds %d bytes of user metadata, over S3's 2 KB", total)
	}

	over := maps.Clone(at)
	over["pad"] += "p"
	body := &countingReader{r: strings.NewReader("x")}
	if _, err := f.st.Put(f.ctx, PutInput{Bucket: bucket, Key: "over", Body: body, Size: 1, Meta: over, Headers: h}); errorCode(err) != "MetadataTooLarge" {
		t.Errorf("PUT one byte over: %v", err)
	}
	if body.n != 0 {
		t.Errorf("the refused PUT read %d bytes of its body", body.n)
	}
	if _, err := f.st.CreateMultipart(f.ctx, CreateMultipartInput{Bucket: bucket, Key: "over", Meta: over, Headers: h}); errorCode(err) != "MetadataTooLarge" {
		t.Errorf("CreateMultipart one byte over: %v", err)
	}
	long := backend.Headers{ContentType: "application/octet-stream", ContentDisposition: strings.Repeat("d", crypto.MaxObjectMeta)}
	if _, err := f.st.Copy(f.ctx, CopyInput{SrcBucket: bucket, SrcKey: "at", Bucket: bucket, Key: "over", ReplaceMeta: true, Headers: long}); errorCode(err) != "MetadataTooLarge" {
		t.Errorf("copy with a long header: %v", err)
	}
	if _, err := f.be.HeadObject(f.ctx, bucket, "over"); !backend.IsNotFound(err) {
		t.Errorf("a refused write left an object: %v", err)
	}
}

type countingReader struct {
	r io.Reader
	n int
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += n
	return n, err
}
