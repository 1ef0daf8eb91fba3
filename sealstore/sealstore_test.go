package sealstore

import (
	"bytes"
	"context"
	"crypto/md5"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"strings"
	"testing"

	"github.com/s3seal/s3seal/backend"
	"github.com/s3seal/s3seal/crypto"
)

func TestPutGetRoundTrip(t *testing.T) {
	f := newFixture(t)
	for _, n := range []int{0, 1, 65535, 65536, 65537, 3*65536 + 17} {
		data := randBytes(n, uint64(n))
		key := fmt.Sprintf("obj-%d", n)
		pi := f.put(t, key, data)
		if pi.ETag != md5hex(data) || pi.Size != int64(n) {
			t.Fatalf("%d: put says etag %s size %d", n, pi.ETag, pi.Size)
		}
		info, got, err := f.get(t, key, nil)
		if err != nil || !bytes.Equal(got, data) {
			t.Fatalf("%d: get: err=%v equal=%v", n, err, bytes.Equal(got, data))
		}
		if info.ETag != pi.ETag || info.Size != int64(n) || info.Meta["color"] != "blue" || info.Headers.ContentType != "text/x-test" {
			t.Fatalf("%d: get info %+v", n, info)
		}
		for k := range info.Meta {
			if strings.HasPrefix(k, "s3seal-") {
				t.Fatalf("internal metadata %q leaked", k)
			}
		}
		hi, err := f.st.Head(f.ctx, bucket, key)
		if err != nil || hi.ETag != pi.ETag || hi.Size != int64(n) {
			t.Fatalf("%d: head %+v %v", n, hi, err)
		}
		raw, err := f.be.HeadObject(f.ctx, bucket, key)
		if err != nil || raw.Size != crypto.CiphertextSize(int64(n)) {
			t.Fatalf("%d: backend size %d, want %d (%v)", n, raw.Size, crypto.CiphertextSize(int64(n)), err)
		}
	}
}

func TestRangeResolve(t *testing.T) {
	cases := []struct {
		r       Range
		size    int64
		off, n  int64
		invalid bool
	}{
		{Range{First: 0, Last: 0}, 10, 0, 1, false},
		{Range{First: 2, Last: 5}, 10, 2, 4, false},
		{Range{First: 2, Last: 50}, 10, 2, 8, false},
		{Range{First: 7, Last: -1}, 10, 7, 3, false},
		{Range{First: -1, SuffixLen: 3}, 10, 7, 3, false},
		{Range{First: -1, SuffixLen: 30}, 10, 0, 10, false},
		{Range{First: 10, Last: -1}, 10, 0, 0, true},
		{Range{First: 0, Last: 5}, 0, 0, 0, true},
		{Range{First: -1, SuffixLen: 0}, 10, 0, 0, true},
		{Range{First: -1, SuffixLen: 5}, 0, 0, 0, false}, // the whole empty object, as S3
		{Range{First: -1, SuffixLen: 0}, 0, 0, 0, true},
	}
	for _, c := range cases {
		off, n, err := c.r.Resolve(c.size)
		if c.invalid {
			var se *Error
			if !errors.As(err, &se) || se.Code != "InvalidRange" {
				t.Errorf("%+v on %d: err=%v, want InvalidRange", c.r, c.size, err)
			}
			continue
		}
		if err != nil || off != c.off || n != c.n {
			t.Errorf("%+v on %d: got %d,%d,%v want %d,%d", c.r, c.size, off, n, err, c.off, c.n)
		}
	}
}

