package backend

import (
	"bytes"
	"context"
	"crypto/md5"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"reflect"
	"slices"
	"testing"
	"time"
)

// quirks lists known deviations of a test backend from S3 that the
// contract tolerates (never of s3seal's own code).
type quirks struct {
	noMD5Check bool // does not verify Content-MD5 (moto 5.2)
	// lax multipart (moto 5.2): ListMultipartUploads ignores the
	// delimiter, completion accepts parts out of order, and UploadPart to
	// an unknown upload fails with 500 instead of NoSuchUpload.
	laxMultipart bool
	// noCopySourceIfMatch: CopyObject and UploadPartCopy ignore
	// x-amz-copy-source-if-match (moto 5.2).
	noCopySourceIfMatch bool
}

// testStore is the contract every Store implementation must meet. It works
// in a fresh bucket of its own and deletes it at the end.
func testStore(t *testing.T, st Store) { testStoreWith(t, st, quirks{}) }

func testStoreWith(t *testing.T, st Store, q quirks) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	bucket := "contract-" + randHex(t, 6)

	t.Run("buckets", func(t *testing.T) { testBuckets(ctx, t, st, bucket) })
	t.Run("object", func(t *testing.T) { testObject(ctx, t, st, bucket) })
	t.Run("errors", func(t *testing.T) { testObjectErrors(ctx, t, st, bucket, q) })
	t.Run("list", func(t *testing.T) { testList(ctx, t, st, bucket, q) })
	t.Run("multipart", func(t *testing.T) { testMultipart(ctx, t, st, bucket, q) })
	t.Run("conditional", func(t *testing.T) { testConditional(ctx, t, st, bucket) })
	t.Run("copy", func(t *testing.T) { testCopy(ctx, t, st, bucket, q) })
	t.Run("partcopy", func(t *testing.T) { testPartCopy(ctx, t, st, bucket, q) })
	t.Run("delete", func(t *testing.T) { testDelete(ctx, t, st, bucket) })
}

func testBuckets(ctx context.Context, t *testing.T, st Store, bucket string) {
	must(t, st.CreateBucket(ctx, bucket))
	must(t, st.HeadBucket(ctx, bucket))
	bs, err := st.ListBuckets(ctx)
	must(t, err)
	if !slices.ContainsFunc(bs, func(b Bucket) bool { return b.Name == bucket && !b.Created.IsZero() }) {
		t.Errorf("ListBuckets = %+v, want %s with a creation time", bs, bucket)
	}
	region, err := st.BucketRegion(ctx, bucket)
	must(t, err)
	if region != "us-east-1" {
		t.Errorf("BucketRegion = %q, want us-east-1", region)
	}
	err = st.HeadBucket(ctx, "missing-"+bucket)
	wantCode(t, err, "NoSuchBucket", 404)
	_, err = st.BucketRegion(ctx, "missing-"+bucket)
	wantCode(t, err, "NoSuchBucket", 404)
}

