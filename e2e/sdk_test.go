package e2e

import (
	"bytes"
	"crypto/md5"
	"encoding/base64"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
)

// startBackend starts s3seal on the named backend: "embedded" (the default
// gofakes3 store) or "moto" (moto_server through --backend-endpoint).
func startBackend(t *testing.T, backend string) *sealProc {
	t.Helper()
	if backend == "moto" {
		return startS3seal(t, sealOpts{Backend: startMoto(t)})
	}
	return startS3seal(t, sealOpts{})
}

// TestSDK runs the object API suite with aws-sdk-go-v2 against s3seal on
// each backend.
func TestSDK(t *testing.T) {
	t.Parallel()
	for _, backend := range []string{"embedded", "moto"} {
		t.Run(backend, func(t *testing.T) {
			t.Parallel()
			p := startBackend(t, backend)
			c := sdkFor(t, p)
			t.Run("Buckets", func(t *testing.T) { testBuckets(t, c) })
			t.Run("PutGetHead", func(t *testing.T) { testPutGetHead(t, c) })
			t.Run("Ranges", func(t *testing.T) { testRanges(t, c) })
			t.Run("Delete", func(t *testing.T) { testDelete(t, c) })
			t.Run("Copy", func(t *testing.T) { testCopy(t, c) })
			t.Run("Metadata", func(t *testing.T) { testMetadata(t, c) })
			t.Run("Conditional", func(t *testing.T) { testConditional(t, c) })
			t.Run("ListV1", func(t *testing.T) { testListV1(t, c) })
			t.Run("ListV2", func(t *testing.T) { testListV2(t, c) })
		})
	}
}

func testBuckets(t *testing.T, c *s3.Client) {
	ctx := ctxT(t)
	mustCreateBucket(t, c, "bkt-a")
	mustCreateBucket(t, c, "bkt-b")
	if _, err := c.HeadBucket(ctx, &s3.HeadBucketInput{Bucket: aws.String("bkt-a")}); err != nil {
		t.Errorf("HeadBucket existing: %v", err)
	}
	_, err := c.HeadBucket(ctx, &s3.HeadBucketInput{Bucket: aws.String("no-such-bkt")})
	wantStatus(t, "HeadBucket missing", err, http.StatusNotFound, "")

	loc, err := c.GetBucketLocation(ctx, &s3.GetBucketLocationInput{Bucket: aws.String("bkt-a")})
	if err != nil {
		t.Errorf("GetBucketLocation: %v", err)
	} else if l := string(loc.LocationConstraint); l != "" && l != "us-east-1" {
		t.Errorf("GetBucketLocation = %q, want empty or us-east-1", l)
	}

	lb, err := c.ListBuckets(ctx, &s3.ListBucketsInput{})
	if err != nil {
		t.Fatalf("ListBuckets: %v", err)
	}
	var names []string
	for _, b := range lb.Buckets {
		names = append(names, aws.ToString(b.Name))
	}
	for _, want := range []string{"bkt-a", "bkt-b"} {
		if !slices.Contains(names, want) {
			t.Errorf("ListBuckets = %v, missing %s", names, want)
		}
	}

	if _, err := c.DeleteBucket(ctx, &s3.DeleteBucketInput{Bucket: aws.String("bkt-b")}); err != nil {
		t.Errorf("DeleteBucket: %v", err)
	}
	_, err = c.HeadBucket(ctx, &s3.HeadBucketInput{Bucket: aws.String("bkt-b")})
	wantStatus(t, "HeadBucket after delete", err, http.StatusNotFound, "")
}

// segment-boundary sizes: the format cuts plaintext into 65,536-byte segments.
var objectSizes = []int{0, 1, 100, 65535, 65536, 65537, 2*65536 + 17, 1<<20 + 7}

