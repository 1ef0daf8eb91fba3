package embedded

import (
	"bytes"
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/s3seal/s3seal/backend"
	"github.com/s3seal/s3seal/backend/internal/storetest"
)

func tagDoc(n int) []byte {
	var b strings.Builder
	b.WriteString("<Tagging><TagSet>")
	for i := range n {
		b.WriteString("<Tag><Key>k" + itoa(i) + "</Key><Value>v</Value></Tag>")
	}
	b.WriteString("</TagSet></Tagging>")
	return []byte(b.String())
}

// Tags on the embedded store itself: kept per object, counted on HEAD,
// copied or replaced by a copy, carried through a multipart upload, kept
// across a restart, checked against S3's limits, and gone with their
// object and their bucket.
func TestEmbeddedTags(t *testing.T) {
	dir := t.TempDir()
	emb, st := startEmbedded(t, dir)
	ctx := context.Background()
	storetest.Must(t, st.CreateBucket(ctx, "bkt"))
	_, err := st.PutObject(ctx, backend.PutInput{Bucket: "bkt", Key: "k", Body: bytes.NewReader([]byte("x")), Size: 1,
		Protect: backend.Protection{Tagging: "tier=gold&note=a%20b"}})
	// S3 answers tags sorted by key.
	storetest.Must(t, err)
	info, err := st.HeadObject(ctx, "bkt", "k")
	storetest.Must(t, err)
	if info.TagCount != 2 {
		t.Errorf("tag count = %d, want 2", info.TagCount)
	}
	if got, err := st.ObjectTagging(ctx, "bkt", "k", ""); err != nil || got != "note=a%20b&tier=gold" {
		t.Errorf("tags = %q, %v", got, err)
	}
	_, err = st.CopyObject(ctx, backend.CopyInput{SrcBucket: "bkt", SrcKey: "k", Bucket: "bkt", Key: "copy"})
	storetest.Must(t, err)
	if got, _ := st.ObjectTagging(ctx, "bkt", "copy", ""); got != "note=a%20b&tier=gold" {
		t.Errorf("tags of a COPY-directive copy = %q", got)
	}
	_, err = st.Forward(ctx, backend.RawRequest{Method: http.MethodPut, Bucket: "bkt", Key: "k", Query: url.Values{"tagging": {""}}, Body: tagDoc(11)})
	storetest.WantCode(t, err, "InvalidTag", 400)
	_, err = st.Forward(ctx, backend.RawRequest{Method: http.MethodPut, Bucket: "bkt", Key: "k", Query: url.Values{"tagging": {""}},
		Body: []byte("<Tagging><TagSet><Tag><Key>" + strings.Repeat("k", 129) + "</Key><Value>v</Value></Tag></TagSet></Tagging>")})
	storetest.WantCode(t, err, "InvalidTag", 400)
	_, err = st.Forward(ctx, backend.RawRequest{Method: http.MethodPut, Bucket: "bkt", Key: "missing", Query: url.Values{"tagging": {""}}, Body: tagDoc(1)})
	storetest.WantCode(t, err, "NoSuchKey", 404)
	_, err = st.Forward(ctx, backend.RawRequest{Method: http.MethodPut, Bucket: "bkt", Key: "k", Query: url.Values{"tagging": {""}}, Body: tagDoc(10)})
	storetest.Must(t, err)

	id, err := st.CreateMultipartUpload(ctx, backend.CreateMultipartInput{Bucket: "bkt", Key: "mp", Protect: backend.Protection{Tagging: "a=1"}})
	storetest.Must(t, err)
	etag, err := st.UploadPart(ctx, backend.UploadPartInput{Bucket: "bkt", Key: "mp", UploadID: id, PartNumber: 1, Body: bytes.NewReader([]byte("p")), Size: 1})
	storetest.Must(t, err)
	_, err = st.CompleteMultipartUpload(ctx, backend.CompleteMultipartInput{Bucket: "bkt", Key: "mp", UploadID: id, Parts: []backend.CompletedPart{{PartNumber: 1, ETag: etag}}})
	storetest.Must(t, err)
	if got, _ := st.ObjectTagging(ctx, "bkt", "mp", ""); got != "a=1" {
		t.Errorf("tags of a completed upload = %q", got)
	}
	_, err = st.Forward(ctx, backend.RawRequest{Method: http.MethodPut, Bucket: "bkt", Query: url.Values{"tagging": {""}}, Body: tagDoc(3)})
	storetest.Must(t, err)

	// A restart keeps them; an overwrite without tags has none.
	storetest.Must(t, emb.Close())
	_, st = startEmbedded(t, dir)
	if info, err := st.HeadObject(ctx, "bkt", "k"); err != nil || info.TagCount != 10 {
		t.Errorf("after a restart: tag count %d, %v", info.TagCount, err)
	}
	storetest.Put(ctx, t, st, "bkt", "mp", []byte("new"), nil, backend.Headers{})
	if info, _ := st.HeadObject(ctx, "bkt", "mp"); info.TagCount != 0 {
		t.Errorf("an overwrite kept the old tags: %d", info.TagCount)
	}
	storetest.Must(t, st.DeleteObject(ctx, "bkt", "k"))
	storetest.Put(ctx, t, st, "bkt", "k", []byte("again"), nil, backend.Headers{})
	if got, _ := st.ObjectTagging(ctx, "bkt", "k", ""); got != "" {
		t.Errorf("a deleted object's tags came back: %q", got)
	}
	// Deleting the bucket drops its records.
	for _, k := range []string{"k", "copy", "mp"} {
		storetest.Must(t, st.DeleteObject(ctx, "bkt", k))
	}
	storetest.Must(t, st.DeleteBucket(ctx, "bkt"))
	storetest.Must(t, st.CreateBucket(ctx, "bkt"))
	_, err = st.Forward(ctx, backend.RawRequest{Method: http.MethodGet, Bucket: "bkt", Query: url.Values{"tagging": {""}}})
	storetest.WantCode(t, err, "NoSuchTagSet", 404)
}