func TestRangedGet(t *testing.T) {
	f := newFixture(t)
	const size = 4*65536 + 100
	data := randBytes(size, 1)
	f.put(t, "r", data)
	for _, c := range []struct{ first, last int64 }{
		{0, 0}, {0, 65535}, {65535, 65536}, {65530, 2*65536 + 3}, {size - 1, size - 1}, {100, -1}, {3 * 65536, -1},
	} {
		_, got, err := f.get(t, "r", &Range{First: c.first, Last: c.last})
		last := c.last
		if last < 0 {
			last = size - 1
		}
		if err != nil || !bytes.Equal(got, data[c.first:last+1]) {
			t.Fatalf("range %d-%d: err=%v len=%d", c.first, c.last, err, len(got))
		}
	}
	_, got, err := f.get(t, "r", &Range{First: -1, SuffixLen: 70000})
	if err != nil || !bytes.Equal(got, data[size-70000:]) {
		t.Fatalf("suffix range: err=%v", err)
	}
}

func TestFailedChecksPublishNothing(t *testing.T) {
	f := newFixture(t)
	data := randBytes(200000, 2)
	bad := md5.Sum([]byte("other"))
	cases := []struct {
		name string
		in   PutInput
		code string
	}{
		{"bad digest", PutInput{Body: bytes.NewReader(data), Size: int64(len(data)), ContentMD5: bad[:]}, "BadDigest"},
		{"short body", PutInput{Body: bytes.NewReader(data[:1000]), Size: int64(len(data))}, "IncompleteBody"},
		{"long body", PutInput{Body: bytes.NewReader(data), Size: 1000}, "IncompleteBody"},
		{"reserved key", PutInput{Body: bytes.NewReader(data), Size: int64(len(data))}, "InvalidArgument"},
		{"reserved meta", PutInput{Body: bytes.NewReader(data), Size: int64(len(data)), Meta: map[string]string{"s3seal-v": "1"}}, "InvalidArgument"},
		{"finalize refuses", PutInput{Body: bytes.NewReader(data), Size: int64(len(data)),
			Finalize: func() (map[string]string, error) { return nil, &Error{Code: "BadDigest", Message: "crc32"} }}, "BadDigest"},
	}
	for _, c := range cases {
		c.in.Bucket, c.in.Key = bucket, "victim"
		if c.name == "reserved key" {
			c.in.Key = ReservedPrefix + "x"
		}
		_, err := f.st.Put(f.ctx, c.in)
		var se *Error
		if !errors.As(err, &se) || se.Code != c.code {
			t.Errorf("%s: err=%v, want %s", c.name, err, c.code)
		}
		if _, err := f.be.HeadObject(f.ctx, bucket, c.in.Key); !backend.IsNotFound(err) {
			t.Errorf("%s: object was published (head err=%v)", c.name, err)
		}
	}
	// A body that breaks mid-way publishes nothing and returns its own error.
	boom := errors.New("client went away")
	_, err := f.st.Put(f.ctx, PutInput{Bucket: bucket, Key: "victim", Size: int64(len(data)),
		Body: io.MultiReader(bytes.NewReader(data[:100000]), errReader{boom})})
	if !errors.Is(err, boom) {
		t.Fatalf("broken body: err=%v", err)
	}
	if _, err := f.be.HeadObject(f.ctx, bucket, "victim"); !backend.IsNotFound(err) {
		t.Fatalf("broken body published an object (head err=%v)", err)
	}
}

// TestBodyEndingInErrorPublishesNothing: a body that delivers exactly the
// declared bytes and then ends in anything but a bare io.EOF (a verifying
// reader's error that wraps io.ErrUnexpectedEOF or io.EOF, or those
// sentinels themselves) is an error, and nothing is published.
func TestBodyEndingInErrorPublishesNothing(t *testing.T) {
	f := newFixture(t)
	data := randBytes(70000, 4)
	for _, end := range []error{
		fmt.Errorf("chunk ended early: %w", io.ErrUnexpectedEOF),
		fmt.Errorf("trailer cut: %w", io.EOF),
		io.ErrUnexpectedEOF,
	} {
		for _, size := range []int64{int64(len(data)), -1} {
			_, err := f.st.Put(f.ctx, PutInput{Bucket: bucket, Key: "cut", Size: size,
				Body: io.MultiReader(bytes.NewReader(data), errReader{end})})
			if err == nil {
				t.Errorf("body ending in %q (size %d) was accepted", end, size)
			}
			if _, err := f.be.HeadObject(f.ctx, bucket, "cut"); !backend.IsNotFound(err) {
				t.Fatalf("body ending in %q (size %d) published an object (head err=%v)", end, size, err)
			}
		}
	}
}

