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

func lockBucket(ctx context.Context, t *testing.T, st *backend.S3, bucket string) {
	t.Helper()
	_, err := st.Forward(ctx, backend.RawRequest{Method: http.MethodPut, Bucket: bucket, Query: url.Values{},
		Header: http.Header{"X-Amz-Bucket-Object-Lock-Enabled": {"true"}}})
	storetest.Must(t, err)
}

func putLocked(ctx context.Context, t *testing.T, st *backend.S3, bucket, key string, p backend.Protection) string {
	t.Helper()
	out, err := st.PutObject(ctx, backend.PutInput{Bucket: bucket, Key: key, Body: bytes.NewReader([]byte("data")), Size: 4, Protect: p})
	storetest.Must(t, err)
	return out.VersionID
}

func wantErr(t *testing.T, what string, err error, code string, status int) {
	t.Helper()
	var e *backend.Error
	if !asErr(err, &e) || e.Code != code || e.StatusCode != status {
		t.Errorf("%s: %v, want %s %d", what, err, code, status)
	}
}

// A version under retention or legal hold cannot be deleted by anyone
// (s3seal's own credential is the only one the store knows); a delete
// marker, an overwrite and a GOVERNANCE delete with the bypass can.
func TestEmbeddedLockEnforced(t *testing.T) {
	st, stub := startAttrs(t, t.TempDir(), false)
	ctx := context.Background()
	lockBucket(ctx, t, st, "lk")
	if !stub.buckets["lk"].versioned {
		t.Fatal("a bucket created with Object Lock did not get versioning")
	}
	until := time.Now().Add(time.Hour).UTC().Truncate(time.Second)
	comp := putLocked(ctx, t, st, "lk", "k", backend.Protection{LockMode: "COMPLIANCE", RetainUntil: until})
	info, err := st.HeadObjectVersion(ctx, "lk", "k", comp)
	storetest.Must(t, err)
	if info.Lock.LockMode != "COMPLIANCE" || !info.Lock.RetainUntil.Equal(until) {
		t.Errorf("HEAD lock = %+v", info.Lock)
	}
	_, err = st.DeleteObjectVersion(backend.WithBypassGovernance(ctx), backend.DeleteInput{Bucket: "lk", Key: "k", VersionID: comp})
	wantErr(t, "delete of a COMPLIANCE version", err, "AccessDenied", 403)
	if _, ok := stub.find(stub.buckets["lk"], "k", comp); !ok {
		t.Fatal("the refused delete deleted the version")
	}
	// A retention cannot be shortened or turned into GOVERNANCE.
	for _, body := range []string{
		"<Retention><Mode>COMPLIANCE</Mode><RetainUntilDate>" + until.Add(-time.Minute).Format(time.RFC3339) + "</RetainUntilDate></Retention>",
		"<Retention><Mode>GOVERNANCE</Mode><RetainUntilDate>" + until.Format(time.RFC3339) + "</RetainUntilDate></Retention>",
		"<Retention/>"} {
		_, err = st.Forward(backend.WithBypassGovernance(ctx), backend.RawRequest{Method: http.MethodPut, Bucket: "lk", Key: "k",
			Query: url.Values{"retention": {""}, "versionId": {comp}}, Header: http.Header{bypassGovernance: {"true"}}, Body: []byte(body)})
		wantErr(t, "weakening a COMPLIANCE retention "+body, err, "AccessDenied", 403)
	}
	// An overwrite and a delete marker are allowed.
	putLocked(ctx, t, st, "lk", "k", backend.Protection{})
	storetest.Must(t, st.DeleteObject(ctx, "lk", "k"))

	gov := putLocked(ctx, t, st, "lk", "g", backend.Protection{LockMode: "GOVERNANCE", RetainUntil: until})
	_, err = st.DeleteObjectVersion(ctx, backend.DeleteInput{Bucket: "lk", Key: "g", VersionID: gov})
	wantErr(t, "delete of a GOVERNANCE version without the bypass", err, "AccessDenied", 403)
	_, err = st.DeleteObjectVersion(backend.WithBypassGovernance(ctx), backend.DeleteInput{Bucket: "lk", Key: "g", VersionID: gov})
	storetest.Must(t, err)

	held := putLocked(ctx, t, st, "lk", "h", backend.Protection{LegalHold: "ON"})
	_, err = st.DeleteObjectVersion(backend.WithBypassGovernance(ctx), backend.DeleteInput{Bucket: "lk", Key: "h", VersionID: held})
	wantErr(t, "delete under legal hold", err, "AccessDenied", 403)
	free := putLocked(ctx, t, st, "lk", "f", backend.Protection{})
	res, err := st.DeleteVersions(backend.WithBypassGovernance(ctx), "lk", []backend.ObjectID{{Key: "h", VersionID: held}, {Key: "k", VersionID: comp}, {Key: "f", VersionID: free}})
	storetest.Must(t, err)
	codes := map[string]string{}
	for _, r := range res {
		codes[r.Key] = r.Code
	}
	if codes["h"] != "AccessDenied" || codes["k"] != "AccessDenied" || codes["f"] != "" || len(res) != 3 {
		t.Errorf("DeleteObjects results = %+v", res)
	}
	if _, ok := stub.find(stub.buckets["lk"], "f", free); ok {
		t.Error("DeleteObjects did not delete the unlocked version")
	}
	_, err = st.Forward(ctx, backend.RawRequest{Method: http.MethodPut, Bucket: "lk", Key: "h",
		Query: url.Values{"legal-hold": {""}, "versionId": {held}}, Body: []byte("<LegalHold><Status>OFF</Status></LegalHold>")})
	storetest.Must(t, err)
	_, err = st.DeleteObjectVersion(ctx, backend.DeleteInput{Bucket: "lk", Key: "h", VersionID: held})
	storetest.Must(t, err)
}