func testPutGetHead(t *testing.T, c *s3.Client) {
	ctx := ctxT(t)
	mustCreateBucket(t, c, "pgh")
	for i, n := range objectSizes {
		key := fmt.Sprintf("obj-%d", n)
		body := patternBytes(uint64(100+i), n)
		putObj(t, c, "pgh", key, body)
		got := getObj(t, c, "pgh", key)
		if !bytes.Equal(got, body) {
			t.Errorf("GET %s: %d bytes differ from the %d put", key, len(got), n)
		}
		h, err := c.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String("pgh"), Key: aws.String(key)})
		if err != nil {
			t.Errorf("HEAD %s: %v", key, err)
			continue
		}
		if aws.ToInt64(h.ContentLength) != int64(n) || unquote(h.ETag) != md5Hex(body) {
			t.Errorf("HEAD %s: size %d ETag %s, want %d %s", key, aws.ToInt64(h.ContentLength), unquote(h.ETag), n, md5Hex(body))
		}
	}

	// Overwrite replaces the content.
	newer := patternBytes(999, 70000)
	putObj(t, c, "pgh", "obj-1", newer)
	if got := getObj(t, c, "pgh", "obj-1"); !bytes.Equal(got, newer) {
		t.Errorf("GET after overwrite: got %d bytes, not the new content", len(got))
	}

	// A wrong Content-MD5 is refused and publishes nothing.
	bad := md5.Sum([]byte("something else"))
	_, err := c.PutObject(ctx, &s3.PutObjectInput{
		Bucket: aws.String("pgh"), Key: aws.String("bad-md5"),
		Body: bytes.NewReader([]byte("payload")), ContentMD5: aws.String(base64.StdEncoding.EncodeToString(bad[:])),
	})
	wantStatus(t, "PUT with wrong Content-MD5", err, http.StatusBadRequest, "BadDigest")
	_, err = c.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String("pgh"), Key: aws.String("bad-md5")})
	wantStatus(t, "HEAD after BadDigest", err, http.StatusNotFound, "")

	_, err = c.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String("pgh"), Key: aws.String("missing")})
	wantStatus(t, "GET missing key", err, http.StatusNotFound, "NoSuchKey")
}

func testRanges(t *testing.T, c *s3.Client) {
	const n = 3*65536 + 1000
	body := patternBytes(7, n)
	mustCreateBucket(t, c, "rng")
	putObj(t, c, "rng", "r", body)
	cases := []struct {
		spec       string
		start, end int // inclusive
	}{
		{"bytes=0-0", 0, 0},
		{"bytes=0-99", 0, 99},
		{"bytes=65530-65545", 65530, 65545},                      // across the first boundary
		{"bytes=65536-131071", 65536, 131071},                    // exactly segment 1
		{"bytes=65535-196608", 65535, 196608},                    // one byte either side of two segments
		{"bytes=100-", 100, n - 1},                               // open end
		{"bytes=131000-", 131000, n - 1},                         // open end inside segment 1
		{"bytes=-70000", n - 70000, n - 1},                       // suffix across a boundary
		{"bytes=-5", n - 5, n - 1},                               // short suffix
		{fmt.Sprintf("bytes=%d-%d", n-10, n+100), n - 10, n - 1}, // end clamped
		{fmt.Sprintf("bytes=-%d", n+50), 0, n - 1},               // suffix longer than object
	}
	for _, tc := range cases {
		out, err := c.GetObject(ctxT(t), &s3.GetObjectInput{Bucket: aws.String("rng"), Key: aws.String("r"), Range: aws.String(tc.spec)})
		if err != nil {
			t.Errorf("GET %s: %v", tc.spec, err)
			continue
		}
		got, err := io.ReadAll(out.Body)
		out.Body.Close()
		if err != nil {
			t.Errorf("GET %s body: %v", tc.spec, err)
			continue
		}
		if !bytes.Equal(got, body[tc.start:tc.end+1]) {
			t.Errorf("GET %s: %d bytes, want %d bytes [%d,%d]", tc.spec, len(got), tc.end-tc.start+1, tc.start, tc.end)
		}
		wantCR := fmt.Sprintf("bytes %d-%d/%d", tc.start, tc.end, n)
		if cr := aws.ToString(out.ContentRange); cr != wantCR {
			t.Errorf("GET %s: Content-Range %q, want %q", tc.spec, cr, wantCR)
		}
		if l := aws.ToInt64(out.ContentLength); l != int64(tc.end-tc.start+1) {
			t.Errorf("GET %s: Content-Length %d, want %d", tc.spec, l, tc.end-tc.start+1)
		}
		if unquote(out.ETag) != md5Hex(body) {
			t.Errorf("GET %s: ETag %s, want whole-object MD5 %s", tc.spec, unquote(out.ETag), md5Hex(body))
		}
	}
	for _, spec := range []string{fmt.Sprintf("bytes=%d-", n), fmt.Sprintf("bytes=%d-%d", n+5, n+10)} {
		_, err := c.GetObject(ctxT(t), &s3.GetObjectInput{Bucket: aws.String("rng"), Key: aws.String("r"), Range: aws.String(spec)})
		wantStatus(t, "GET "+spec, err, http.StatusRequestedRangeNotSatisfiable, "InvalidRange")
	}
}

