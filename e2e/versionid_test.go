package e2e

import (
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
)

// TestDeleteObjectsEmptyVersionID: DELETE ?versionId= (empty) is refused
// by s3seal with 400 InvalidArgument "Version id cannot be the empty
// string", and so is the same empty version id in a DeleteObjects entry
// (<VersionId></VersionId>): taken for "no version", it would make a
// delete marker in a versioned bucket that hides the object. The object
// stays current.
func TestDeleteObjectsEmptyVersionID(t *testing.T) {
	const b = "empty-vid"
	_, c := startWithBucket(t, sealOpts{Backend: startMoto(t)}, mustCreateVersionedBucket, b)
	ctx := ctxT(t)
	if _, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String(b), Key: aws.String("k"), Body: strings.NewReader("keep me")}); err != nil {
		t.Fatal(err)
	}
	_, err := c.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: aws.String(b), Key: aws.String("k"), VersionId: aws.String("")})
	t.Logf("DeleteObject versionId=\"\": %v", err)
	out, err := c.DeleteObjects(ctx, &s3.DeleteObjectsInput{Bucket: aws.String(b), Delete: &types.Delete{
		Objects: []types.ObjectIdentifier{{Key: aws.String("k"), VersionId: aws.String("")}}}})
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range out.Deleted {
		t.Logf("DeleteObjects deleted %q marker=%v markerVersion=%q", aws.ToString(d.Key), aws.ToBool(d.DeleteMarker), aws.ToString(d.DeleteMarkerVersionId))
	}
	for _, e := range out.Errors {
		t.Logf("DeleteObjects error %q %s", aws.ToString(e.Key), aws.ToString(e.Code))
	}
	if _, err := c.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String(b), Key: aws.String("k")}); err != nil {
		t.Errorf("after a DeleteObjects entry with an empty VersionId the object is hidden (HEAD: %v); want that entry refused as DELETE ?versionId= is", err)
	}
}

// TestDeleteObjectsBlankVersionID: a DeleteObjects entry whose
// <VersionId> is blank but not empty ("   ") is checked the way
// DeleteObject's ?versionId is: it names no version, so the entry gets an
// error (NoSuchVersion or InvalidArgument), the object stays intact and
// no delete marker is made.
func TestDeleteObjectsBlankVersionID(t *testing.T) {
	onEachStore(t, func(t *testing.T, p *sealProc) {
		ctx := context.Background()
		c := sdkFor(t, p)
		for _, versioned := range []bool{false, true} {
			b := aws.String("blank-vid-plain")
			if versioned {
				b = aws.String("blank-vid-versioned")
			}
			mustCreateBucket(t, c, *b)
			if versioned {
				mustEnableVersioning(t, c, *b)
			}
			for _, blank := range []string{" ", "   ", "\t", "\n"} {
				k := aws.String("k")
				if _, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: b, Key: k, Body: strings.NewReader("keep me")}); err != nil {
					t.Fatal(err)
				}
				out, err := c.DeleteObjects(ctx, &s3.DeleteObjectsInput{Bucket: b, Delete: &types.Delete{
					Objects: []types.ObjectIdentifier{{Key: k, VersionId: aws.String(blank)}}}})
				if err != nil {
					t.Logf("versioned=%v %q: DeleteObjects refused: %v", versioned, blank, err)
				} else {
					for _, d := range out.Deleted {
						t.Logf("versioned=%v %q: Deleted %s version %q marker %v", versioned, blank, aws.ToString(d.Key), aws.ToString(d.VersionId), aws.ToBool(d.DeleteMarker))
					}
					for _, e := range out.Errors {
						t.Logf("versioned=%v %q: Error %s %s", versioned, blank, aws.ToString(e.Code), aws.ToString(e.Message))
					}
				}
				if _, err := c.HeadObject(ctx, &s3.HeadObjectInput{Bucket: b, Key: k}); err != nil {
					t.Errorf("versioned=%v: DeleteObjects with <VersionId>%q</VersionId> deleted the current object: HEAD %v", versioned, blank, err)
				}
			}
		}
	})
}

