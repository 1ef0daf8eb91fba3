package backend

import (
	"bytes"
	"context"
	"crypto/md5"
	"encoding/hex"
	"fmt"
	"reflect"
	"slices"
	"testing"
)

// testMultipart is the multipart part of the Store contract.
func testMultipart(ctx context.Context, t *testing.T, st Store, bucket string, q quirks) {
	hdr := Headers{ContentType: "application/x-mp", CacheControl: "no-cache", ContentLanguage: "fr"}
	meta := map[string]string{"s3seal-v": "1"}
	id, err := st.CreateMultipartUpload(ctx, CreateMultipartInput{Bucket: bucket, Key: "mp/obj", Meta: meta, Headers: hdr})
	must(t, err)
	other, err := st.CreateMultipartUpload(ctx, CreateMultipartInput{Bucket: bucket, Key: "mp/other"})
	must(t, err)

	parts := [][]byte{randBytes(t, mib5), randBytes(t, mib5+1), randBytes(t, 1000)}
	etags := make([]string, len(parts))
	for i, p := range parts {
		etags[i] = uploadPart(ctx, t, st, bucket, "mp/obj", id, int32(i+1), p)
		if etags[i] != md5hex(p) {
			t.Errorf("part %d ETag = %q, want %q", i+1, etags[i], md5hex(p))
		}
	}
	// A part uploaded again replaces the earlier one.
	oldETag2 := etags[1]
	parts[1] = randBytes(t, mib5+2)
	etags[1] = uploadPart(ctx, t, st, bucket, "mp/obj", id, 2, parts[1])

	lp, err := st.ListParts(ctx, ListPartsInput{Bucket: bucket, Key: "mp/obj", UploadID: id, MaxParts: 2})
	must(t, err)
	if !lp.IsTruncated || lp.NextMarker != 2 || len(lp.Parts) != 2 {
		t.Fatalf("ListParts page 1 = %+v, want parts 1-2, truncated, next 2", lp)
	}
	lp2, err := st.ListParts(ctx, ListPartsInput{Bucket: bucket, Key: "mp/obj", UploadID: id, Marker: lp.NextMarker})
	must(t, err)
	all := append(lp.Parts, lp2.Parts...)
	if lp2.IsTruncated || len(all) != 3 {
		t.Fatalf("ListParts = %+v then %+v, want 3 parts", lp, lp2)
	}
	for i, p := range all {
		if p.PartNumber != int32(i+1) || p.ETag != etags[i] || p.Size != int64(len(parts[i])) || p.LastModified.IsZero() {
			t.Errorf("listed part %d = %+v, want ETag %s size %d", i+1, p, etags[i], len(parts[i]))
		}
	}

	lu, err := st.ListMultipartUploads(ctx, ListUploadsInput{Bucket: bucket, Prefix: "mp/"})
	must(t, err)
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
	if !q.laxMultipart {
		lu, err = st.ListMultipartUploads(ctx, ListUploadsInput{Bucket: bucket, Delimiter: "/"})
		must(t, err)
		if len(lu.Uploads) != 0 || !slices.Equal(lu.CommonPrefixes, []string{"mp/"}) {
			t.Errorf("ListMultipartUploads by '/' = %+v, want prefix mp/ only", lu)
		}
		// Paging by one: markers lead through both uploads.
		lu, err = st.ListMultipartUploads(ctx, ListUploadsInput{Bucket: bucket, MaxUploads: 1})
		must(t, err)
		if len(lu.Uploads) != 1 || !lu.IsTruncated || lu.NextKeyMarker != "mp/obj" || lu.NextUploadIDMarker != id {
			t.Errorf("first page of uploads = %+v", lu)
		}
		lu, err = st.ListMultipartUploads(ctx, ListUploadsInput{Bucket: bucket, MaxUploads: 1,
			KeyMarker: lu.NextKeyMarker, UploadIDMarker: lu.NextUploadIDMarker})
		must(t, err)
		if len(lu.Uploads) != 1 || lu.Uploads[0].UploadID != other {
			t.Errorf("second page of uploads = %+v", lu)
		}
	}

	complete := func(ps []CompletedPart) (CompleteMultipartOutput, error) {
		return st.CompleteMultipartUpload(ctx, CompleteMultipartInput{Bucket: bucket, Key: "mp/obj", UploadID: id, Parts: ps})
	}
	_, err = complete([]CompletedPart{{1, etags[0]}, {2, oldETag2}, {3, etags[2]}})
	wantCode(t, err, "InvalidPart", 400)
	_, err = complete([]CompletedPart{{1, etags[0]}, {4, etags[2]}})
	wantCode(t, err, "InvalidPart", 400)
	if !q.laxMultipart {
		_, err = complete([]CompletedPart{{2, etags[1]}, {1, etags[0]}, {3, etags[2]}})
		wantCode(t, err, "InvalidPartOrder", 400)
	}

	out, err := complete([]CompletedPart{{1, etags[0]}, {2, `"` + etags[1] + `"`}, {3, etags[2]}})
	must(t, err)
	if want := multipartETag(etags); out.ETag != want {
		t.Errorf("completion ETag = %q, want %q", out.ETag, want)
	}
	data := bytes.Join(parts, nil)
	info, err := st.HeadObject(ctx, bucket, "mp/obj")
	must(t, err)
	if info.Size != int64(len(data)) || info.ETag != out.ETag || !reflect.DeepEqual(info.Meta, meta) || info.Headers != hdr {
		t.Errorf("HeadObject = %+v, want size %d ETag %s meta %v headers %+v", info, len(data), out.ETag, meta, hdr)
	}
	obj, err := st.GetObject(ctx, GetInput{Bucket: bucket, Key: "mp/obj"})
	must(t, err)
	if got := readAll(t, obj.Body); !bytes.Equal(got, data) || obj.Info.ETag != out.ETag {
		t.Errorf("GetObject: %d bytes (equal %v), ETag %q", len(got), bytes.Equal(got, data), obj.Info.ETag)
	}
	r := ByteRange{Off: mib5 - 10, Len: 20} // across the first part boundary
	obj, err = st.GetObject(ctx, GetInput{Bucket: bucket, Key: "mp/obj", Range: &r, IfMatch: out.ETag})
	must(t, err)
	if got := readAll(t, obj.Body); !bytes.Equal(got, data[r.Off:r.Off+r.Len]) {
		t.Errorf("ranged GET across parts differs")
	}
	page, err := st.ListObjects(ctx, ListInput{Bucket: bucket, V2: true, Prefix: "mp/"})
	must(t, err)
	if len(page.Entries) != 1 || page.Entries[0].ETag != out.ETag || page.Entries[0].Size != int64(len(data)) {
		t.Errorf("listing of mp/ = %+v, want mp/obj with ETag %s", page.Entries, out.ETag)
	}

	// The upload is gone once completed.
	_, err = st.ListParts(ctx, ListPartsInput{Bucket: bucket, Key: "mp/obj", UploadID: id})
	wantCode(t, err, "NoSuchUpload", 404)
	// (A repeated completion is not checked: S3 may answer it with the
	// first one's result.)

	// Every part but the last must be at least 5 MiB.
	small, err := st.CreateMultipartUpload(ctx, CreateMultipartInput{Bucket: bucket, Key: "mp/small"})
	must(t, err)
	s1 := uploadPart(ctx, t, st, bucket, "mp/small", small, 1, randBytes(t, 1024))
	s2 := uploadPart(ctx, t, st, bucket, "mp/small", small, 2, randBytes(t, 1024))
	_, err = st.CompleteMultipartUpload(ctx, CompleteMultipartInput{Bucket: bucket, Key: "mp/small", UploadID: small,
		Parts: []CompletedPart{{1, s1}, {2, s2}}})
	wantCode(t, err, "EntityTooSmall", 400)
	// A single small part is a valid object.
	out, err = st.CompleteMultipartUpload(ctx, CompleteMultipartInput{Bucket: bucket, Key: "mp/small", UploadID: small,
		Parts: []CompletedPart{{2, s2}}})
	must(t, err)
	if want := multipartETag([]string{s2}); out.ETag != want {
		t.Errorf("one-part ETag = %q, want %q", out.ETag, want)
	}

	// Abort ends an upload.
	must(t, st.AbortMultipartUpload(ctx, bucket, "mp/other", other))
	_, err = st.UploadPart(ctx, UploadPartInput{Bucket: bucket, Key: "mp/other", UploadID: other, PartNumber: 1,
		Body: bytes.NewReader([]byte("x")), Size: 1})
	if !q.laxMultipart {
		wantCode(t, err, "NoSuchUpload", 404)
	} else if err == nil {
		t.Error("UploadPart to an aborted upload succeeded")
	}
	_, err = st.ListParts(ctx, ListPartsInput{Bucket: bucket, Key: "mp/other", UploadID: other})
	wantCode(t, err, "NoSuchUpload", 404)
	lu, err = st.ListMultipartUploads(ctx, ListUploadsInput{Bucket: bucket})
	must(t, err)
	if len(lu.Uploads) != 0 {
		t.Errorf("uploads left: %+v", lu.Uploads)
	}
	_, err = st.ListMultipartUploads(ctx, ListUploadsInput{Bucket: "missing-" + bucket})
	wantCode(t, err, "NoSuchBucket", 404)
	must(t, st.DeleteObject(ctx, bucket, "mp/small"))
}

func uploadPart(ctx context.Context, t *testing.T, st Store, bucket, key, id string, n int32, data []byte) string {
	t.Helper()
	etag, err := st.UploadPart(ctx, UploadPartInput{Bucket: bucket, Key: key, UploadID: id, PartNumber: n,
		Body: bytes.NewReader(data), Size: int64(len(data)), ContentMD5: md5b64(data)})
	if err != nil {
		t.Fatalf("UploadPart %s #%d: %v", key, n, err)
	}
	return etag
}

// multipartETag is S3's ETag of an object assembled from parts.
func multipartETag(partETags []string) string {
	h := md5.New()
	for _, e := range partETags {
		b, _ := hex.DecodeString(e)
		h.Write(b)
	}
	return fmt.Sprintf("%s-%d", hex.EncodeToString(h.Sum(nil)), len(partETags))
}

const mib5 = 5 << 20 // S3 minimum size of a part that is not the last