func TestContentMD5Accepted(t *testing.T) {
	f := newFixture(t)
	data := randBytes(1000, 3)
	sum := md5.Sum(data)
	if _, err := f.st.Put(f.ctx, PutInput{Bucket: bucket, Key: "ok", Body: bytes.NewReader(data), Size: 1000, ContentMD5: sum[:]}); err != nil {
		t.Fatal(err)
	}
}

func TestLegacyPlaintextPassthrough(t *testing.T) {
	f := newFixture(t)
	data := []byte("written before s3seal")
	sum := md5.Sum(data)
	_, err := f.be.PutObject(f.ctx, backend.PutInput{Bucket: bucket, Key: "old", Body: bytes.NewReader(data), Size: int64(len(data)),
		Meta: map[string]string{"who": "legacy"}})
	if err != nil {
		t.Fatal(err)
	}
	f.st, _ = New(Direct(f.be), f.kr, Options{SpoolDir: t.TempDir(), AllowPlaintextReads: true})
	info, got, err := f.get(t, "old", nil)
	if err != nil || !bytes.Equal(got, data) || info.Encrypted || info.ETag != fmt.Sprintf("%x", sum) || info.Meta["who"] != "legacy" {
		t.Fatalf("legacy get: %+v %q %v", info, got, err)
	}
	_, got, err = f.get(t, "old", &Range{First: 8, Last: 13})
	if err != nil || string(got) != "before" {
		t.Fatalf("legacy range: %q %v", got, err)
	}
}

func TestListResolvesPlaintextAndHidesInternal(t *testing.T) {
	f := newFixture(t)
	want := map[string][]byte{}
	for i := range 5 {
		d := randBytes(1000*i+1, uint64(i))
		k := fmt.Sprintf("dir/k%d", i)
		f.put(t, k, d)
		want[k] = d
	}
	if _, err := f.be.PutObject(f.ctx, backend.PutInput{Bucket: bucket, Key: ReservedPrefix + "manifests/x",
		Body: bytes.NewReader([]byte("m")), Size: 1}); err != nil {
		t.Fatal(err)
	}
	page, err := f.st.List(f.ctx, backend.ListInput{Bucket: bucket, MaxKeys: 1000})
	if err != nil {
		t.Fatal(err)
	}
	var se *Error
	if _, err := f.st.Head(f.ctx, bucket, ReservedPrefix+"manifests/x"); !errors.As(err, &se) || se.Code != "InvalidArgument" {
		t.Fatalf("HEAD of an internal object: %v", err)
	}
	if _, _, err := f.st.Get(f.ctx, bucket, ReservedPrefix+"manifests/x", nil); !errors.As(err, &se) || se.Code != "InvalidArgument" {
		t.Fatalf("GET of an internal object: %v", err)
	}
	if len(page.Entries) != len(want) {
		t.Fatalf("listed %d entries, want %d: %+v", len(page.Entries), len(want), page.Entries)
	}
	for _, e := range page.Entries {
		d := want[e.Key]
		if e.Size != int64(len(d)) || e.ETag != md5hex(d) {
			t.Fatalf("%s: size %d etag %s, want %d %s", e.Key, e.Size, e.ETag, len(d), md5hex(d))
		}
	}
	// Puts filled the cache: a second listing needs no HEAD.
	before := f.be.heads.Load()
	if _, err := f.st.List(f.ctx, backend.ListInput{Bucket: bucket, MaxKeys: 1000}); err != nil {
		t.Fatal(err)
	}
	if n := f.be.heads.Load() - before; n != 0 {
		t.Fatalf("cached listing issued %d HEADs", n)
	}
	// A fresh store (e.g. after restart) resolves by HEAD, then caches.
	fresh, _ := New(Direct(f.be), f.kr, Options{SpoolDir: t.TempDir()})
	before = f.be.heads.Load()
	page, err = fresh.List(f.ctx, backend.ListInput{Bucket: bucket, MaxKeys: 1000, Delimiter: "/"})
	if err != nil {
		t.Fatal(err)
	}
	if len(page.CommonPrefixes) != 1 || page.CommonPrefixes[0] != "dir/" {
		t.Fatalf("common prefixes %v: the reserved prefix must be hidden", page.CommonPrefixes)
	}
	page, err = fresh.List(f.ctx, backend.ListInput{Bucket: bucket, MaxKeys: 1000, Prefix: "dir/"})
	if err != nil || len(page.Entries) != 5 || page.Entries[4].Size != 4001 {
		t.Fatalf("fresh listing: %+v %v", page, err)
	}
	if n := f.be.heads.Load() - before; n != 5 {
		t.Fatalf("fresh listing issued %d HEADs, want 5", n)
	}
}