// TestDeleteObjectsPaddedVersionID: the same gap with a real id
// padded with blanks (" <id> "): DeleteObject refuses it, DeleteObjects
// forwards it. Neither store deletes version <id> (moto answers the
// entry Deleted, version " <id> ", which s3seal passes on).
func TestDeleteObjectsPaddedVersionID(t *testing.T) {
	onEachStore(t, func(t *testing.T, p *sealProc) {
		ctx := context.Background()
		c := sdkFor(t, p)
		b := aws.String("padded-vid")
		mustCreateVersionedBucket(t, c, *b)
		k := aws.String("k")
		out, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: b, Key: k, Body: strings.NewReader("v1")})
		if err != nil {
			t.Fatal(err)
		}
		v1 := aws.ToString(out.VersionId)
		if _, err := c.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: b, Key: k, VersionId: aws.String(" " + v1 + " ")}); err == nil {
			t.Fatalf("DeleteObject took the padded id")
		}
		d, err := c.DeleteObjects(ctx, &s3.DeleteObjectsInput{Bucket: b, Delete: &types.Delete{
			Objects: []types.ObjectIdentifier{{Key: k, VersionId: aws.String(" " + v1 + " ")}}}})
		if err == nil {
			for _, e := range d.Deleted {
				t.Logf("Deleted %s version %q", aws.ToString(e.Key), aws.ToString(e.VersionId))
			}
			for _, e := range d.Errors {
				t.Logf("Error %s %s", aws.ToString(e.Code), aws.ToString(e.Message))
			}
		}
		if _, err := c.HeadObject(ctx, &s3.HeadObjectInput{Bucket: b, Key: k, VersionId: aws.String(v1)}); err != nil {
			t.Errorf("DeleteObjects with <VersionId> %q deleted version %s: HEAD %v", " "+v1+" ", v1, err)
		}
	})
}

// TestNullVersionIDNotCurrent: ?versionId=null in a versioned bucket
// without a null version, on moto and the embedded store, is never
// answered with the current version relabelled "null".
func TestNullVersionIDNotCurrent(t *testing.T) {
	onEachStore(t, func(t *testing.T, p *sealProc) {
		ctx := context.Background()
		c := sdkFor(t, p)
		b := aws.String("null-vid")
		mustCreateVersionedBucket(t, c, *b)
		if _, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: b, Key: aws.String("k"), Body: strings.NewReader("v1")}); err != nil {
			t.Fatal(err)
		}
		if g, err := c.GetObject(ctx, &s3.GetObjectInput{Bucket: b, Key: aws.String("k"), VersionId: aws.String("null")}); err == nil {
			t.Errorf("GET ?versionId=null answered version %q", aws.ToString(g.VersionId))
		}
		if h, err := c.HeadObject(ctx, &s3.HeadObjectInput{Bucket: b, Key: aws.String("k"), VersionId: aws.String("null")}); err == nil {
			t.Errorf("HEAD ?versionId=null answered version %q", aws.ToString(h.VersionId))
		}
		if _, err := c.GetObjectTagging(ctx, &s3.GetObjectTaggingInput{Bucket: b, Key: aws.String("k"), VersionId: aws.String("null")}); err == nil {
			t.Errorf("GET ?tagging&versionId=null succeeded")
		}
	})
}

// TestObjectAttributesOfVersion: in a versioned bucket in front of moto,
// GetObjectAttributes (aws s3api get-object-attributes --version-id, the
// SDK's GetObjectAttributes with VersionId) of an older version answers
// that version's attributes, as GET/HEAD/copy/tagging by version id do;
// and without a version id the answer carries x-amz-version-id, so the
// client can tell which version the attributes describe.
func TestObjectAttributesOfVersion(t *testing.T) {
	t.Parallel()
	const b = "attrversions"
	_, c := startWithBucket(t, sealOpts{Backend: startMoto(t)}, mustCreateVersionedBucket, b)
	ctx := ctxT(t)
	v1, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String(b), Key: aws.String("k"), Body: bytes.NewReader([]byte("one"))})
	if err != nil {
		t.Fatal(err)
	}
	v2, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String(b), Key: aws.String("k"), Body: bytes.NewReader([]byte("twotwo"))})
	if err != nil {
		t.Fatal(err)
	}
	attrs := []types.ObjectAttributes{types.ObjectAttributesObjectSize, types.ObjectAttributesEtag}
	cur, err := c.GetObjectAttributes(ctx, &s3.GetObjectAttributesInput{Bucket: aws.String(b), Key: aws.String("k"), ObjectAttributes: attrs})
	if err != nil {
		t.Fatal(err)
	}
	if aws.ToInt64(cur.ObjectSize) != 6 {
		t.Errorf("current: ObjectSize %d, want 6", aws.ToInt64(cur.ObjectSize))
	}
	if aws.ToString(cur.VersionId) != aws.ToString(v2.VersionId) {
		t.Errorf("current: VersionId %q, want %q (S3 names the version it describes)", aws.ToString(cur.VersionId), aws.ToString(v2.VersionId))
	}
	old, err := c.GetObjectAttributes(ctx, &s3.GetObjectAttributesInput{Bucket: aws.String(b), Key: aws.String("k"),
		VersionId: v1.VersionId, ObjectAttributes: attrs})
	if err != nil {
		t.Fatalf("GetObjectAttributes of version %s: %v (GET, HEAD and copy of it work)", aws.ToString(v1.VersionId), err)
	}
	if aws.ToInt64(old.ObjectSize) != 3 || aws.ToString(old.VersionId) != aws.ToString(v1.VersionId) {
		t.Errorf("old version: ObjectSize %d VersionId %q, want 3 %q", aws.ToInt64(old.ObjectSize), aws.ToString(old.VersionId), aws.ToString(v1.VersionId))
	}
}

