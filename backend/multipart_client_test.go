package backend

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
)

// The wire form of the multipart calls: headers as PutObject sends them,
// no SDK checksums on parts, conditions passed on.
func TestMultipartWire(t *testing.T) {
	ctx := context.Background()
	r, st := newRecorder(t, reply{status: 200, body: `<InitiateMultipartUploadResult><Bucket>b</Bucket><Key>k</Key><UploadId>up-1</UploadId></InitiateMultipartUploadResult>`})
	id, err := st.CreateMultipartUpload(ctx, CreateMultipartInput{Bucket: "b", Key: "k",
		Meta: map[string]string{"s3seal": "v1"}, Headers: Headers{ContentType: "text/plain", CacheControl: "no-store", Expires: "not a date"}})
	must(t, err)
	if id != "up-1" {
		t.Errorf("upload id = %q", id)
	}
	req := r.reqs[0]
	for h, want := range map[string]string{"X-Amz-Meta-S3seal": "v1", "Content-Type": "text/plain", "Cache-Control": "no-store", "Expires": "not a date"} {
		if got := req.Header.Get(h); got != want {
			t.Errorf("create: header %s = %q, want %q", h, got, want)
		}
	}
	if req.Method != http.MethodPost || !req.URL.Query().Has("uploads") {
		t.Errorf("create: %s %s", req.Method, req.URL)
	}

	r, st = newRecorder(t, reply{status: 200, header: map[string]string{"ETag": `"p1"`}})
	data := []byte("part data")
	body := bytes.NewReader(data)
	body.Seek(3, io.SeekStart) // UploadPart must rewind
	etag, err := st.UploadPart(ctx, UploadPartInput{Bucket: "b", Key: "k", UploadID: "up-1", PartNumber: 7,
		Body: body, Size: int64(len(data)), ContentMD5: md5b64(data)})
	must(t, err)
	req = r.reqs[0]
	if etag != "p1" || req.Method != http.MethodPut || req.URL.Query().Get("partNumber") != "7" || req.URL.Query().Get("uploadId") != "up-1" {
		t.Errorf("part: etag %q, %s %s", etag, req.Method, req.URL)
	}
	if req.Header.Get("Content-Md5") != md5b64(data) || req.Header.Get("X-Amz-Content-Sha256") != "UNSIGNED-PAYLOAD" ||
		req.ContentLength != int64(len(data)) || !bytes.Equal(r.body[0], data) {
		t.Errorf("part: headers %v, body %q", req.Header, r.body[0])
	}
	for h := range req.Header {
		if strings.HasPrefix(strings.ToLower(h), "x-amz-checksum") || strings.HasPrefix(strings.ToLower(h), "x-amz-sdk-checksum") {
			t.Errorf("part: unexpected checksum header %s", h)
		}
	}

	r, st = newRecorder(t, reply{status: 200, body: `<CompleteMultipartUploadResult><ETag>"abc-2"</ETag></CompleteMultipartUploadResult>`})
	out, err := st.CompleteMultipartUpload(ctx, CompleteMultipartInput{Bucket: "b", Key: "k", UploadID: "up-1",
		Parts: []CompletedPart{{1, "e1"}, {2, `"e2"`}}, IfNoneMatch: "*", IfMatch: "old"})
	must(t, err)
	req = r.reqs[0]
	if out.ETag != "abc-2" || req.Header.Get("If-None-Match") != "*" || req.Header.Get("If-Match") != `"old"` {
		t.Errorf("complete: etag %q, If-None-Match %q If-Match %q", out.ETag, req.Header.Get("If-None-Match"), req.Header.Get("If-Match"))
	}
	if b := string(r.body[0]); !strings.Contains(b, `<ETag>&#34;e1&#34;</ETag><PartNumber>1</PartNumber>`) || !strings.Contains(b, `<ETag>&#34;e2&#34;</ETag><PartNumber>2</PartNumber>`) {
		t.Errorf("complete body = %s", b)
	}

	r, st = newRecorder(t, reply{status: 200, body: `<ListPartsResult><IsTruncated>true</IsTruncated><NextPartNumberMarker>3</NextPartNumberMarker>
<Part><PartNumber>3</PartNumber><ETag>"e3"</ETag><Size>42</Size><LastModified>2026-01-02T03:04:05.000Z</LastModified></Part></ListPartsResult>`})
	lp, err := st.ListParts(ctx, ListPartsInput{Bucket: "b", Key: "k", UploadID: "up-1", Marker: 2, MaxParts: 1})
	must(t, err)
	q := r.reqs[0].URL.Query()
	if q.Get("part-number-marker") != "2" || q.Get("max-parts") != "1" || !lp.IsTruncated || lp.NextMarker != 3 ||
		len(lp.Parts) != 1 || lp.Parts[0].ETag != "e3" || lp.Parts[0].Size != 42 || lp.Parts[0].LastModified.IsZero() {
		t.Errorf("list parts: query %v, out %+v", q, lp)
	}
}
