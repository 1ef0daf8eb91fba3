package backend

import (
	"bytes"
	"context"
	"testing"
)

// testCopy: a copy of an object onto itself with new metadata (REPLACE)
// keeps the bytes and carries the new metadata and headers; with the
// source ETag as condition it goes through, with a stale one it fails
// with PreconditionFailed and changes nothing; keys that need escaping
// work.
func testCopy(ctx context.Context, t *testing.T, st Store, bucket string, q quirks) {
	for _, key := range []string{"copy/self", "copy/a b+c&d%e"} {
		data := randBytes(t, 70000)
		pw := put(ctx, t, st, bucket, key, data, map[string]string{"v": "1", "keep": "x"}, Headers{ContentType: "text/old"})
		out, err := st.CopyObject(ctx, CopyInput{SrcBucket: bucket, SrcKey: key, Bucket: bucket, Key: key, SrcIfMatch: pw.ETag,
			Meta: map[string]string{"v": "2", "keep": "x"}, Headers: Headers{ContentType: "text/new", CacheControl: "no-cache"}})
		must(t, err)
		if out.ETag != md5hex(data) {
			t.Errorf("%s: copy ETag %q, want %q", key, out.ETag, md5hex(data))
		}
		obj, err := st.GetObject(ctx, GetInput{Bucket: bucket, Key: key})
		must(t, err)
		if got := readAll(t, obj.Body); !bytes.Equal(got, data) {
			t.Errorf("%s: copy changed the bytes", key)
		}
		if obj.Info.Meta["v"] != "2" || obj.Info.Meta["keep"] != "x" || obj.Info.Headers.ContentType != "text/new" || obj.Info.Headers.CacheControl != "no-cache" {
			t.Errorf("%s: after copy meta %v headers %+v", key, obj.Info.Meta, obj.Info.Headers)
		}
		if q.noCopySourceIfMatch {
			must(t, st.DeleteObject(ctx, bucket, key))
			continue
		}
		_, err = st.CopyObject(ctx, CopyInput{SrcBucket: bucket, SrcKey: key, Bucket: bucket, Key: key, SrcIfMatch: md5hex([]byte("other")),
			Meta: map[string]string{"v": "3"}})
		wantCode(t, err, "PreconditionFailed", 412)
		hi, err := st.HeadObject(ctx, bucket, key)
		must(t, err)
		if hi.Meta["v"] != "2" {
			t.Errorf("%s: a failed copy changed the metadata: %v", key, hi.Meta)
		}
		must(t, st.DeleteObject(ctx, bucket, key))
	}
}
