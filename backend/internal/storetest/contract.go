// Package storetest is the contract every object store s3seal runs on
// must meet, checked through backend's S3 client: buckets, objects,
// errors, listings, multipart uploads, conditional writes, copies, key
// layouts, storage classes and versions. The tests of package backend run
// it against moto, those of backend/embedded against the embedded store;
// the helpers here serve both.
package storetest

import (
	"bytes"
	"context"
	"fmt"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/s3seal/s3seal/backend"
)

// Quirks lists known deviations of a test backend from S3 that the
// contract tolerates (never of s3seal's own code).
type Quirks struct {
	NoMD5Check bool // does not verify Content-MD5 (moto 5.2)
	// lax multipart (moto 5.2): ListMultipartUploads ignores the
	// delimiter, completion accepts parts out of order, and UploadPart to
	// an unknown upload fails with 500 instead of NoSuchUpload.
	LaxMultipart bool
	// NoCopySourceIfMatch: CopyObject and UploadPartCopy ignore
	// x-amz-copy-source-if-match (moto 5.2).
	NoCopySourceIfMatch bool
}

// Contract is the contract every Store implementation must meet. It works
// in a fresh bucket of its own and deletes it at the end.
func Contract(t *testing.T, st backend.Store) { ContractWith(t, st, Quirks{}) }

