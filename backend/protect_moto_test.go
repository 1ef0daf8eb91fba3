package backend

import (
	"bytes"
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/s3seal/s3seal/internal/moto"
)

// A bucket with Object Lock on moto: Protection reaches the object (PUT
// and multipart), the lock holds against this very credential, the
// governance bypass passes on, and Forward reads and writes sub-resources.
func TestMotoObjectLock(t *testing.T) {
	endpoint := moto.Start(t)
	st, err := NewS3(S3Config{Endpoint: endpoint, AccessKey: "test", SecretKey: "test", PathStyle: true})
	must(t, err)
	ctx := context.Background()
	_, err = st.Forward(ctx, RawRequest{Method: http.MethodPut, Bucket: "locked", Query: url.Values{},
		Header: http.Header{"X-Amz-Bucket-Object-Lock-Enabled": {"true"}}})
	must(t, err)

	until := time.Now().Add(time.Hour).UTC().Truncate(time.Second)
	_, err = st.PutObject(ctx, PutInput{Bucket: "locked", Key: "gov", Body: bytes.NewReader([]byte("x")), Size: 1,
		Protect: Protection{LockMode: "GOVERNANCE", RetainUntil: until, Tagging: "a=1&b=two"}})
	must(t, err)
	// moto has no GET ?retention (it answers the object): HEAD shows it.
	head, err := st.api.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String("locked"), Key: aws.String("gov")})
	must(t, err)
	if head.ObjectLockMode != "GOVERNANCE" || !aws.ToTime(head.ObjectLockRetainUntilDate).Equal(until) {
		t.Errorf("lock = %s until %v, want GOVERNANCE until %v", head.ObjectLockMode, head.ObjectLockRetainUntilDate, until)
	}
	tags, err := st.Forward(ctx, RawRequest{Method: http.MethodGet, Bucket: "locked", Key: "gov", Query: url.Values{"tagging": {""}}})
	must(t, err)
	if !strings.Contains(string(tags.Body), "<Value>two</Value>") {
		t.Errorf("tags = %s", tags.Body)
	}

	version := func(key string) string {
		out, err := st.api.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String("locked"), Key: aws.String(key)})
		must(t, err)
		return aws.ToString(out.VersionId)
	}
	deleteVersion := func(ctx context.Context, key, v string) error {
		_, err := st.api.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: aws.String("locked"), Key: aws.String(key), VersionId: &v}, bypassHeader(ctx))
		return wrapErr("DeleteObject", err)
	}
	gv := version("gov")
	if err := deleteVersion(ctx, "gov", gv); ErrorCode(err) != "AccessDenied" {
		t.Fatalf("delete of a locked version without bypass: %v, want AccessDenied", err)
	}
	if err := deleteVersion(WithBypassGovernance(ctx), "gov", gv); err != nil {
		t.Fatalf("delete with the governance bypass: %v", err)
	}

	// Tags given at CreateMultipartUpload reach the completed object (so
	// would its lock on AWS; moto drops lock headers of multipart uploads).
	id, err := st.CreateMultipartUpload(ctx, CreateMultipartInput{Bucket: "locked", Key: "mp", Protect: Protection{Tagging: "k=v"}})
	must(t, err)
	etag, err := st.UploadPart(ctx, UploadPartInput{Bucket: "locked", Key: "mp", UploadID: id, PartNumber: 1,
		Body: bytes.NewReader([]byte("part")), Size: 4})
	must(t, err)
	_, err = st.CompleteMultipartUpload(ctx, CompleteMultipartInput{Bucket: "locked", Key: "mp", UploadID: id,
		Parts: []CompletedPart{{PartNumber: 1, ETag: etag}}})
	must(t, err)
	mtags, err := st.Forward(ctx, RawRequest{Method: http.MethodGet, Bucket: "locked", Key: "mp", Query: url.Values{"tagging": {""}}})
	must(t, err)
	if !strings.Contains(string(mtags.Body), "<Key>k</Key>") {
		t.Errorf("tags of the completed upload = %s", mtags.Body)
	}

	// A legal hold blocks deletion even with the bypass.
	_, err = st.PutObject(ctx, PutInput{Bucket: "locked", Key: "held", Body: bytes.NewReader([]byte("x")), Size: 1,
		Protect: Protection{LegalHold: "ON"}})
	must(t, err)
	hold, err := st.Forward(ctx, RawRequest{Method: http.MethodGet, Bucket: "locked", Key: "held", Query: url.Values{"legal-hold": {""}}})
	must(t, err)
	if !strings.Contains(string(hold.Body), "<Status>ON</Status>") {
		t.Fatalf("legal hold = %s", hold.Body)
	}
	if err := deleteVersion(WithBypassGovernance(ctx), "held", version("held")); ErrorCode(err) != "AccessDenied" {
		t.Fatalf("delete of a version under legal hold: %v, want AccessDenied", err)
	}

	// Backend errors keep their code.
	_, err = st.Forward(ctx, RawRequest{Method: http.MethodGet, Bucket: "locked", Query: url.Values{"policy": {""}}})
	if ErrorCode(err) != "NoSuchBucketPolicy" {
		t.Fatalf("policy of a bucket without one: %v", err)
	}
}

// DeleteVersions in a locked bucket on moto: each refused version gets
// the store's AccessDenied (moto names only the key of a refusal), the
// others are deleted; with the governance bypass all go.
func TestMotoDeleteVersionsLocked(t *testing.T) {
	endpoint := moto.Start(t)
	st, err := NewS3(S3Config{Endpoint: endpoint, AccessKey: "test", SecretKey: "test", PathStyle: true})
	must(t, err)
	ctx := context.Background()
	_, err = st.Forward(ctx, RawRequest{Method: http.MethodPut, Bucket: "locked", Query: url.Values{},
		Header: http.Header{"X-Amz-Bucket-Object-Lock-Enabled": {"true"}}})
	must(t, err)
	until := time.Now().Add(time.Hour).UTC().Truncate(time.Second)
	put := func(key string, p Protection) ObjectID {
		out, err := st.PutObject(ctx, PutInput{Bucket: "locked", Key: key, Body: bytes.NewReader([]byte("x")), Size: 1, Protect: p})
		must(t, err)
		return ObjectID{Key: key, VersionID: out.VersionID}
	}
	gov := Protection{LockMode: "GOVERNANCE", RetainUntil: until}
	g1, g2, free := put("g", gov), put("g", gov), put("free", Protection{})
	res, err := st.DeleteVersions(ctx, "locked", []ObjectID{g1, g2, free})
	must(t, err)
	for i, want := range []ObjectID{g1, g2, free} {
		code := "AccessDenied"
		if want == free {
			code = ""
		}
		if res[i].Key != want.Key || res[i].VersionID != want.VersionID || res[i].Code != code {
			t.Errorf("entry %d without the bypass: %+v, want %s?versionId=%s %q", i, res[i], want.Key, want.VersionID, code)
		}
	}
	res, err = st.DeleteVersions(WithBypassGovernance(ctx), "locked", []ObjectID{g1, g2})
	must(t, err)
	for i, want := range []ObjectID{g1, g2} {
		if res[i].VersionID != want.VersionID || res[i].Code != "" {
			t.Errorf("entry %d with the bypass: %+v", i, res[i])
		}
	}
}