func TestCopyReencrypts(t *testing.T) {
	f := newFixture(t)
	data := randBytes(150000, 9)
	f.put(t, "src", data)
	info, err := f.st.Copy(f.ctx, CopyInput{SrcBucket: bucket, SrcKey: "src", Bucket: bucket, Key: "dst"})
	if err != nil || info.ETag != md5hex(data) {
		t.Fatalf("copy: %+v %v", info, err)
	}
	gi, got, err := f.get(t, "dst", nil)
	if err != nil || !bytes.Equal(got, data) || gi.Meta["color"] != "blue" || gi.Headers.ContentType != "text/x-test" {
		t.Fatalf("copy content/meta: %+v %v", gi, err)
	}
	a, _ := f.be.HeadObject(f.ctx, bucket, "src")
	b, _ := f.be.HeadObject(f.ctx, bucket, "dst")
	if a.Meta["s3seal-oid"] == "" || a.Meta["s3seal-oid"] == b.Meta["s3seal-oid"] || a.Meta["s3seal-dek"] == b.Meta["s3seal-dek"] {
		t.Fatalf("copy shares the source's data key: %v vs %v", a.Meta, b.Meta)
	}
	_, err = f.st.Copy(f.ctx, CopyInput{SrcBucket: bucket, SrcKey: "src", Bucket: bucket, Key: "dst2", ReplaceMeta: true,
		Meta: map[string]string{"shape": "round"}, Headers: backend.Headers{ContentType: "a/b"}})
	if err != nil {
		t.Fatal(err)
	}
	gi, _, _ = f.get(t, "dst2", nil)
	if gi.Meta["shape"] != "round" || gi.Meta["color"] != "" || gi.Headers.ContentType != "a/b" {
		t.Fatalf("REPLACE directive not applied: %+v", gi)
	}
	var se *Error
	if _, err := f.st.Copy(f.ctx, CopyInput{SrcBucket: bucket, SrcKey: "src", Bucket: bucket, Key: "src"}); !errors.As(err, &se) || se.Code != "InvalidRequest" {
		t.Fatalf("copy onto itself without REPLACE: %v", err)
	}
}

// rewrite replaces an object's stored bytes on the backend, keeping its
// metadata: what a tampering provider would do.
func (f *fixture) rewrite(t *testing.T, key string, mutate func([]byte) []byte, meta map[string]string) {
	t.Helper()
	obj, err := f.be.GetObject(f.ctx, backend.GetInput{Bucket: bucket, Key: key})
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := io.ReadAll(obj.Body)
	obj.Body.Close()
	if meta == nil {
		meta = obj.Info.Meta
	}
	raw = mutate(raw)
	if _, err := f.be.PutObject(f.ctx, backend.PutInput{Bucket: bucket, Key: key, Body: bytes.NewReader(raw), Size: int64(len(raw)), Meta: meta}); err != nil {
		t.Fatal(err)
	}
}