func testObject(ctx context.Context, t *testing.T, st Store, bucket string) {
	data := randBytes(t, 100_000)
	hdr := Headers{
		ContentType:        "application/x-test",
		CacheControl:       "max-age=60",
		ContentDisposition: `attachment; filename="a.bin"`,
		ContentEncoding:    "gzip",
		ContentLanguage:    "de-CH",
		Expires:            "Thu, 01 Dec 2044 16:00:00 GMT",
	}
	meta := map[string]string{"mixedCase": "Value One", "s3seal-v": "1"}
	out := put(ctx, t, st, bucket, "dir/obj.bin", data, meta, hdr)
	if want := md5hex(data); out.ETag != want {
		t.Errorf("PutObject ETag = %q, want %q", out.ETag, want)
	}
	wantMeta := map[string]string{"mixedcase": "Value One", "s3seal-v": "1"}

	info, err := st.HeadObject(ctx, bucket, "dir/obj.bin")
	must(t, err)
	if info.Size != int64(len(data)) || info.ETag != out.ETag || info.LastModified.IsZero() {
		t.Errorf("HeadObject = size %d etag %q mtime %v", info.Size, info.ETag, info.LastModified)
	}
	if !reflect.DeepEqual(info.Meta, wantMeta) {
		t.Errorf("HeadObject Meta = %v, want %v", info.Meta, wantMeta)
	}
	if info.Headers != hdr {
		t.Errorf("HeadObject Headers =\n %+v, want\n %+v", info.Headers, hdr)
	}

	obj, err := st.GetObject(ctx, GetInput{Bucket: bucket, Key: "dir/obj.bin"})
	must(t, err)
	if got := readAll(t, obj.Body); !bytes.Equal(got, data) {
		t.Errorf("GetObject body differs (%d bytes, want %d)", len(got), len(data))
	}
	if obj.Info.Size != int64(len(data)) || obj.Info.ETag != out.ETag || !reflect.DeepEqual(obj.Info.Meta, wantMeta) || obj.Info.Headers != hdr {
		t.Errorf("GetObject Info = %+v", obj.Info)
	}

	for _, r := range []ByteRange{{0, 1}, {1000, 5000}, {int64(len(data)) - 10, 10}, {int64(len(data)) - 10, 100}} {
		obj, err := st.GetObject(ctx, GetInput{Bucket: bucket, Key: "dir/obj.bin", Range: &r, IfMatch: out.ETag})
		must(t, err)
		end := min(r.Off+r.Len, int64(len(data)))
		if got := readAll(t, obj.Body); !bytes.Equal(got, data[r.Off:end]) {
			t.Errorf("range %+v: got %d bytes, want data[%d:%d]", r, len(got), r.Off, end)
		}
		if obj.Info.Size != int64(len(data)) {
			t.Errorf("range %+v: Info.Size = %d, want whole size %d", r, obj.Info.Size, len(data))
		}
	}

	// IfMatch also accepts a quoted ETag.
	obj, err = st.GetObject(ctx, GetInput{Bucket: bucket, Key: "dir/obj.bin", IfMatch: `"` + out.ETag + `"`})
	must(t, err)
	obj.Body.Close()

	// An overwrite replaces metadata and headers wholesale.
	data2 := randBytes(t, 10)
	put(ctx, t, st, bucket, "dir/obj.bin", data2, map[string]string{"other": "x"}, Headers{})
	info, err = st.HeadObject(ctx, bucket, "dir/obj.bin")
	must(t, err)
	if !reflect.DeepEqual(info.Meta, map[string]string{"other": "x"}) || info.Size != 10 {
		t.Errorf("after overwrite: Meta = %v size %d, want only other=x, size 10", info.Meta, info.Size)
	}
	if info.Headers.CacheControl != "" || info.Headers.ContentDisposition != "" || info.Headers.Expires != "" || info.Headers.ContentLanguage != "" {
		t.Errorf("after overwrite: old headers survived: %+v", info.Headers)
	}

	// An empty object.
	put(ctx, t, st, bucket, "empty", nil, nil, Headers{})
	obj, err = st.GetObject(ctx, GetInput{Bucket: bucket, Key: "empty"})
	must(t, err)
	if got := readAll(t, obj.Body); len(got) != 0 || obj.Info.Size != 0 {
		t.Errorf("empty object: %d bytes, size %d", len(got), obj.Info.Size)
	}
}

func testObjectErrors(ctx context.Context, t *testing.T, st Store, bucket string, q quirks) {
	data := []byte("precondition data")
	out := put(ctx, t, st, bucket, "pre", data, nil, Headers{})

	_, err := st.GetObject(ctx, GetInput{Bucket: bucket, Key: "pre", IfMatch: md5hex([]byte("other"))})
	wantCode(t, err, "PreconditionFailed", 412)
	_, err = st.GetObject(ctx, GetInput{Bucket: bucket, Key: "pre", IfMatch: md5hex([]byte("other")), Range: &ByteRange{0, 4}})
	wantCode(t, err, "PreconditionFailed", 412)
	_, err = st.GetObject(ctx, GetInput{Bucket: bucket, Key: "pre", Range: &ByteRange{100, 4}})
	wantCode(t, err, "InvalidRange", 416)

	_, err = st.GetObject(ctx, GetInput{Bucket: bucket, Key: "nope"})
	wantCode(t, err, "NoSuchKey", 404)
	_, err = st.HeadObject(ctx, bucket, "nope")
	wantCode(t, err, "NotFound", 404)
	if !IsNotFound(err) {
		t.Errorf("IsNotFound(%v) = false", err)
	}
	_, err = st.GetObject(ctx, GetInput{Bucket: "missing-" + bucket, Key: "pre"})
	wantCode(t, err, "NoSuchBucket", 404)
	_, err = st.ListObjects(ctx, ListInput{Bucket: "missing-" + bucket})
	wantCode(t, err, "NoSuchBucket", 404)

	// Content-MD5 of other bytes: the backend must refuse the body and
	// keep the object that was there.
	_, err = st.PutObject(ctx, PutInput{
		Bucket: bucket, Key: "pre", Body: bytes.NewReader([]byte("other bytes")), Size: 11,
		ContentMD5: md5b64([]byte("not the body")),
	})
	if !q.noMD5Check {
		wantCode(t, err, "BadDigest", 400)
	} else if err == nil {
		out = put(ctx, t, st, bucket, "pre", data, nil, Headers{})
	}

	// The object is still intact and DeleteObject of a missing key is fine.
	info, err := st.HeadObject(ctx, bucket, "pre")
	must(t, err)
	if info.ETag != out.ETag {
		t.Errorf("ETag changed to %q", info.ETag)
	}
	must(t, st.DeleteObject(ctx, bucket, "nope"))
	must(t, st.DeleteObject(ctx, bucket, "pre"))
	_, err = st.HeadObject(ctx, bucket, "pre")
	wantCode(t, err, "NotFound", 404)
}