// Without versioning (the embedded store before it kept versions), an
// overwrite or a delete would destroy a locked object: refused.
func TestEmbeddedLockWithoutVersions(t *testing.T) {
	st, _ := startAttrs(t, t.TempDir(), true)
	ctx := context.Background()
	lockBucket(ctx, t, st, "lk")
	putLocked(ctx, t, st, "lk", "k", backend.Protection{LegalHold: "ON"})
	_, err := st.PutObject(ctx, backend.PutInput{Bucket: "lk", Key: "k", Body: bytes.NewReader([]byte("new")), Size: 3})
	wantErr(t, "overwrite of a held null version", err, "AccessDenied", 403)
	wantErr(t, "delete of a held null version", st.DeleteObject(ctx, "lk", "k"), "AccessDenied", 403)
	res, err := st.DeleteObjects(ctx, "lk", []string{"k"})
	storetest.Must(t, err)
	if len(res) != 1 || res[0].Code != "AccessDenied" {
		t.Errorf("DeleteObjects of a held null version: %+v", res)
	}
}

// Object Lock configuration: S3's checks, its errors, and the default
// retention on new versions.
func TestEmbeddedLockConfiguration(t *testing.T) {
	st, _ := startAttrs(t, t.TempDir(), false)
	ctx := context.Background()
	storetest.Must(t, st.CreateBucket(ctx, "plain"))
	lockBucket(ctx, t, st, "lk")
	putConf := func(bucket, body string) error {
		_, err := st.Forward(ctx, backend.RawRequest{Method: http.MethodPut, Bucket: bucket, Query: url.Values{"object-lock": {""}}, Body: []byte(body)})
		return err
	}
	conf := func(mode, period string) string {
		return "<ObjectLockConfiguration><ObjectLockEnabled>Enabled</ObjectLockEnabled><Rule><DefaultRetention><Mode>" + mode +
			"</Mode>" + period + "</DefaultRetention></Rule></ObjectLockConfiguration>"
	}
	_, err := st.Forward(ctx, backend.RawRequest{Method: http.MethodGet, Bucket: "plain", Query: url.Values{"object-lock": {""}}})
	wantErr(t, "GET on a bucket without lock", err, "ObjectLockConfigurationNotFoundError", 404)
	wantErr(t, "PUT on a bucket without lock", putConf("plain", conf("GOVERNANCE", "<Days>1</Days>")), "InvalidBucketState", 409)
	wantErr(t, "Days and Years", putConf("lk", conf("GOVERNANCE", "<Days>1</Days><Years>1</Years>")), "MalformedXML", 400)
	wantErr(t, "bad mode", putConf("lk", conf("governance", "<Days>1</Days>")), "MalformedXML", 400)
	wantErr(t, "zero days", putConf("lk", conf("GOVERNANCE", "<Days>0</Days>")), "InvalidRetentionPeriod", 400)
	wantErr(t, "negative years", putConf("lk", conf("GOVERNANCE", "<Years>-1</Years>")), "InvalidRetentionPeriod", 400)
	wantErr(t, "disabled", putConf("lk", strings.Replace(conf("GOVERNANCE", "<Days>1</Days>"), "Enabled", "Disabled", 1)), "MalformedXML", 400)
	_, err = st.PutObject(ctx, backend.PutInput{Bucket: "plain", Key: "k", Body: bytes.NewReader(nil), Protect: backend.Protection{LegalHold: "ON"}})
	wantErr(t, "lock headers in a bucket without lock", err, "InvalidRequest", 400)
	_, err = st.Forward(ctx, backend.RawRequest{Method: http.MethodGet, Bucket: "plain", Key: "k", Query: url.Values{"retention": {""}}})
	wantErr(t, "GET ?retention of a missing key", err, "NoSuchKey", 404)

	// A versioned bucket may take Object Lock later; then its versioning
	// cannot be suspended.
	putVersioning := func(bucket, status string) error {
		_, err := st.Forward(ctx, backend.RawRequest{Method: http.MethodPut, Bucket: bucket, Query: url.Values{"versioning": {""}},
			Body: []byte("<VersioningConfiguration><Status>" + status + "</Status></VersioningConfiguration>")})
		return err
	}
	storetest.Must(t, putVersioning("plain", "Suspended"))
	wantErr(t, "PUT on a suspended bucket", putConf("plain", conf("GOVERNANCE", "<Days>1</Days>")), "InvalidBucketState", 409)
	storetest.Must(t, putVersioning("plain", "Enabled"))
	storetest.Must(t, putConf("plain", conf("GOVERNANCE", "<Days>1</Days>")))
	wantErr(t, "suspending a bucket with lock", putVersioning("plain", "Suspended"), "InvalidBucketState", 409)
	wantErr(t, "suspending a bucket created with lock", putVersioning("lk", "Suspended"), "InvalidBucketState", 409)
	storetest.Must(t, putVersioning("lk", "Enabled"))

	storetest.Must(t, putConf("lk", conf("COMPLIANCE", "<Days>2</Days>")))
	out, err := st.Forward(ctx, backend.RawRequest{Method: http.MethodGet, Bucket: "lk", Query: url.Values{"object-lock": {""}}})
	storetest.Must(t, err)
	if !strings.Contains(string(out.Body), "<Mode>COMPLIANCE</Mode><Days>2</Days>") {
		t.Errorf("GET ?object-lock = %s", out.Body)
	}
	vid := putLocked(ctx, t, st, "lk", "d", backend.Protection{})
	info, err := st.HeadObjectVersion(ctx, "lk", "d", vid)
	storetest.Must(t, err)
	if want := time.Now().AddDate(0, 0, 2); info.Lock.LockMode != "COMPLIANCE" || info.Lock.RetainUntil.Sub(want).Abs() > time.Minute {
		t.Errorf("default retention = %+v", info.Lock)
	}
	_, err = st.Forward(ctx, backend.RawRequest{Method: http.MethodGet, Bucket: "lk", Key: "d", Query: url.Values{"legal-hold": {""}}})
	wantErr(t, "GET ?legal-hold never set", err, "NoSuchObjectLockConfiguration", 404)
	_, err = st.DeleteObjectVersion(backend.WithBypassGovernance(ctx), backend.DeleteInput{Bucket: "lk", Key: "d", VersionID: vid})
	wantErr(t, "delete under default retention", err, "AccessDenied", 403)
}

// asErr reports whether err is a *backend.Error (not wrapped) and sets e.
func asErr(err error, e **backend.Error) bool {
	x, ok := err.(*backend.Error)
	if ok {
		*e = x
	}
	return ok
}