func TestTamperedObjectsFail(t *testing.T) {
	const size = 3 * 65536
	seg := int(crypto.SegmentSize + crypto.SegmentOverhead)
	cases := []struct {
		name   string
		mutate func([]byte) []byte
	}{
		{"flip first segment", func(b []byte) []byte { b[40] ^= 1; return b }},
		{"flip last tag", func(b []byte) []byte { b[len(b)-1] ^= 0x80; return b }},
		{"swap segments", func(b []byte) []byte {
			out := append([]byte{}, b[seg:2*seg]...)
			out = append(out, b[:seg]...)
			return append(out, b[2*seg:]...)
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := newFixture(t)
			data := randBytes(size, 4)
			f.put(t, "t", data)
			f.rewrite(t, "t", c.mutate, nil)
			_, got, err := f.get(t, "t", nil)
			if !errors.Is(err, ErrIntegrity) {
				t.Fatalf("get of tampered object: err=%v, %d bytes", err, len(got))
			}
			if bytes.Equal(got, data) {
				t.Fatal("tampered object returned in full")
			}
		})
	}
	t.Run("swap metadata of two objects", func(t *testing.T) {
		f := newFixture(t)
		a, b := randBytes(size, 5), randBytes(size, 6)
		f.put(t, "a", a)
		f.put(t, "b", b)
		bm, _ := f.be.HeadObject(f.ctx, bucket, "b")
		f.rewrite(t, "a", func(x []byte) []byte { return x }, bm.Meta)
		if _, _, err := f.get(t, "a", nil); !errors.Is(err, ErrIntegrity) {
			t.Fatalf("a with b's metadata: err=%v", err)
		}
	})
	t.Run("wrapped key of an object of the same size", func(t *testing.T) {
		f := newFixture(t)
		f.put(t, "s", randBytes(size, 7))
		f.put(t, "t", randBytes(size, 8))
		m, _ := f.be.HeadObject(f.ctx, bucket, "s")
		other, _ := f.be.HeadObject(f.ctx, bucket, "t")
		m.Meta["s3seal-dek"] = other.Meta["s3seal-dek"]
		f.rewrite(t, "s", func(x []byte) []byte { return x }, m.Meta)
		if _, err := f.st.Head(f.ctx, bucket, "s"); !errors.Is(err, ErrIntegrity) {
			t.Fatalf("head with another object's wrapped key: err=%v", err)
		}
	})
	// The store copies object A (bytes and metadata) over key B, or into
	// another bucket: s3seal must not serve A's plaintext as B.
	t.Run("object copied to another name by the store", func(t *testing.T) {
		f := newFixture(t)
		a := randBytes(size, 9)
		f.put(t, "a", a)
		f.put(t, "b", randBytes(size, 10))
		am, _ := f.be.HeadObject(f.ctx, bucket, "a")
		obj, err := f.be.GetObject(f.ctx, backend.GetInput{Bucket: bucket, Key: "a"})
		if err != nil {
			t.Fatal(err)
		}
		raw, _ := io.ReadAll(obj.Body)
		obj.Body.Close()
		if err := f.be.CreateBucket(f.ctx, "other"); err != nil {
			t.Fatal(err)
		}
		for _, dst := range [][2]string{{bucket, "b"}, {bucket, "new"}, {"other", "a"}} {
			if _, err := f.be.PutObject(f.ctx, backend.PutInput{Bucket: dst[0], Key: dst[1], Body: bytes.NewReader(raw),
				Size: int64(len(raw)), Meta: am.Meta}); err != nil {
				t.Fatal(err)
			}
			if _, err := f.st.Head(f.ctx, dst[0], dst[1]); !errors.Is(err, ErrIntegrity) {
				t.Errorf("HEAD %s/%s holding a's bytes: err=%v", dst[0], dst[1], err)
			}
			if _, rd, err := f.st.Get(f.ctx, dst[0], dst[1], nil); !errors.Is(err, ErrIntegrity) {
				if rd != nil {
					rd.Close()
				}
				t.Errorf("GET %s/%s holding a's bytes: err=%v", dst[0], dst[1], err)
			}
		}
	})
}

