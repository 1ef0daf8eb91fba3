package backend

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/binary"
	"hash/crc32"
	"net/http"
	"testing"
)

func crc32cB64(b []byte) string {
	var sum [4]byte
	binary.BigEndian.PutUint32(sum[:], crc32.Checksum(b, crc32.MakeTable(crc32.Castagnoli)))
	return base64.StdEncoding.EncodeToString(sum[:])
}

// A PUT and a part carry the CRC32C they were given as
// x-amz-checksum-crc32c, and once the store has confirmed it (its answer
// carries it back) no Content-MD5 unless given one: hashing the body with
// MD5 again is what the checksum saves. The first body, before the store
// confirmed anything, goes with both (TestUnconfirmedChecksumKeepsContentMD5).
// The SDK adds no checksum or chunked encoding of its own.
func TestBodiesCarryCRC32C(t *testing.T) {
	data := bytes.Repeat([]byte("sealed "), smallBodyMD5/7+1) // over smallBodyMD5, which always gets Content-MD5
	r, st := newRecorder(t, reply{status: 200, header: map[string]string{"ETag": `"e"`, "x-amz-checksum-crc32c": crc32cB64(data)}})
	ctx := context.Background()
	_, err := st.PutObject(ctx, PutInput{Bucket: "b", Key: "k", Body: bytes.NewReader(data), Size: int64(len(data)), ContentCRC32C: crc32cB64(data)})
	must(t, err)
	_, err = st.UploadPart(ctx, UploadPartInput{Bucket: "b", Key: "k", UploadID: "u", PartNumber: 1, Body: bytes.NewReader(data), Size: int64(len(data)), ContentCRC32C: crc32cB64(data)})
	must(t, err)
	for i, req := range r.reqs {
		if got := req.Header.Get("X-Amz-Checksum-Crc32c"); got != crc32cB64(data) {
			t.Errorf("request %d: x-amz-checksum-crc32c = %q, want %q", i, got, crc32cB64(data))
		}
		if got := req.Header.Get("Content-Md5"); i > 0 && got != "" {
			t.Errorf("request %d: Content-MD5 %q sent beside the confirmed checksum", i, got)
		}
		if req.Header.Get("Content-Encoding") != "" || req.Header.Get("X-Amz-Trailer") != "" || req.Header.Get("X-Amz-Content-Sha256") != "UNSIGNED-PAYLOAD" {
			t.Errorf("request %d: body framed by the SDK: %v", i, req.Header)
		}
		if !bytes.Equal(r.body[i], data) {
			t.Errorf("request %d: body of %d bytes, want the %d given", i, len(r.body[i]), len(data))
		}
	}
}

// A store that refuses the checksum header gets the same body again with
// Content-MD5 in its place, and from then on every body of this client
// goes with Content-MD5 and without the header, at once.
func TestChecksumRefusedFallsBackToContentMD5(t *testing.T) {
	for _, refusal := range []reply{
		{status: 501, body: "<Error><Code>NotImplemented</Code><Message>A header you provided implies functionality that is not implemented</Message></Error>"},
		{status: 400, body: "<Error><Code>InvalidArgument</Code><Message>x-amz-checksum-crc32c is not supported</Message></Error>"},
	} {
		r, st := newRecorder(t, refusal, reply{status: 200, header: map[string]string{"ETag": `"e"`}})
		data := bytes.Repeat([]byte("part "), smallBodyMD5/5+1)
		ctx := context.Background()
		body := bytes.NewReader(data)
		_, err := st.UploadPart(ctx, UploadPartInput{Bucket: "b", Key: "k", UploadID: "u", PartNumber: 1, Body: body, Size: int64(len(data)), ContentCRC32C: crc32cB64(data)})
		must(t, err)
		_, err = st.PutObject(ctx, PutInput{Bucket: "b", Key: "k2", Body: bytes.NewReader(data), Size: int64(len(data)), ContentCRC32C: crc32cB64(data)})
		must(t, err)
		if len(r.reqs) != 3 {
			t.Fatalf("%d: %d requests, want 3 (the refused part, its retry, the PUT)", refusal.status, len(r.reqs))
		}
		if r.reqs[0].Header.Get("X-Amz-Checksum-Crc32c") == "" {
			t.Errorf("first request went without the checksum")
		}
		for i, req := range r.reqs[1:] {
			if req.Header.Get("X-Amz-Checksum-Crc32c") != "" || req.Header.Get("Content-Md5") != md5b64(data) {
				t.Errorf("request %d after the refusal: checksum %q, Content-MD5 %q, want none and %q",
					i+2, req.Header.Get("X-Amz-Checksum-Crc32c"), req.Header.Get("Content-Md5"), md5b64(data))
			}
			if !bytes.Equal(r.body[i+1], data) {
				t.Errorf("request %d after the refusal sent %d bytes, want the whole body", i+2, len(r.body[i+1]))
			}
		}
	}
}

