package backend

import (
	"bytes"
	"context"
	"testing"
)

// testPartCopy: UploadPartCopy copies byte ranges of an object (onto
// itself here, as rewrap does) into the parts of an upload carrying new
// metadata; the completed object has the same bytes. A part copy whose
// source condition fails is PreconditionFailed.
func testPartCopy(ctx context.Context, t *testing.T, st Store, bucket string, q quirks) {
	key := "partcopy/a b+c"
	data := randBytes(t, mib5+mib5/2)
	pw := put(ctx, t, st, bucket, key, data, map[string]string{"v": "1"}, Headers{ContentType: "text/old"})
	id, err := st.CreateMultipartUpload(ctx, CreateMultipartInput{Bucket: bucket, Key: key, Meta: map[string]string{"v": "2"},
		Headers: Headers{ContentType: "text/new"}})
	must(t, err)
	if !q.noCopySourceIfMatch {
		_, err = st.UploadPartCopy(ctx, UploadPartCopyInput{Bucket: bucket, Key: key, UploadID: id, PartNumber: 1,
			SrcBucket: bucket, SrcKey: key, SrcIfMatch: md5hex([]byte("other")), First: 0, Last: mib5 - 1})
		wantCode(t, err, "PreconditionFailed", 412)
	}
	ranges := [][2]int64{{0, mib5 - 1}, {mib5, int64(len(data)) - 1}}
	var parts []CompletedPart
	for i, r := range ranges {
		e, err := st.UploadPartCopy(ctx, UploadPartCopyInput{Bucket: bucket, Key: key, UploadID: id, PartNumber: int32(i + 1),
			SrcBucket: bucket, SrcKey: key, SrcIfMatch: pw.ETag, First: r[0], Last: r[1]})
		must(t, err)
		if e != md5hex(data[r[0]:r[1]+1]) {
			t.Errorf("part %d ETag %q, want the MD5 of its range", i+1, e)
		}
		parts = append(parts, CompletedPart{PartNumber: int32(i + 1), ETag: e})
	}
	_, err = st.CompleteMultipartUpload(ctx, CompleteMultipartInput{Bucket: bucket, Key: key, UploadID: id, Parts: parts, IfMatch: pw.ETag})
	must(t, err)
	obj, err := st.GetObject(ctx, GetInput{Bucket: bucket, Key: key})
	must(t, err)
	if got := readAll(t, obj.Body); !bytes.Equal(got, data) {
		t.Errorf("the part copies changed the bytes")
	}
	if obj.Info.Meta["v"] != "2" || obj.Info.Headers.ContentType != "text/new" {
		t.Errorf("after the part copies: meta %v headers %+v", obj.Info.Meta, obj.Info.Headers)
	}
	must(t, st.DeleteObject(ctx, bucket, key))
}