// With BackendChecksum every backend PUT carries the CRC32C of the
// ciphertext it stores and no Content-MD5 (MD5 would cost a pass as dear
// as everything else in a PUT); a PUT with a lock carries Content-MD5,
// which stores demand for those. Without it, neither goes.
func TestBackendChecksum(t *testing.T) {
	f := newFixture(t)
	data := randBytes(70000, 11)
	stored := func(key string) []byte {
		obj, err := f.be.GetObject(f.ctx, backend.GetInput{Bucket: bucket, Key: key})
		if err != nil {
			t.Fatal(err)
		}
		defer obj.Body.Close()
		raw, _ := io.ReadAll(obj.Body)
		return raw
	}
	f.put(t, "with", data)
	var crc [4]byte
	binary.BigEndian.PutUint32(crc[:], crc32.Checksum(stored("with"), crc32.MakeTable(crc32.Castagnoli)))
	if got := f.be.lastCRC.Load(); got != base64.StdEncoding.EncodeToString(crc[:]) {
		t.Fatalf("CRC32C sent %v, want the CRC32C of the stored ciphertext", got)
	}
	if got := f.be.lastMD.Load(); got != "" {
		t.Fatalf("Content-MD5 %v sent beside the CRC32C", got)
	}
	_, err := f.st.Put(f.ctx, PutInput{Bucket: bucket, Key: "locked", Body: bytes.NewReader(data), Size: int64(len(data)),
		Protect: backend.Protection{LegalHold: "ON"}})
	if md, crc := f.be.lastMD.Load(), f.be.lastCRC.Load(); md == "" || crc != "" {
		t.Fatalf("locked PUT: Content-MD5 %q, CRC32C %q, want Content-MD5 alone", md, crc)
	}
	if err == nil { // the store may refuse a hold outside a lock bucket
		if sum := md5.Sum(stored("locked")); f.be.lastMD.Load() != base64.StdEncoding.EncodeToString(sum[:]) {
			t.Fatalf("locked PUT: Content-MD5 %v is not the stored ciphertext's", f.be.lastMD.Load())
		}
	}
	noSum, _ := New(Direct(f.be), f.kr, Options{SpoolDir: t.TempDir()})
	if _, err := noSum.Put(f.ctx, PutInput{Bucket: bucket, Key: "without", Body: bytes.NewReader(data), Size: int64(len(data))}); err != nil {
		t.Fatal(err)
	}
	if md, crc := f.be.lastMD.Load(), f.be.lastCRC.Load(); md != "" || crc != "" {
		t.Fatalf("Content-MD5 %v, CRC32C %v sent with BackendChecksum off", md, crc)
	}
}

// racingStore overwrites the object right after the first HEAD answered,
// as a concurrent writer would between a ranged GET's HEAD and its GET.
type racingStore struct {
	backend.Store
	overwrite func()
	done      bool
}

func (r *racingStore) HeadObject(ctx context.Context, bucket, key string) (backend.ObjectInfo, error) {
	info, err := r.Store.HeadObject(ctx, bucket, key)
	if !r.done {
		r.done = true
		r.overwrite()
	}
	return info, err
}