// On a store that has confirmed the checksum before, a mismatch is its
// verdict on the body, not a refusal of the header: it is answered as it
// is and not re-sent.
func TestChecksumMismatchIsNotARefusal(t *testing.T) {
	r, st := newRecorder(t, reply{status: 400, body: "<Error><Code>BadDigest</Code><Message>The CRC32C checksum you specified did not match the calculated checksum.</Message></Error>"})
	st.crcOK.Store(true)
	data := []byte("flipped in transit")
	_, err := st.PutObject(context.Background(), PutInput{Bucket: "b", Key: "k", Body: bytes.NewReader(data), Size: int64(len(data)), ContentCRC32C: crc32cB64([]byte("other"))})
	var e *Error
	if !asError(err, &e) || e.Code != "BadDigest" || e.StatusCode != http.StatusBadRequest {
		t.Fatalf("err = %v, want BadDigest", err)
	}
	if len(r.reqs) != 1 {
		t.Errorf("%d requests, want 1", len(r.reqs))
	}
	if st.noCRC.Load() {
		t.Errorf("a mismatch turned the checksum off")
	}
}

// A store that has never confirmed the checksum and answers 400 in words
// that name none ("Invalid argument.", or a checksum it computes wrongly)
// gets the body again without the header, with Content-MD5, which it
// takes: from then on bodies go with Content-MD5. A store that answers the
// body without the header in the same words refused something else, and
// the checksum stays.
func TestUnconfirmedStoreGenericRefusal(t *testing.T) {
	data := bytes.Repeat([]byte("generic "), smallBodyMD5/8+1)
	for _, c := range []struct {
		name   string
		script []reply
		ok     bool
		noCRC  bool
	}{
		{"refuses the header", []reply{{status: 400, body: "<Error><Code>InvalidArgument</Code><Message>Invalid argument.</Message></Error>"},
			{status: 200, header: map[string]string{"ETag": `"e"`}}}, true, true},
		{"miscomputes CRC32C", []reply{{status: 400, body: "<Error><Code>InvalidDigest</Code><Message>The digest you specified was invalid.</Message></Error>"},
			{status: 200, header: map[string]string{"ETag": `"e"`}}}, true, true},
		{"refuses something else", []reply{{status: 400, body: "<Error><Code>InvalidArgument</Code><Message>Invalid argument.</Message></Error>"}}, false, false},
	} {
		r, st := newRecorder(t, c.script...)
		_, err := st.PutObject(context.Background(), PutInput{Bucket: "b", Key: "k", Body: bytes.NewReader(data), Size: int64(len(data)), ContentCRC32C: crc32cB64(data)})
		if (err == nil) != c.ok || st.noCRC.Load() != c.noCRC || len(r.reqs) != 2 {
			t.Fatalf("%s: err %v, checksum off %v, %d requests; want ok %v, off %v, 2 requests", c.name, err, st.noCRC.Load(), len(r.reqs), c.ok, c.noCRC)
		}
		if r.reqs[1].Header.Get("X-Amz-Checksum-Crc32c") != "" || r.reqs[1].Header.Get("Content-Md5") != md5b64(data) || !bytes.Equal(r.body[1], data) {
			t.Errorf("%s: the second request: checksum %q, Content-MD5 %q, %d bytes", c.name,
				r.reqs[1].Header.Get("X-Amz-Checksum-Crc32c"), r.reqs[1].Header.Get("Content-Md5"), len(r.body[1]))
		}
	}
}