// Bucket documents are kept as sent when their shape is right, answered
// back, and their absence is S3's error; ACLs answer the owner's
// FULL_CONTROL plus the grants kept.
func TestEmbeddedBucketDocuments(t *testing.T) {
	_, st := startEmbedded(t, t.TempDir())
	ctx := context.Background()
	storetest.Must(t, st.CreateBucket(ctx, "bkt"))
	docs := []struct{ sub, good, bad, missing string }{
		{"policy", `{"Version":"2012-10-17","Statement":[]}`, `["not an object"]`, "NoSuchBucketPolicy"},
		{"cors", `<CORSConfiguration><CORSRule><AllowedMethod>GET</AllowedMethod><AllowedOrigin>*</AllowedOrigin></CORSRule></CORSConfiguration>`,
			`<CORSConfiguration></CORSConfiguration>`, "NoSuchCORSConfiguration"},
		{"lifecycle", `<LifecycleConfiguration><Rule><ID>r</ID><Status>Enabled</Status><Filter/><Expiration><Days>1</Days></Expiration></Rule></LifecycleConfiguration>`,
			`<Tagging/>`, "NoSuchLifecycleConfiguration"},
		{"ownershipControls", `<OwnershipControls><Rule><ObjectOwnership>BucketOwnerEnforced</ObjectOwnership></Rule></OwnershipControls>`,
			`<OwnershipControls><Rule><ObjectOwnership>Anyone</ObjectOwnership></Rule></OwnershipControls>`, "OwnershipControlsNotFoundError"},
		{"website", `<WebsiteConfiguration><IndexDocument><Suffix>index.html</Suffix></IndexDocument></WebsiteConfiguration>`,
			`<WebsiteConfiguration></WebsiteConfiguration>`, "NoSuchWebsiteConfiguration"},
	}
	for _, d := range docs {
		q := url.Values{d.sub: {""}}
		_, err := st.Forward(ctx, backend.RawRequest{Method: http.MethodGet, Bucket: "bkt", Query: q})
		storetest.WantCode(t, err, d.missing, 404)
		_, err = st.Forward(ctx, backend.RawRequest{Method: http.MethodPut, Bucket: "bkt", Query: q, Body: []byte(d.bad)})
		if backend.ErrorCode(err) != "MalformedXML" && backend.ErrorCode(err) != "MalformedPolicy" {
			t.Errorf("PUT ?%s of %s: %v", d.sub, d.bad, err)
		}
		_, err = st.Forward(ctx, backend.RawRequest{Method: http.MethodPut, Bucket: "bkt", Query: q, Body: []byte(d.good)})
		storetest.Must(t, err)
		out, err := st.Forward(ctx, backend.RawRequest{Method: http.MethodGet, Bucket: "bkt", Query: q})
		if err != nil || string(out.Body) != d.good {
			t.Errorf("GET ?%s: %v", d.sub, err)
		}
		_, err = st.Forward(ctx, backend.RawRequest{Method: http.MethodDelete, Bucket: "bkt", Query: q})
		storetest.Must(t, err)
		_, err = st.Forward(ctx, backend.RawRequest{Method: http.MethodGet, Bucket: "bkt", Query: q})
		storetest.WantCode(t, err, d.missing, 404)
	}
	_, err := st.Forward(ctx, backend.RawRequest{Method: http.MethodGet, Bucket: "nobucket", Query: url.Values{"cors": {""}}})
	storetest.WantCode(t, err, "NoSuchBucket", 404)

	_, err = st.Forward(ctx, backend.RawRequest{Method: http.MethodPut, Bucket: "bkt", Query: url.Values{"acl": {""}}, Header: http.Header{"X-Amz-Acl": {"public-read"}}})
	storetest.Must(t, err)
	out, err := st.Forward(ctx, backend.RawRequest{Method: http.MethodGet, Bucket: "bkt", Query: url.Values{"acl": {""}}})
	storetest.Must(t, err)
	if s := string(out.Body); !strings.Contains(s, "FULL_CONTROL") || !strings.Contains(s, "global/AllUsers</URI></Grantee><Permission>READ") {
		t.Errorf("bucket ACL = %s", s)
	}
	_, err = st.PutObject(ctx, backend.PutInput{Bucket: "bkt", Key: "o", Body: bytes.NewReader(nil),
		Protect: backend.Protection{Grants: map[string]string{"read": `id="someone"`}}})
	storetest.Must(t, err)
	out, err = st.Forward(ctx, backend.RawRequest{Method: http.MethodGet, Bucket: "bkt", Key: "o", Query: url.Values{"acl": {""}}})
	storetest.Must(t, err)
	if s := string(out.Body); !strings.Contains(s, "<ID>someone</ID></Grantee><Permission>READ<") {
		t.Errorf("object ACL = %s", s)
	}
	_, err = st.Forward(ctx, backend.RawRequest{Method: http.MethodPut, Bucket: "bkt", Query: url.Values{"acl": {""}}, Header: http.Header{"X-Amz-Acl": {"public-everything"}}})
	storetest.WantCode(t, err, "InvalidArgument", 400)
}

