package storetest

import (
	"bytes"
	"context"
	"crypto/md5"
	"encoding/hex"
	"fmt"
	"reflect"
	"slices"
	"testing"

	"github.com/s3seal/s3seal/backend"
)

// testMultipart is the multipart part of the Store contract.
func testMultipart(ctx context.Context, t *testing.T, st backend.Store, bucket string, q Quirks) {
	hdr := backend.Headers{ContentType: "application/x-mp", CacheControl: "no-cache", ContentLanguage: "fr"}
	meta := map[string]string{"s3seal-v": "1"}
	id, err := st.CreateMultipartUpload(ctx, backend.CreateMultipartInput{Bucket: bucket, Key: "mp/obj", Meta: meta, Headers: hdr})
	Must(t, err)
	other, err := st.CreateMultipartUpload(ctx, backend.CreateMultipartInput{Bucket: bucket, Key: "mp/other"})
	Must(t, err)

	parts := [][]byte{RandBytes(t, mib5), RandBytes(t, mib5+1), RandBytes(t, 1000)}
	etags := make([]string, len(parts))
	for i, p := range parts {
		etags[i] = UploadPart(ctx, t, st, bucket, "mp/obj", id, int32(i+1), p)
		if etags[i] != md5hex(p) {
			t.Errorf("part %d ETag = %q, want %q", i+1, etags[i], md5hex(p))
		}
	}
	// A part uploaded again replaces the earlier one.
	oldETag2 := etags[1]
	parts[1] = RandBytes(t, mib5+2)
	etags[1] = UploadPart(ctx, t, st, bucket, "mp/obj", id, 2, parts[1])

	lp, err := st.ListParts(ctx, backend.ListPartsInput{Bucket: bucket, Key: "mp/obj", UploadID: id, MaxParts: 2})
	Must(t, err)
	if !lp.IsTruncated || lp.NextMarker != 2 || len(lp.Parts) != 2 {
		t.Fatalf("ListParts page 1 = %+v, want parts 1-2, truncated, next 2", lp)
	}
	lp2, err := st.ListParts(ctx, backend.ListPartsInput{Bucket: bucket, Key: "mp/obj", UploadID: id, Marker: lp.NextMarker})
	Must(t, err)
	all := append(lp.Parts, lp2.Parts...)
	if lp2.IsTruncated || len(all) != 3 {
		t.Fatalf("ListParts = %+v then %+v, want 3 parts", lp, lp2)
	}
	for i, p := range all {
		if p.PartNumber != int32(i+1) || p.ETag != etags[i] || p.Size != int64(len(parts[i])) || p.LastModified.IsZero() {
			t.Errorf("listed part %d = %+v, want ETag %s size %d", i+1, p, etags[i], len(parts[i]))
		}
	}

	lu, err := st.ListMultipartUploads(ctx, backend.ListUploadsInput{Bucket: bucket, Prefix: "mp/"})
	Must(t, err)
	var listed []string
	for _, u := range lu.Uploads {
		listed = append(listed, u.Key+" "+u.UploadID)
		if u.Initiated.IsZero() {
			t.Errorf("upload %s without initiation time", u.Key)
		}
	}
	if want := []string{"mp/obj " + id, "mp/other " + other}; !slices.Equal(listed, want) || lu.IsTruncated {
		t.Errorf("ListMultipartUploads = %v (truncated %v), want %v", listed, lu.IsTruncated, want)
	}
	if !q.LaxMultipart {
		lu, err = st.ListMultipartUploads(ctx, backend.ListUploadsInput{Bucket: bucket, Delimiter: "/"})
		Must(t, err)
		if len(lu.Uploads) != 0 || !slices.Equal(lu.CommonPrefixes, []string{"mp/"}) {
			t.Errorf("ListMultipartUploads by '/' = %+v, want prefix mp/ only", lu)
		}
		// Paging by one: markers lead through both uploads.
		lu, err = st.ListMultipartUploads(ctx, backend.ListUploadsInput{Bucket: bucket, MaxUploads: 1})
		Must(t, err)
		if len(lu.Uploads) != 1 || !lu.IsTruncated || lu.NextKeyMarker != "mp/obj" || lu.NextUploadIDMarker != id {
			t.Errorf("first page of uploads = %+v", lu)
		}
		lu, err = st.ListMultipartUploads(ctx, backend.ListUploadsInput{Bucket: bucket, MaxUploads: 1,
			KeyMarker: lu.NextKeyMarker, UploadIDMarker: lu.NextUploadIDMarker})
		Must(t, err)
		if len(lu.Uploads) != 1 || lu.Uploads[0].UploadID != other {
			t.Errorf("second page of uploads = %+v", lu)
		}
	}

	complete := func(ps []backend.CompletedPart) (backend.CompleteMultipartOutput, error) {
		return st.CompleteMultipartUpload(ctx, backend.CompleteMultipartInput{Bucket: bucket, Key: "mp/obj", UploadID: id, Parts: ps})
	}
	_, err = complete([]backend.CompletedPart{{PartNumber: 1, ETag: etags[0]}, {PartNumber: 2, ETag: oldETag2}, {PartNumber: 3, ETag: etags[2]}})
	WantCode(t, err, "InvalidPart", 400)
	_, err = complete([]backend.CompletedPart{{PartNumber: 1, ETag: etags[0]}, {PartNumber: 4, ETag: etags[2]}})
	WantCode(t, err, "InvalidPart", 400)
	if !q.LaxMultipart {
		_, err = complete([]backend.CompletedPart{{PartNumber: 2, ETag: etags[1]}, {PartNumber: 1, ETag: etags[0]}, {PartNumber: 3, ETag: etags[2]}})
		WantCode(t, err, "InvalidPartOrder", 400)
	}

	out, err := complete([]backend.CompletedPart{{PartNumber: 1, ETag: etags[0]}, {PartNumber: 2, ETag: `"` + etags[1] + `"`}, {PartNumber: 3, ETag: etags[2]}})
	Must(t, err)
	if want := MultipartETag(etags); out.ETag != want {
		t.Errorf("completion ETag = %q, want %q", out.ETag, want)
	}
	data := bytes.Join(parts, nil)
	info, err := st.HeadObject(ctx, bucket, "mp/obj")
	Must(t, err)
	if info.Size != int64(len(data)) || info.ETag != out.ETag || !reflect.DeepEqual(info.Meta, meta) || info.Headers != hdr {
		t.Errorf("HeadObject = %+v, want size %d ETag %s meta %v headers %+v", info, len(data), out.ETag, meta, hdr)
	}
	obj, err := st.GetObject(ctx, backend.GetInput{Bucket: bucket, Key: "mp/obj"})
	Must(t, err)
	if got := ReadAll(t, obj.Body); !bytes.Equal(got, data) || obj.Info.ETag != out.ETag {
		t.Errorf("GetObject: %d bytes (equal %v), ETag %q", len(got), bytes.Equal(got, data), obj.Info.ETag)
	}
	r := backend.ByteRange{Off: mib5 - 10, Len: 20} // across the first part boundary
	obj, err = st.GetObject(ctx, backend.GetInput{Bucket: bucket, Key: "mp/obj", Range: &r, IfMatch: out.ETag})
	Must(t, err)
	if got := ReadAll(t, obj.Body); !bytes.Equal(got, data[r.Off:r.Off+r.Len]) {
		t.Errorf("ranged GET across parts differs")
	}
	page, err := st.ListObjects(ctx, backend.ListInput{Bucket: bucket, V2: true, Prefix: "mp/"})
	Must(t, err)
	if len(page.Entries) != 1 || page.Entries[0].ETag != out.ETag || page.Entries[0].Size != int64(len(data)) {
		t.Errorf("listing of mp/ = %+v, want mp/obj with ETag %s", page.Entries, out.ETag)
	}

	// The upload is gone once completed.
	_, err = st.ListParts(ctx, backend.ListPartsInput{Bucket: bucket, Key: "mp/obj", UploadID: id})
	WantCode(t, err, "NoSuchUpload", 404)
	// (A repeated completion is not checked: S3 may answer it with the
	// first one's result.)

	// Every part but the last must be at least 5 MiB.
	small, err := st.CreateMultipartUpload(ctx, backend.CreateMultipartInput{Bucket: bucket, Key: "mp/small"})
	Must(t, err)
	s1 := UploadPart(ctx, t, st, bucket, "mp/small", small, 1, RandBytes(t, 1024))
	s2 := UploadPart(ctx, t, st, bucket, "mp/small", small, 2, RandBytes(t, 1024))
	_, err = st.CompleteMultipartUpload(ctx, backend.CompleteMultipartInput{Bucket: bucket, Key: "mp/small", UploadID: small,
		Parts: []backend.CompletedPart{{PartNumber: 1, ETag: s1}, {PartNumber: 2, ETag: s2}}})
	WantCode(t, err, "EntityTooSmall", 400)
	// A single small part is a valid object.
	out, err = st.CompleteMultipartUpload(ctx, backend.CompleteMultipartInput{Bucket: bucket, Key: "mp/small", UploadID: small,
		Parts: []backend.CompletedPart{{PartNumber: 2, ETag: s2}}})
	Must(t, err)
	if want := MultipartETag([]string{s2}); out.ETag != want {
		t.Errorf("one-part ETag = %q, want %q", out.ETag, want)
	}

	// Abort ends an upload.
	Must(t, st.AbortMultipartUpload(ctx, bucket, "mp/other", other))
	_, err = st.UploadPart(ctx, backend.UploadPartInput{Bucket: bucket, Key: "mp/other", UploadID: other, PartNumber: 1,
		Body: bytes.NewReader([]byte("x")), Size: 1})
	if !q.LaxMultipart {
		WantCode(t, err, "NoSuchUpload", 404)
	} else if err == nil {
		t.Error("UploadPart to an aborted upload succeeded")
	}
	_, err = st.ListParts(ctx, backend.ListPartsInput{Bucket: bucket, Key: "mp/other", UploadID: other})
	WantCode(t, err, "NoSuchUpload", 404)
	lu, err = st.ListMultipartUploads(ctx, backend.ListUploadsInput{Bucket: bucket})
	Must(t, err)
	if len(lu.Uploads) != 0 {
		t.Errorf("uploads left: %+v", lu.Uploads)
	}
	_, err = st.ListMultipartUploads(ctx, backend.ListUploadsInput{Bucket: "missing-" + bucket})
	WantCode(t, err, "NoSuchBucket", 404)
	Must(t, st.DeleteObject(ctx, bucket, "mp/small"))
}

// UploadPart uploads data as part n of upload id and returns its ETag.
func UploadPart(ctx context.Context, t *testing.T, st backend.Store, bucket, key, id string, n int32, data []byte) string {
	t.Helper()
	etag, err := st.UploadPart(ctx, backend.UploadPartInput{Bucket: bucket, Key: key, UploadID: id, PartNumber: n,
		Body: bytes.NewReader(data), Size: int64(len(data)), ContentMD5: MD5Base64(data)})
	if err != nil {
		t.Fatalf("UploadPart %s #%d: %v", key, n, err)
	}
	return etag
}

// MultipartETag is S3's ETag of an object assembled from parts.
func MultipartETag(partETags []string) string {
	h := md5.New()
	for _, e := range partETags {
		b, _ := hex.DecodeString(e)
		h.Write(b)
	}
	return fmt.Sprintf("%s-%d", hex.EncodeToString(h.Sum(nil)), len(partETags))
}

const mib5 = 5 << 20 // S3 minimum size of a part that is not the last
