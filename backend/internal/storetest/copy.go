package storetest

import (
	"bytes"
	"context"
	"testing"

	"github.com/s3seal/s3seal/backend"
)

// testCopy: a copy of an object onto itself with new metadata (REPLACE)
// keeps the bytes and carries the new metadata and headers; with the
// source ETag as condition it goes through, with a stale one it fails
// with PreconditionFailed and changes nothing; keys that need escaping
// work.
func testCopy(ctx context.Context, t *testing.T, st backend.Store, bucket string, q Quirks) {
	for _, key := range []string{"copy/self", "copy/a b+c&d%e"} {
		data := RandBytes(t, 70000)
		pw := Put(ctx, t, st, bucket, key, data, map[string]string{"v": "1", "keep": "x"}, backend.Headers{ContentType: "text/old"})
		out, err := st.CopyObject(ctx, backend.CopyInput{SrcBucket: bucket, SrcKey: key, Bucket: bucket, Key: key, SrcIfMatch: pw.ETag,
			Meta: map[string]string{"v": "2", "keep": "x"}, Headers: backend.Headers{ContentType: "text/new", CacheControl: "no-cache"}})
		Must(t, err)
		if out.ETag != md5hex(data) {
			t.Errorf("%s: copy ETag %q, want %q", key, out.ETag, md5hex(data))
		}
		obj, err := st.GetObject(ctx, backend.GetInput{Bucket: bucket, Key: key})
		Must(t, err)
		if got := ReadAll(t, obj.Body); !bytes.Equal(got, data) {
			t.Errorf("%s: copy changed the bytes", key)
		}
		if obj.Info.Meta["v"] != "2" || obj.Info.Meta["keep"] != "x" || obj.Info.Headers.ContentType != "text/new" || obj.Info.Headers.CacheControl != "no-cache" {
			t.Errorf("%s: after copy meta %v headers %+v", key, obj.Info.Meta, obj.Info.Headers)
		}
		if q.NoCopySourceIfMatch {
			Must(t, st.DeleteObject(ctx, bucket, key))
			continue
		}
		_, err = st.CopyObject(ctx, backend.CopyInput{SrcBucket: bucket, SrcKey: key, Bucket: bucket, Key: key, SrcIfMatch: md5hex([]byte("other")),
			Meta: map[string]string{"v": "3"}})
		WantCode(t, err, "PreconditionFailed", 412)
		hi, err := st.HeadObject(ctx, bucket, key)
		Must(t, err)
		if hi.Meta["v"] != "2" {
			t.Errorf("%s: a failed copy changed the metadata: %v", key, hi.Meta)
		}
		Must(t, st.DeleteObject(ctx, bucket, key))
	}
}

// testPartCopy: UploadPartCopy copies byte ranges of an object (onto
// itself here, as rewrap does) into the parts of an upload carrying new
// metadata; the completed object has the same bytes. A part copy whose
// source condition fails is PreconditionFailed.
func testPartCopy(ctx context.Context, t *testing.T, st backend.Store, bucket string, q Quirks) {
	key := "partcopy/a b+c"
	data := RandBytes(t, mib5+mib5/2)
	pw := Put(ctx, t, st, bucket, key, data, map[string]string{"v": "1"}, backend.Headers{ContentType: "text/old"})
	id, err := st.CreateMultipartUpload(ctx, backend.CreateMultipartInput{Bucket: bucket, Key: key, Meta: map[string]string{"v": "2"},
		Headers: backend.Headers{ContentType: "text/new"}})
	Must(t, err)
	if !q.NoCopySourceIfMatch {
		_, err = st.UploadPartCopy(ctx, backend.UploadPartCopyInput{Bucket: bucket, Key: key, UploadID: id, PartNumber: 1,
			SrcBucket: bucket, SrcKey: key, SrcIfMatch: md5hex([]byte("other")), First: 0, Last: mib5 - 1})
		WantCode(t, err, "PreconditionFailed", 412)
	}
	ranges := [][2]int64{{0, mib5 - 1}, {mib5, int64(len(data)) - 1}}
	var parts []backend.CompletedPart
	for i, r := range ranges {
		e, err := st.UploadPartCopy(ctx, backend.UploadPartCopyInput{Bucket: bucket, Key: key, UploadID: id, PartNumber: int32(i + 1),
			SrcBucket: bucket, SrcKey: key, SrcIfMatch: pw.ETag, First: r[0], Last: r[1]})
		Must(t, err)
		if e != md5hex(data[r[0]:r[1]+1]) {
			t.Errorf("part %d ETag %q, want the MD5 of its range", i+1, e)
		}
		parts = append(parts, backend.CompletedPart{PartNumber: int32(i + 1), ETag: e})
	}
	_, err = st.CompleteMultipartUpload(ctx, backend.CompleteMultipartInput{Bucket: bucket, Key: key, UploadID: id, Parts: parts, IfMatch: pw.ETag})
	Must(t, err)
	obj, err := st.GetObject(ctx, backend.GetInput{Bucket: bucket, Key: key})
	Must(t, err)
	if got := ReadAll(t, obj.Body); !bytes.Equal(got, data) {
		t.Errorf("the part copies changed the bytes")
	}
	if obj.Info.Meta["v"] != "2" || obj.Info.Headers.ContentType != "text/new" {
		t.Errorf("after the part copies: meta %v headers %+v", obj.Info.Meta, obj.Info.Headers)
	}
	Must(t, st.DeleteObject(ctx, bucket, key))
}