// The lock is kept in the embedded store's sidecar across a restart and
// holds against the store's own client: a held version is not deleted.
func TestEmbeddedLockSurvivesRestart(t *testing.T) {
	dir := t.TempDir()
	emb, st := startEmbedded(t, dir)
	ctx := context.Background()
	lockBucket(ctx, t, st, "lock")
	until := time.Now().Add(time.Hour).UTC().Truncate(time.Second)
	vid := putLocked(ctx, t, st, "lock", "k", backend.Protection{LockMode: "COMPLIANCE", RetainUntil: until, LegalHold: "ON"})
	storetest.Must(t, emb.Close())
	_, st = startEmbedded(t, dir)
	info, err := st.HeadObject(ctx, "lock", "k")
	storetest.Must(t, err)
	if info.Lock.LockMode != "COMPLIANCE" || !info.Lock.RetainUntil.Equal(until) || info.Lock.LegalHold != "ON" {
		t.Errorf("lock after a restart = %+v", info.Lock)
	}
	out, err := st.Forward(ctx, backend.RawRequest{Method: http.MethodGet, Bucket: "lock", Key: "k", Query: url.Values{"retention": {""}}})
	storetest.Must(t, err)
	if !strings.Contains(string(out.Body), "<Mode>COMPLIANCE</Mode>") {
		t.Errorf("GET ?retention = %s", out.Body)
	}
	if vid != "" {
		_, err = st.DeleteObjectVersion(backend.WithBypassGovernance(ctx), backend.DeleteInput{Bucket: "lock", Key: "k", VersionID: vid})
		storetest.WantCode(t, err, "AccessDenied", 403)
	} else if err := st.DeleteObject(ctx, "lock", "k"); err == nil {
		// A store without versions would lose the object to a delete.
		t.Error("a held object was deleted")
	}
	if _, err := st.HeadObject(ctx, "lock", "k"); err != nil {
		t.Errorf("the locked object is gone: %v", err)
	}
}