func ContractWith(t *testing.T, st backend.Store, q Quirks) {
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

func testBuckets(ctx context.Context, t *testing.T, st backend.Store, bucket string) {
	Must(t, st.CreateBucket(ctx, bucket))
	Must(t, st.HeadBucket(ctx, bucket))
	bs, err := st.ListBuckets(ctx)
	Must(t, err)
	if !slices.ContainsFunc(bs, func(b backend.Bucket) bool { return b.Name == bucket && !b.Created.IsZero() }) {
		t.Errorf("ListBuckets = %+v, want %s with a creation time", bs, bucket)
	}
	region, err := st.BucketRegion(ctx, bucket)
	Must(t, err)
	if region != "us-east-1" {
		t.Errorf("BucketRegion = %q, want us-east-1", region)
	}
	err = st.HeadBucket(ctx, "missing-"+bucket)
	WantCode(t, err, "NoSuchBucket", 404)
	_, err = st.BucketRegion(ctx, "missing-"+bucket)
	WantCode(t, err, "NoSuchBucket", 404)
}

func testObject(ctx context.Context, t *testing.T, st backend.Store, bucket string) {
	data := RandBytes(t, 100_000)
	hdr := backend.Headers{
		ContentType:        "application/x-test",
		CacheControl:       "max-age=60",
		ContentDisposition: `attachment; filename="a.bin"`,
		ContentEncoding:    "gzip",
		ContentLanguage:    "de-CH",
		Expires:            "Thu, 01 Dec 2044 16:00:00 GMT",
	}
	meta := map[string]string{"mixedCase": "Value One", "s3seal-v": "1"}
	out := Put(ctx, t, st, bucket, "dir/obj.bin", data, meta, hdr)
	if want := md5hex(data); out.ETag != want {
		t.Errorf("PutObject ETag = %q, want %q", out.ETag, want)
	}
	wantMeta := map[string]string{"mixedcase": "Value One", "s3seal-v": "1"}

	info, err := st.HeadObject(ctx, bucket, "dir/obj.bin")
	Must(t, err)
	if info.Size != int64(len(data)) || info.ETag != out.ETag || info.LastModified.IsZero() {
		t.Errorf("HeadObject = size %d etag %q mtime %v", info.Size, info.ETag, info.LastModified)
	}
	if !reflect.DeepEqual(info.Meta, wantMeta) {
		t.Errorf("HeadObject Meta = %v, want %v", info.Meta, wantMeta)
	}
	if info.Headers != hdr {
		t.Errorf("HeadObject Headers =\n %+v, want\n %+v", info.Headers, hdr)
	}

	obj, err := st.GetObject(ctx, backend.GetInput{Bucket: bucket, Key: "dir/obj.bin"})
	Must(t, err)
	if got := ReadAll(t, obj.Body); !bytes.Equal(got, data) {
		t.Errorf("GetObject body differs (%d bytes, want %d)", len(got), len(data))
	}
	if obj.Info.Size != int64(len(data)) || obj.Info.ETag != out.ETag || !reflect.DeepEqual(obj.Info.Meta, wantMeta) || obj.Info.Headers != hdr {
		t.Errorf("GetObject Info = %+v", obj.Info)
	}

	for _, r := range []backend.ByteRange{{Off: 0, Len: 1}, {Off: 1000, Len: 5000}, {Off: int64(len(data)) - 10, Len: 10}, {Off: int64(len(data)) - 10, Len: 100}} {
		obj, err := st.GetObject(ctx, backend.GetInput{Bucket: bucket, Key: "dir/obj.bin", Range: &r, IfMatch: out.ETag})
		Must(t, err)
		end := min(r.Off+r.Len, int64(len(data)))
		if got := ReadAll(t, obj.Body); !bytes.Equal(got, data[r.Off:end]) {
			t.Errorf("range %+v: got %d bytes, want data[%d:%d]", r, len(got), r.Off, end)
		}
		if obj.Info.Size != int64(len(data)) {
			t.Errorf("range %+v: Info.Size = %d, want whole size %d", r, obj.Info.Size, len(data))
		}
	}

	// IfMatch also accepts a quoted ETag.
	obj, err = st.GetObject(ctx, backend.GetInput{Bucket: bucket, Key: "dir/obj.bin", IfMatch: `"` + out.ETag + `"`})
	Must(t, err)
	obj.Body.Close()

	// An overwrite replaces metadata and headers wholesale.
	data2 := RandBytes(t, 10)
	Put(ctx, t, st, bucket, "dir/obj.bin", data2, map[string]string{"other": "x"}, backend.Headers{})
	info, err = st.HeadObject(ctx, bucket, "dir/obj.bin")
	Must(t, err)
	if !reflect.DeepEqual(info.Meta, map[string]string{"other": "x"}) || info.Size != 10 {
		t.Errorf("after overwrite: Meta = %v size %d, want only other=x, size 10", info.Meta, info.Size)
	}
	if info.Headers.CacheControl != "" || info.Headers.ContentDisposition != "" || info.Headers.Expires != "" || info.Headers.ContentLanguage != "" {
		t.Errorf("after overwrite: old headers survived: %+v", info.Headers)
	}

	// An empty object.
	Put(ctx, t, st, bucket, "empty", nil, nil, backend.Headers{})
	obj, err = st.GetObject(ctx, backend.GetInput{Bucket: bucket, Key: "empty"})
	Must(t, err)
	if got := ReadAll(t, obj.Body); len(got) != 0 || obj.Info.Size != 0 {
		t.Errorf("empty object: %d bytes, size %d", len(got), obj.Info.Size)
	}
}

func testObjectErrors(ctx context.Context, t *testing.T, st backend.Store, bucket string, q Quirks) {
	data := []byte("precondition data")
	out := Put(ctx, t, st, bucket, "pre", data, nil, backend.Headers{})

	_, err := st.GetObject(ctx, backend.GetInput{Bucket: bucket, Key: "pre", IfMatch: md5hex([]byte("other"))})
	WantCode(t, err, "PreconditionFailed", 412)
	_, err = st.GetObject(ctx, backend.GetInput{Bucket: bucket, Key: "pre", IfMatch: md5hex([]byte("other")), Range: &backend.ByteRange{Off: 0, Len: 4}})
	WantCode(t, err, "PreconditionFailed", 412)
	_, err = st.GetObject(ctx, backend.GetInput{Bucket: bucket, Key: "pre", Range: &backend.ByteRange{Off: 100, Len: 4}})
	WantCode(t, err, "InvalidRange", 416)

	_, err = st.GetObject(ctx, backend.GetInput{Bucket: bucket, Key: "nope"})
	WantCode(t, err, "NoSuchKey", 404)
	_, err = st.HeadObject(ctx, bucket, "nope")
	WantCode(t, err, "NotFound", 404)
	if !backend.IsNotFound(err) {
		t.Errorf("IsNotFound(%v) = false", err)
	}
	_, err = st.GetObject(ctx, backend.GetInput{Bucket: "missing-" + bucket, Key: "pre"})
	WantCode(t, err, "NoSuchBucket", 404)
	_, err = st.ListObjects(ctx, backend.ListInput{Bucket: "missing-" + bucket})
	WantCode(t, err, "NoSuchBucket", 404)

	// Content-MD5 of other bytes: the backend must refuse the body and
	// keep the object that was there.
	_, err = st.PutObject(ctx, backend.PutInput{
		Bucket: bucket, Key: "pre", Body: bytes.NewReader([]byte("other bytes")), Size: 11,
		ContentMD5: MD5Base64([]byte("not the body")),
	})
	if !q.NoMD5Check {
		WantCode(t, err, "BadDigest", 400)
	} else if err == nil {
		out = Put(ctx, t, st, bucket, "pre", data, nil, backend.Headers{})
	}

	// The object is still intact and DeleteObject of a missing key is fine.
	info, err := st.HeadObject(ctx, bucket, "pre")
	Must(t, err)
	if info.ETag != out.ETag {
		t.Errorf("ETag changed to %q", info.ETag)
	}
	Must(t, st.DeleteObject(ctx, bucket, "nope"))
	Must(t, st.DeleteObject(ctx, bucket, "pre"))
	_, err = st.HeadObject(ctx, bucket, "pre")
	WantCode(t, err, "NotFound", 404)
}

func testList(ctx context.Context, t *testing.T, st backend.Store, bucket string, q Quirks) {
	var many []string
	for i := range 23 {
		k := fmt.Sprintf("many/k%02d", i)
		many = append(many, k)
		Put(ctx, t, st, bucket, k, []byte(k), nil, backend.Headers{})
	}
	for _, k := range []string{"tree/a", "tree/b/1", "tree/b/2", "tree/c", "tree/d/x/1", "tree/e", "tree/e-f"} {
		Put(ctx, t, st, bucket, k, []byte(k), nil, backend.Headers{})
	}

	for _, v2 := range []bool{false, true} {
		name := map[bool]string{false: "V1", true: "V2"}[v2]
		keys, prefixes, pages := listAll(ctx, t, st, backend.ListInput{Bucket: bucket, V2: v2, Prefix: "many/", MaxKeys: 5}, q)
		if !slices.Equal(keys, many) || len(prefixes) != 0 || pages != 5 {
			t.Errorf("%s many/ by 5: %d pages, keys %v prefixes %v", name, pages, keys, prefixes)
		}
		// V1 is asked as V2 (moto's own V1 delimited paging is broken).
		keys, prefixes, _ = listAll(ctx, t, st, backend.ListInput{Bucket: bucket, V2: v2, Prefix: "tree/", Delimiter: "/", MaxKeys: 2}, q)
		if want := []string{"tree/a", "tree/c", "tree/e", "tree/e-f"}; !slices.Equal(keys, want) {
			t.Errorf("%s tree/ delimited: keys %v, want %v", name, keys, want)
		}
		if want := []string{"tree/b/", "tree/d/"}; !slices.Equal(prefixes, want) {
			t.Errorf("%s tree/ delimited: prefixes %v, want %v", name, prefixes, want)
		}
		// A delimiter other than "/".
		keys, prefixes, _ = listAll(ctx, t, st, backend.ListInput{Bucket: bucket, V2: v2, Prefix: "tree/", Delimiter: "-"}, q)
		if len(keys) != 6 || !slices.Equal(prefixes, []string{"tree/e-"}) {
			t.Errorf("%s tree/ by '-': keys %v prefixes %v", name, keys, prefixes)
		}
		// Whole bucket, delimited at the top ("empty" and dir/ come from
		// the object subtest).
		keys, prefixes, _ = listAll(ctx, t, st, backend.ListInput{Bucket: bucket, V2: v2, Delimiter: "/"}, q)
		if !slices.Equal(keys, []string{"empty"}) || !slices.Equal(prefixes, []string{"dir/", "many/", "tree/"}) {
			t.Errorf("%s root delimited: keys %v prefixes %v", name, keys, prefixes)
		}
	}

	page, err := st.ListObjects(ctx, backend.ListInput{Bucket: bucket, V2: true, Prefix: "many/", StartAfter: "many/k19"})
	Must(t, err)
	if got := EntryKeys(page.Entries); !slices.Equal(got, many[20:]) || page.IsTruncated {
		t.Errorf("StartAfter many/k19: %v truncated=%v", got, page.IsTruncated)
	}
	page, err = st.ListObjects(ctx, backend.ListInput{Bucket: bucket, Prefix: "many/", Marker: "many/k19"})
	Must(t, err)
	if got := EntryKeys(page.Entries); !slices.Equal(got, many[20:]) {
		t.Errorf("Marker many/k19: %v", got)
	}
	page, err = st.ListObjects(ctx, backend.ListInput{Bucket: bucket, Prefix: "many/k00"})
	Must(t, err)
	if len(page.Entries) != 1 {
		t.Fatalf("many/k00 listing: %+v", page.Entries)
	}
	if e := page.Entries[0]; e.Size != 8 || e.ETag != md5hex([]byte("many/k00")) || e.LastModified.IsZero() {
		t.Errorf("entry = %+v", e)
	}
}

func testDelete(ctx context.Context, t *testing.T, st backend.Store, bucket string) {
	err := st.DeleteBucket(ctx, bucket)
	WantCode(t, err, "BucketNotEmpty", 409)

	res, err := st.DeleteObjects(ctx, bucket, []string{"many/k00", "many/k01", "never-was"})
	Must(t, err)
	want := []backend.DeleteResult{{Key: "many/k00"}, {Key: "many/k01"}, {Key: "never-was"}}
	if !reflect.DeepEqual(res, want) {
		t.Errorf("DeleteObjects = %+v, want %+v", res, want)
	}
	_, err = st.HeadObject(ctx, bucket, "many/k01")
	WantCode(t, err, "NotFound", 404)

	// Empty the bucket through the listing, then delete it.
	for {
		page, err := st.ListObjects(ctx, backend.ListInput{Bucket: bucket, V2: true, MaxKeys: 10})
		Must(t, err)
		if len(page.Entries) == 0 {
			break
		}
		res, err := st.DeleteObjects(ctx, bucket, EntryKeys(page.Entries))
		Must(t, err)
		for _, r := range res {
			if r.Code != "" {
				t.Fatalf("DeleteObjects %s: %s %s", r.Key, r.Code, r.Message)
			}
		}
	}
	Must(t, st.DeleteBucket(ctx, bucket))
	WantCode(t, st.HeadBucket(ctx, bucket), "NoSuchBucket", 404)
	WantCode(t, st.DeleteBucket(ctx, bucket), "NoSuchBucket", 404)
}

// listAll pages through a listing the way s3seal will: V1 by NextMarker (or
// the last key or prefix when the backend sends none), V2 by token.
func listAll(ctx context.Context, t *testing.T, st backend.Store, in backend.ListInput, q Quirks) (keys, prefixes []string, pages int) {
	t.Helper()
	for {
		page, err := st.ListObjects(ctx, in)
		Must(t, err)
		pages++
		if in.MaxKeys > 0 && len(page.Entries)+len(page.CommonPrefixes) > int(in.MaxKeys) {
			t.Fatalf("page of %d items, MaxKeys %d", len(page.Entries)+len(page.CommonPrefixes), in.MaxKeys)
		}
		keys = append(keys, EntryKeys(page.Entries)...)
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
			next = max(lastOr(EntryKeys(page.Entries)), lastOr(page.CommonPrefixes))
		}
		in.Marker = next
	}
}