// A store that predates flexible checksums (Ceph RGW before Squid, among
// others) takes x-amz-checksum-crc32c as an unknown header and ignores
// it, while it checks Content-MD5: its answer does not carry the
// checksum back, as a store that checked it does. Until the store has
// confirmed the checksum once, a body carries Content-MD5 beside it; once
// a store answered without confirming, every body carries Content-MD5.
func TestUnconfirmedChecksumKeepsContentMD5(t *testing.T) {
	r, st := newRecorder(t, reply{status: 200, header: map[string]string{"ETag": `"e"`}})
	data := bytes.Repeat([]byte("sealed "), smallBodyMD5/7+1) // over smallBodyMD5, which always gets Content-MD5
	ctx := context.Background()
	for i := range 2 {
		_, err := st.PutObject(ctx, PutInput{Bucket: "b", Key: "k", Body: bytes.NewReader(data), Size: int64(len(data)), ContentCRC32C: crc32cB64(data)})
		must(t, err)
		_, err = st.UploadPart(ctx, UploadPartInput{Bucket: "b", Key: "k", UploadID: "u", PartNumber: int32(i + 1), Body: bytes.NewReader(data), Size: int64(len(data)), ContentCRC32C: crc32cB64(data)})
		must(t, err)
	}
	for i, req := range r.reqs {
		if got := req.Header.Get("Content-Md5"); got != md5b64(data) {
			t.Errorf("request %d to a store that never confirmed the checksum: Content-MD5 %q, want %q", i, got, md5b64(data))
		}
		if !bytes.Equal(r.body[i], data) {
			t.Errorf("request %d: body of %d bytes, want the %d given", i, len(r.body[i]), len(data))
		}
	}
}

// A store that confirms the checksum it was sent (AWS, MinIO, versitygw
// answer x-amz-checksum-crc32c) checked it: after the first such answer
// bodies go with the checksum alone. An answer confirming another
// checksum than the one sent says the store holds other bytes: an error.
func TestConfirmedChecksumDropsContentMD5(t *testing.T) {
	data := bytes.Repeat([]byte("sealed "), smallBodyMD5/7+1)
	r, st := newRecorder(t, reply{status: 200, header: map[string]string{"ETag": `"e"`, "x-amz-checksum-crc32c": crc32cB64(data)}})
	ctx := context.Background()
	for i := range 3 {
		_, err := st.UploadPart(ctx, UploadPartInput{Bucket: "b", Key: "k", UploadID: "u", PartNumber: int32(i + 1), Body: bytes.NewReader(data), Size: int64(len(data)), ContentCRC32C: crc32cB64(data)})
		must(t, err)
	}
	for i, req := range r.reqs {
		if got := req.Header.Get("X-Amz-Checksum-Crc32c"); got != crc32cB64(data) {
			t.Errorf("request %d: x-amz-checksum-crc32c %q, want %q", i, got, crc32cB64(data))
		}
		if got, want := req.Header.Get("Content-Md5") != "", i == 0; got != want {
			t.Errorf("request %d: Content-MD5 sent %v, want %v (only before the store confirmed the checksum)", i, got, want)
		}
	}
	_, st = newRecorder(t, reply{status: 200, header: map[string]string{"ETag": `"e"`, "x-amz-checksum-crc32c": crc32cB64([]byte("other bytes"))}})
	_, err := st.PutObject(ctx, PutInput{Bucket: "b", Key: "k", Body: bytes.NewReader(data), Size: int64(len(data)), ContentCRC32C: crc32cB64(data)})
	var e *Error
	if !asError(err, &e) || e.Code != "BadDigest" {
		t.Fatalf("store confirmed another checksum: err = %v, want BadDigest", err)
	}
}

// NotImplemented also answers headers other than the checksum (tags on a
// store without them, say) in the same words. The body sent again without
// the checksum tells them apart: refused again, the checksum was not the
// cause, and later bodies keep it.
func TestNotImplementedForAnotherHeaderKeepsTheChecksum(t *testing.T) {
	data := bytes.Repeat([]byte("sealed "), smallBodyMD5/7+1)
	notImpl := reply{status: 501, body: "<Error><Code>NotImplemented</Code><Message>A header you provided implies functionality that is not implemented</Message></Error>"}
	r, st := newRecorder(t, notImpl, notImpl, reply{status: 200, header: map[string]string{"ETag": `"e"`, "x-amz-checksum-crc32c": crc32cB64(data)}})
	ctx := context.Background()
	_, err := st.PutObject(ctx, PutInput{Bucket: "b", Key: "tagged", Body: bytes.NewReader(data), Size: int64(len(data)), ContentCRC32C: crc32cB64(data),
		Protect: Protection{Tagging: "a=b"}})
	if ErrorCode(err) != "NotImplemented" {
		t.Fatalf("err = %v, want NotImplemented", err)
	}
	_, err = st.PutObject(ctx, PutInput{Bucket: "b", Key: "k", Body: bytes.NewReader(data), Size: int64(len(data)), ContentCRC32C: crc32cB64(data)})
	must(t, err)
	if len(r.reqs) != 3 {
		t.Fatalf("%d requests, want 3", len(r.reqs))
	}
	if got := r.reqs[2].Header.Get("X-Amz-Checksum-Crc32c"); got != crc32cB64(data) {
		t.Errorf("after a NotImplemented that the checksum did not cause, the next PUT went without it (x-amz-checksum-crc32c %q)", got)
	}
}