func testList(ctx context.Context, t *testing.T, st Store, bucket string, q quirks) {
	var many []string
	for i := range 23 {
		k := fmt.Sprintf("many/k%02d", i)
		many = append(many, k)
		put(ctx, t, st, bucket, k, []byte(k), nil, Headers{})
	}
	for _, k := range []string{"tree/a", "tree/b/1", "tree/b/2", "tree/c", "tree/d/x/1", "tree/e", "tree/e-f"} {
		put(ctx, t, st, bucket, k, []byte(k), nil, Headers{})
	}

	for _, v2 := range []bool{false, true} {
		name := map[bool]string{false: "V1", true: "V2"}[v2]
		keys, prefixes, pages := listAll(ctx, t, st, ListInput{Bucket: bucket, V2: v2, Prefix: "many/", MaxKeys: 5}, q)
		if !slices.Equal(keys, many) || len(prefixes) != 0 || pages != 5 {
			t.Errorf("%s many/ by 5: %d pages, keys %v prefixes %v", name, pages, keys, prefixes)
		}
		// V1 is asked as V2 (moto's own V1 delimited paging is broken).
		keys, prefixes, _ = listAll(ctx, t, st, ListInput{Bucket: bucket, V2: v2, Prefix: "tree/", Delimiter: "/", MaxKeys: 2}, q)
		if want := []string{"tree/a", "tree/c", "tree/e", "tree/e-f"}; !slices.Equal(keys, want) {
			t.Errorf("%s tree/ delimited: keys %v, want %v", name, keys, want)
		}
		if want := []string{"tree/b/", "tree/d/"}; !slices.Equal(prefixes, want) {
			t.Errorf("%s tree/ delimited: prefixes %v, want %v", name, prefixes, want)
		}
		// A delimiter other than "/".
		keys, prefixes, _ = listAll(ctx, t, st, ListInput{Bucket: bucket, V2: v2, Prefix: "tree/", Delimiter: "-"}, q)
		if len(keys) != 6 || !slices.Equal(prefixes, []string{"tree/e-"}) {
			t.Errorf("%s tree/ by '-': keys %v prefixes %v", name, keys, prefixes)
		}
		// Whole bucket, delimited at the top ("empty" and dir/ come from
		// the object subtest).
		keys, prefixes, _ = listAll(ctx, t, st, ListInput{Bucket: bucket, V2: v2, Delimiter: "/"}, q)
		if !slices.Equal(keys, []string{"empty"}) || !slices.Equal(prefixes, []string{"dir/", "many/", "tree/"}) {
			t.Errorf("%s root delimited: keys %v prefixes %v", name, keys, prefixes)
		}
	}

	page, err := st.ListObjects(ctx, ListInput{Bucket: bucket, V2: true, Prefix: "many/", StartAfter: "many/k19"})
	must(t, err)
	if got := entryKeys(page.Entries); !slices.Equal(got, many[20:]) || page.IsTruncated {
		t.Errorf("StartAfter many/k19: %v truncated=%v", got, page.IsTruncated)
	}
	page, err = st.ListObjects(ctx, ListInput{Bucket: bucket, Prefix: "many/", Marker: "many/k19"})
	must(t, err)
	if got := entryKeys(page.Entries); !slices.Equal(got, many[20:]) {
		t.Errorf("Marker many/k19: %v", got)
	}
	page, err = st.ListObjects(ctx, ListInput{Bucket: bucket, Prefix: "many/k00"})
	must(t, err)
	if len(page.Entries) != 1 {
		t.Fatalf("many/k00 listing: %+v", page.Entries)
	}
	if e := page.Entries[0]; e.Size != 8 || e.ETag != md5hex([]byte("many/k00")) || e.LastModified.IsZero() {
		t.Errorf("entry = %+v", e)
	}
}