func testDelete(t *testing.T, c *s3.Client) {
	ctx := ctxT(t)
	mustCreateBucket(t, c, "del")
	for _, k := range []string{"a", "b", "c", "d"} {
		putObj(t, c, "del", k, []byte("content of "+k))
	}
	if _, err := c.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: aws.String("del"), Key: aws.String("a")}); err != nil {
		t.Fatalf("DeleteObject: %v", err)
	}
	_, err := c.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String("del"), Key: aws.String("a")})
	wantStatus(t, "HEAD deleted", err, http.StatusNotFound, "")
	_, err = c.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String("del"), Key: aws.String("a")})
	wantStatus(t, "GET deleted", err, http.StatusNotFound, "NoSuchKey")

	out, err := c.DeleteObjects(ctx, &s3.DeleteObjectsInput{Bucket: aws.String("del"), Delete: &types.Delete{
		Objects: []types.ObjectIdentifier{{Key: aws.String("b")}, {Key: aws.String("c")}, {Key: aws.String("never-existed")}},
	}})
	if err != nil {
		t.Fatalf("DeleteObjects: %v", err)
	}
	if len(out.Errors) != 0 {
		t.Errorf("DeleteObjects errors: %+v", out.Errors)
	}
	var deleted []string
	for _, d := range out.Deleted {
		deleted = append(deleted, aws.ToString(d.Key))
	}
	slices.Sort(deleted)
	if !slices.Equal(deleted, []string{"b", "c", "never-existed"}) {
		t.Errorf("DeleteObjects deleted %v, want [b c never-existed]", deleted)
	}
	if keys := listAllV2(t, c, "del", &s3.ListObjectsV2Input{}); !slices.Equal(keys, []string{"d"}) {
		t.Errorf("after deletes, list = %v, want [d]", keys)
	}
}

func testCopy(t *testing.T, c *s3.Client) {
	ctx := ctxT(t)
	mustCreateBucket(t, c, "cpy")
	mustCreateBucket(t, c, "cpy-dst")
	body := patternBytes(3, 200000)
	_, err := c.PutObject(ctx, &s3.PutObjectInput{
		Bucket: aws.String("cpy"), Key: aws.String("src"), Body: bytes.NewReader(body),
		ContentType: aws.String("application/x-e2e"), Metadata: map[string]string{"color": "blue"},
	})
	if err != nil {
		t.Fatalf("PUT src: %v", err)
	}
	check := func(bucket, key, ct string, meta map[string]string) {
		t.Helper()
		h, err := c.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String(bucket), Key: aws.String(key)})
		if err != nil {
			t.Fatalf("HEAD %s/%s: %v", bucket, key, err)
		}
		if aws.ToString(h.ContentType) != ct || !mapsEqual(h.Metadata, meta) {
			t.Errorf("HEAD %s/%s: Content-Type %q meta %v, want %q %v", bucket, key, aws.ToString(h.ContentType), h.Metadata, ct, meta)
		}
		if aws.ToInt64(h.ContentLength) != int64(len(body)) || unquote(h.ETag) != md5Hex(body) {
			t.Errorf("HEAD %s/%s: size %d ETag %s", bucket, key, aws.ToInt64(h.ContentLength), unquote(h.ETag))
		}
		if got := getObj(t, c, bucket, key); !bytes.Equal(got, body) {
			t.Errorf("GET %s/%s: copied bytes differ", bucket, key)
		}
	}

	cp, err := c.CopyObject(ctx, &s3.CopyObjectInput{
		Bucket: aws.String("cpy-dst"), Key: aws.String("copied"), CopySource: aws.String("cpy/src"),
	})
	if err != nil {
		t.Fatalf("CopyObject (COPY): %v", err)
	}
	if cp.CopyObjectResult == nil || unquote(cp.CopyObjectResult.ETag) != md5Hex(body) {
		t.Errorf("CopyObject ETag = %+v, want %s", cp.CopyObjectResult, md5Hex(body))
	}
	check("cpy-dst", "copied", "application/x-e2e", map[string]string{"color": "blue"})

	_, err = c.CopyObject(ctx, &s3.CopyObjectInput{
		Bucket: aws.String("cpy"), Key: aws.String("replaced"), CopySource: aws.String("cpy/src"),
		MetadataDirective: types.MetadataDirectiveReplace,
		ContentType:       aws.String("text/x-replaced"), Metadata: map[string]string{"shape": "round"},
	})
	if err != nil {
		t.Fatalf("CopyObject (REPLACE): %v", err)
	}
	check("cpy", "replaced", "text/x-replaced", map[string]string{"shape": "round"})
	check("cpy", "src", "application/x-e2e", map[string]string{"color": "blue"})

	_, err = c.CopyObject(ctx, &s3.CopyObjectInput{
		Bucket: aws.String("cpy"), Key: aws.String("x"), CopySource: aws.String("cpy/missing"),
	})
	wantStatus(t, "CopyObject missing source", err, http.StatusNotFound, "NoSuchKey")
}