func TestRangedGetOfObjectOverwrittenMeanwhile(t *testing.T) {
	f := newFixture(t)
	oldData, newData := randBytes(200000, 21), randBytes(150000, 22)
	f.put(t, "moving", oldData)
	rs := &racingStore{Store: f.be}
	racing, _ := New(Direct(rs), f.kr, Options{SpoolDir: t.TempDir()})
	rs.overwrite = func() { f.put(t, "moving", newData) }
	info, rd, err := racing.Get(f.ctx, bucket, "moving", &Range{First: 70000, Last: 80000})
	if err != nil {
		t.Fatalf("ranged GET across an overwrite: %v", err)
	}
	got, err := io.ReadAll(io.LimitReader(rd, rd.Len))
	rd.Close()
	if err != nil || !bytes.Equal(got, newData[70000:80001]) || info.Size != int64(len(newData)) {
		t.Fatalf("got %d bytes (err %v), size %d: want the new object's range", len(got), err, info.Size)
	}
}

// A listing reports only authenticated sizes and ETags: an object whose
// metadata fails its check, one sealed under a key that left the keyring
// and one without s3seal metadata (plaintext reads off) are listed with the
// backend's size and an unverified ETag, never what their metadata claims,
// and nothing unverified is cached.
func TestListAuthenticatesEntries(t *testing.T) {
	f := newFixture(t)
	data := randBytes(1000, 31)
	f.put(t, "forged", data)
	f.put(t, "retired", data)
	f.put(t, "good", data)
	plain := []byte("no s3seal metadata")
	if _, err := f.be.PutObject(f.ctx, backend.PutInput{Bucket: bucket, Key: "plain", Body: bytes.NewReader(plain), Size: int64(len(plain))}); err != nil {
		t.Fatal(err)
	}
	// "forged" gets the wrapped key (and sealed MD5) of "good": same size,
	// same content, well-formed metadata, but another object's.
	m, _ := f.be.HeadObject(f.ctx, bucket, "forged")
	good, _ := f.be.HeadObject(f.ctx, bucket, "good")
	m.Meta["s3seal-dek"] = good.Meta["s3seal-dek"]
	f.rewrite(t, "forged", func(x []byte) []byte { return x }, m.Meta)
	raw := map[string]backend.ObjectInfo{}
	for _, k := range []string{"forged", "retired", "good", "plain"} {
		raw[k], _ = f.be.HeadObject(f.ctx, bucket, k)
	}
	unverified := func(k string) [2]any {
		return [2]any{raw[k].Size, UnverifiedETagPrefix + strings.Trim(raw[k].ETag, `"`)}
	}
	key, _ := crypto.GenerateKey()
	other, _ := crypto.NewKeyring("k2", map[string][]byte{"k2": key})
	real := [2]any{int64(len(data)), md5hex(data)}
	cases := []struct {
		name string
		kr   *crypto.Keyring
		opt  Options
		want map[string][2]any
	}{
		{"own keyring", f.kr, Options{}, map[string][2]any{
			"forged": unverified("forged"), "retired": real, "good": real, "plain": unverified("plain")}},
		{"keyring without the key", other, Options{}, map[string][2]any{
			"forged": unverified("forged"), "retired": unverified("retired"), "good": unverified("good"), "plain": unverified("plain")}},
		{"plaintext reads allowed", f.kr, Options{AllowPlaintextReads: true}, map[string][2]any{
			"forged": unverified("forged"), "retired": real, "good": real, "plain": {int64(len(plain)), md5hex(plain)}}},
	}
	for _, c := range cases {
		c.opt.SpoolDir = t.TempDir()
		fresh, _ := New(Direct(f.be), c.kr, c.opt)
		for range 2 { // the second listing is served from whatever was cached
			page, err := fresh.List(f.ctx, backend.ListInput{Bucket: bucket, MaxKeys: 1000})
			if err != nil {
				t.Fatal(err)
			}
			if len(page.Entries) != len(c.want) {
				t.Fatalf("%s: %d entries listed, want %d", c.name, len(page.Entries), len(c.want))
			}
			for _, e := range page.Entries {
				if got := [2]any{e.Size, e.ETag}; got != c.want[e.Key] {
					t.Errorf("%s: %s listed as %v, want %v", c.name, e.Key, got, c.want[e.Key])
				}
			}
		}
	}
}