func testDelete(ctx context.Context, t *testing.T, st Store, bucket string) {
	err := st.DeleteBucket(ctx, bucket)
	wantCode(t, err, "BucketNotEmpty", 409)

	res, err := st.DeleteObjects(ctx, bucket, []string{"many/k00", "many/k01", "never-was"})
	must(t, err)
	want := []DeleteResult{{Key: "many/k00"}, {Key: "many/k01"}, {Key: "never-was"}}
	if !reflect.DeepEqual(res, want) {
		t.Errorf("DeleteObjects = %+v, want %+v", res, want)
	}
	_, err = st.HeadObject(ctx, bucket, "many/k01")
	wantCode(t, err, "NotFound", 404)

	// Empty the bucket through the listing, then delete it.
	for {
		page, err := st.ListObjects(ctx, ListInput{Bucket: bucket, V2: true, MaxKeys: 10})
		must(t, err)
		if len(page.Entries) == 0 {
			break
		}
		res, err := st.DeleteObjects(ctx, bucket, entryKeys(page.Entries))
		must(t, err)
		for _, r := range res {
			if r.Code != "" {
				t.Fatalf("DeleteObjects %s: %s %s", r.Key, r.Code, r.Message)
			}
		}
	}
	must(t, st.DeleteBucket(ctx, bucket))
	wantCode(t, st.HeadBucket(ctx, bucket), "NoSuchBucket", 404)
	wantCode(t, st.DeleteBucket(ctx, bucket), "NoSuchBucket", 404)
}

// listAll pages through a listing the way s3seal will: V1 by NextMarker (or
// the last key or prefix when the backend sends none), V2 by token.
func listAll(ctx context.Context, t *testing.T, st Store, in ListInput, q quirks) (keys, prefixes []string, pages int) {
	t.Helper()
	for {
		page, err := st.ListObjects(ctx, in)
		must(t, err)
		pages++
		if in.MaxKeys > 0 && len(page.Entries)+len(page.CommonPrefixes) > int(in.MaxKeys) {
			t.Fatalf("page of %d items, MaxKeys %d", len(page.Entries)+len(page.CommonPrefixes), in.MaxKeys)
		}
		keys = append(keys, entryKeys(page.Entries)...)
		prefixes = append(prefixes, page.CommonPrefixes...)
		if !page.IsTruncated {
			slices.Sort(prefixes)
			return keys, prefixes, pages
		}
		if pages > 100 {
			t.Fatal("listing does not end")
		}
		if in.V2 {
			if page.NextContinuationToken == "" {
				t.Fatal("truncated V2 page without NextContinuationToken")
			}
			in.ContinuationToken = page.NextContinuationToken
			continue
		}
		next := page.NextMarker
		if next == "" {
			next = max(lastOr(entryKeys(page.Entries)), lastOr(page.CommonPrefixes))
		}
		in.Marker = next
	}
}

func put(ctx context.Context, t *testing.T, st Store, bucket, key string, data []byte, meta map[string]string, hdr Headers) PutOutput {
	t.Helper()
	out, err := st.PutObject(ctx, PutInput{
		Bucket: bucket, Key: key, Body: bytes.NewReader(data), Size: int64(len(data)),
		ContentMD5: md5b64(data), Meta: meta, Headers: hdr,
	})
	if err != nil {
		t.Fatalf("PutObject %s: %v", key, err)
	}
	return out
}

// wantCode checks that err is an *Error with the code and status.
func wantCode(t *testing.T, err error, code string, status int) {
	t.Helper()
	var e *Error
	if !errors.As(err, &e) {
		t.Errorf("error %v (%T), want *Error %s", err, err, code)
		return
	}
	if e.Code != code || e.StatusCode != status {
		t.Errorf("error code %q status %d (%v), want %q %d", e.Code, e.StatusCode, err, code, status)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func entryKeys(es []ListEntry) []string {
	out := make([]string, len(es))
	for i, e := range es {
		out[i] = e.Key
	}
	return out
}

func lastOr(s []string) string {
	if len(s) == 0 {
		return ""
	}
	return s[len(s)-1]
}

func readAll(t *testing.T, rc io.ReadCloser) []byte {
	t.Helper()
	defer rc.Close()
	b, err := io.ReadAll(rc)
	must(t, err)
	return b
}

func randBytes(t *testing.T, n int) []byte {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return b
}

func randHex(t *testing.T, n int) string { return hex.EncodeToString(randBytes(t, n)) }

func md5hex(b []byte) string { s := md5.Sum(b); return hex.EncodeToString(s[:]) }

func md5b64(b []byte) string { s := md5.Sum(b); return base64.StdEncoding.EncodeToString(s[:]) }