func testMetadata(t *testing.T, c *s3.Client) {
	ctx := ctxT(t)
	mustCreateBucket(t, c, "meta")
	body := []byte("metadata round trip")
	meta := map[string]string{"owner": "e2e", "multi-word-key": "Some Value 42"}
	_, err := c.PutObject(ctx, &s3.PutObjectInput{
		Bucket: aws.String("meta"), Key: aws.String("m"), Body: bytes.NewReader(body), Metadata: meta,
		ContentType: aws.String("text/plain; charset=utf-8"), CacheControl: aws.String("max-age=60"),
		ContentDisposition: aws.String(`attachment; filename="m.txt"`), ContentLanguage: aws.String("en"),
	})
	if err != nil {
		t.Fatalf("PUT: %v", err)
	}
	h, err := c.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String("meta"), Key: aws.String("m")})
	if err != nil {
		t.Fatalf("HEAD: %v", err)
	}
	g, err := c.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String("meta"), Key: aws.String("m")})
	if err != nil {
		t.Fatalf("GET: %v", err)
	}
	g.Body.Close()
	for _, r := range []struct {
		op             string
		meta           map[string]string
		ct, cc, cd, cl *string
	}{
		{"HEAD", h.Metadata, h.ContentType, h.CacheControl, h.ContentDisposition, h.ContentLanguage},
		{"GET", g.Metadata, g.ContentType, g.CacheControl, g.ContentDisposition, g.ContentLanguage},
	} {
		if !mapsEqual(r.meta, meta) {
			t.Errorf("%s metadata = %v, want %v (no s3seal-* keys)", r.op, r.meta, meta)
		}
		if aws.ToString(r.ct) != "text/plain; charset=utf-8" || aws.ToString(r.cc) != "max-age=60" ||
			aws.ToString(r.cd) != `attachment; filename="m.txt"` || aws.ToString(r.cl) != "en" {
			t.Errorf("%s headers: type %q cache %q disp %q lang %q", r.op, aws.ToString(r.ct), aws.ToString(r.cc), aws.ToString(r.cd), aws.ToString(r.cl))
		}
	}

	// s3seal-* metadata keys are reserved.
	_, err = c.PutObject(ctx, &s3.PutObjectInput{
		Bucket: aws.String("meta"), Key: aws.String("reserved"), Body: bytes.NewReader(body),
		Metadata: map[string]string{"s3seal-v": "1"},
	})
	wantStatus(t, "PUT with s3seal-v metadata", err, http.StatusBadRequest, "InvalidArgument")
}

func testConditional(t *testing.T, c *s3.Client) {
	ctx := ctxT(t)
	mustCreateBucket(t, c, "cond")
	body := patternBytes(11, 5000)
	putObj(t, c, "cond", "k", body)
	etag := `"` + md5Hex(body) + `"`
	b, k := aws.String("cond"), aws.String("k")

	_, err := c.GetObject(ctx, &s3.GetObjectInput{Bucket: b, Key: k, IfNoneMatch: aws.String(etag)})
	wantStatus(t, "GET If-None-Match current", err, http.StatusNotModified, "")
	_, err = c.HeadObject(ctx, &s3.HeadObjectInput{Bucket: b, Key: k, IfNoneMatch: aws.String(etag)})
	wantStatus(t, "HEAD If-None-Match current", err, http.StatusNotModified, "")
	_, err = c.GetObject(ctx, &s3.GetObjectInput{Bucket: b, Key: k, IfMatch: aws.String(`"0123456789abcdef0123456789abcdef"`)})
	wantStatus(t, "GET If-Match other", err, http.StatusPreconditionFailed, "PreconditionFailed")
	_, err = c.HeadObject(ctx, &s3.HeadObjectInput{Bucket: b, Key: k, IfMatch: aws.String(`"0123456789abcdef0123456789abcdef"`)})
	wantStatus(t, "HEAD If-Match other", err, http.StatusPreconditionFailed, "")

	out, err := c.GetObject(ctx, &s3.GetObjectInput{Bucket: b, Key: k, IfMatch: aws.String(etag)})
	if err != nil {
		t.Fatalf("GET If-Match current: %v", err)
	}
	got, _ := io.ReadAll(out.Body)
	out.Body.Close()
	if !bytes.Equal(got, body) {
		t.Errorf("GET If-Match current: body differs")
	}
	out, err = c.GetObject(ctx, &s3.GetObjectInput{Bucket: b, Key: k, IfNoneMatch: aws.String(`"0123456789abcdef0123456789abcdef"`)})
	if err != nil {
		t.Fatalf("GET If-None-Match other: %v", err)
	}
	out.Body.Close()
}

func mapsEqual(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[strings.ToLower(k)] != v && b[k] != v {
			return false
		}
	}
	return true
}