// TestStoreIgnoringVersionIDWithoutEcho: a hostile store that ignores
// ?versionId on GET and HEAD and simply does not echo x-amz-version-id
// would serve the CURRENT version's (authentic) bytes under an OLDER
// version id. DESIGN.md refuses a read by version id whose answer names
// another version as a store fault; an answer naming no version must not
// get past that check, or a client restoring a known-good old version
// (after a bad overwrite) gets the bad current one, with 200 and the old
// id in x-amz-version-id.
func TestStoreIgnoringVersionIDWithoutEcho(t *testing.T) {
	t.Parallel()
	moto := startMoto(t)
	target, _ := url.Parse(moto.Endpoint)
	var strip atomic.Bool
	// To moto, keeping the Host the request came with.
	rp := &httputil.ReverseProxy{Rewrite: func(pr *httputil.ProxyRequest) {
		pr.SetURL(target)
		pr.Out.Host = pr.In.Host
		r := pr.Out
		if strip.Load() && (r.Method == http.MethodGet || r.Method == http.MethodHead) {
			q := r.URL.Query()
			if q.Has("versionId") {
				q.Del("versionId")
				r.URL.RawQuery = q.Encode()
			}
		}
	}}
	rp.ModifyResponse = func(resp *http.Response) error {
		if strip.Load() {
			resp.Header.Del("X-Amz-Version-Id")
		}
		return nil
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: rp}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })

	const b = "hostileversions"
	_, c := startWithBucket(t, sealOpts{Backend: &motoServer{Endpoint: "http://" + ln.Addr().String()}}, mustCreateVersionedBucket, b)
	ctx := ctxT(t)
	good, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String(b), Key: aws.String("k"), Body: bytes.NewReader([]byte("known good"))})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String(b), Key: aws.String("k"), Body: bytes.NewReader([]byte("RANSOMWARE"))}); err != nil {
		t.Fatal(err)
	}
	if got, err := getVersion(t, c, b, "k", aws.ToString(good.VersionId)); err != nil || string(got) != "known good" {
		t.Fatalf("honest store: GET of the old version = %q, %v", got, err)
	}
	strip.Store(true)
	got, err := getVersion(t, c, b, "k", aws.ToString(good.VersionId))
	if err == nil && string(got) != "known good" {
		t.Errorf("GET ?versionId=%s through a store that ignores it answered 200 %q: the current version served under the old id, want an error or %q",
			aws.ToString(good.VersionId), got, "known good")
	}
	if o, err := c.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(b), Key: aws.String("k"), VersionId: good.VersionId}); err == nil {
		o.Body.Close()
		t.Logf("GET answer names version %q (asked %q), ETag %s", aws.ToString(o.VersionId), aws.ToString(good.VersionId), aws.ToString(o.ETag))
	}
	h, err := c.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String(b), Key: aws.String("k"), VersionId: good.VersionId})
	t.Logf("HEAD: %v", err)
	if err == nil && aws.ToString(h.ETag) != aws.ToString(good.ETag) {
		t.Errorf("HEAD ?versionId=%s answered 200 with ContentLength %d VersionId %q ETag %s: the current version's",
			aws.ToString(good.VersionId), aws.ToInt64(h.ContentLength), aws.ToString(h.VersionId), aws.ToString(h.ETag))
	}
	// A copy of the "old version" seals the current bytes into a new one.
	if _, err := c.CopyObject(ctx, &s3.CopyObjectInput{Bucket: aws.String(b), Key: aws.String("restored"),
		CopySource: aws.String(b + "/k?versionId=" + aws.ToString(good.VersionId))}); err == nil {
		strip.Store(false)
		if got, err := c.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(b), Key: aws.String("restored")}); err == nil {
			body, _ := io.ReadAll(got.Body)
			got.Body.Close()
			if string(body) != "known good" {
				t.Errorf("copy-object of the old version (the restore) succeeded and sealed %q", body)
			}
		}
	}
}
