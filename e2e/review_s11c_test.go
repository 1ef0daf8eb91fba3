package e2e

// Review s11c (r3): the reviewer's proving tests, turned into regression
// tests of the fixes (issue 10, Object Lock rules in front of any store).

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
)

// TestReviewS11cRetentionNamespaceSmuggleMoto (fixed: the document is
// refused as MalformedXML; what s3seal forwards is what it judged). In front
// of moto (which checks no retention rule; s3seal's retentionRule is the
// only guard) a client with mere write access shortens an unexpired
// COMPLIANCE retention to the past and then deletes the locked version.
// The PutObjectRetention body carries RetainUntilDate twice: a plain one
// in the past and a namespaced one (x:RetainUntilDate) far in the future.
// Go's encoding/xml (checkRetention, retentionRule) matches by local name
// and keeps the last, so s3seal judges an extension and allows it; the
// body is forwarded untouched and moto (xmltodict, qualified names) keeps
// the plain, past date.
func TestReviewS11cRetentionNamespaceSmuggleMoto(t *testing.T) {
	m := startMoto(t)
	p := startS3seal(t, sealOpts{Backend: m})
	c := newSDKClient(t, p.Endpoint, p.AccessKey, p.SecretKey, true)
	ctx := context.Background()
	b := aws.String("vault")
	if _, err := c.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: b, ObjectLockEnabledForBucket: aws.Bool(true)}); err != nil {
		t.Fatal(err)
	}
	until := time.Now().Add(time.Hour).UTC().Truncate(time.Second)
	put, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: b, Key: aws.String("backup"), Body: strings.NewReader("precious"),
		ObjectLockMode: types.ObjectLockModeCompliance, ObjectLockRetainUntilDate: &until})
	if err != nil {
		t.Fatal(err)
	}
	vid := aws.ToString(put.VersionId)
	// Sanity: an honest shortening is refused.
	past := time.Now().Add(-time.Hour).UTC().Truncate(time.Second)
	sooner := until.Add(-30 * time.Minute)
	_, err = c.PutObjectRetention(ctx, &s3.PutObjectRetentionInput{Bucket: b, Key: aws.String("backup"), VersionId: &vid,
		Retention: &types.ObjectLockRetention{Mode: types.ObjectLockRetentionModeCompliance, RetainUntilDate: &sooner}})
	wantStatus(t, "honest shortening", err, 403, "AccessDenied")

	body := []byte(`<Retention xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><Mode>COMPLIANCE</Mode>` +
		`<RetainUntilDate>` + past.Format(time.RFC3339) + `</RetainUntilDate>` +
		`<x:RetainUntilDate xmlns:x="urn:x">2099-01-01T00:00:00Z</x:RetainUntilDate></Retention>`)
	sum := sha256.Sum256(body)
	rs := newRawSigner(t, p)
	req, _ := rs.signedPut("/vault/backup?retention=&versionId="+vid, http.Header{"Content-Type": {"application/xml"}},
		hex.EncodeToString(sum[:]), int64(len(body)), time.Now())
	r := rs.send(req, body)
	t.Logf("smuggled PutObjectRetention: %d %s", r.Status, r.Body)
	if r.Status != 400 || !strings.Contains(string(r.Body), "MalformedXML") {
		t.Errorf("smuggled PutObjectRetention answered %d %s, want 400 MalformedXML", r.Status, r.Body)
	}
	ret, err := c.GetObjectRetention(ctx, &s3.GetObjectRetentionInput{Bucket: b, Key: aws.String("backup"), VersionId: &vid})
	if err == nil {
		t.Logf("retention now: %s until %v", ret.Retention.Mode, aws.ToTime(ret.Retention.RetainUntilDate))
	}
	_, err = c.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: b, Key: aws.String("backup"), VersionId: &vid})
	if err == nil {
		if _, herr := c.HeadObject(ctx, &s3.HeadObjectInput{Bucket: b, Key: aws.String("backup"), VersionId: &vid}); herr != nil {
			t.Fatalf("COMPLIANCE version (until %v) deleted through s3seal after a smuggled retention (PUT answered %d); HEAD now: %v", until, r.Status, herr)
		}
	}
	t.Logf("delete refused as it should be: %v", err)
}

// TestReviewS11cLockedMultipartSDKRetryUnlockedMoto (fixed: a retry sets
// the lock its manifest carries, or fails, as here where the store keeps
// refusing). The
// end-to-end form of sealstore's TestReviewS11cLockedCompletionRetryUnlockedMoto
// with the real binary and the Go SDK's own retries. moto drops the lock
// of CreateMultipartUpload at completion, so s3seal sets it afterwards
// (PUT ?retention by version id); the store answers that PUT with a 500
// (every time: s3seal's own backend retries absorb a single one). s3seal
// answers the completion with an error, the client retries it (503 "Please try again"),
// the retry goes through the "completed before" recovery and the client
// gets 200: its backup version is unlocked, and deletable.
func TestReviewS11cLockedMultipartSDKRetryUnlockedMoto(t *testing.T) {
	m := startMoto(t)
	target, _ := url.Parse(m.Endpoint)
	rp := httputil.NewSingleHostReverseProxy(target)
	var failed atomic.Int32
	var refuse atomic.Bool
	refuse.Store(true)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPut && r.URL.Query().Has("retention") && !strings.HasPrefix(r.URL.Path, "/vault/.s3seal") &&
			refuse.Load() && failed.Add(1) > 0 {
			w.WriteHeader(500)
			_, _ = w.Write([]byte(`<?xml version="1.0"?><Error><Code>InternalError</Code><Message>injected</Message></Error>`))
			return
		}
		r.Host = target.Host
		rp.ServeHTTP(w, r)
	})}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	p := startS3seal(t, sealOpts{Backend: &motoServer{Endpoint: "http://" + ln.Addr().String()}})
	c := newSDKClient(t, p.Endpoint, p.AccessKey, p.SecretKey, true)
	ctx := context.Background()
	b, k := aws.String("vault"), aws.String("backup")
	if _, err := c.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: b, ObjectLockEnabledForBucket: aws.Bool(true)}); err != nil {
		t.Fatal(err)
	}
	until := time.Now().Add(time.Hour).UTC().Truncate(time.Second)
	up, err := c.CreateMultipartUpload(ctx, &s3.CreateMultipartUploadInput{Bucket: b, Key: k,
		ObjectLockMode: types.ObjectLockModeCompliance, ObjectLockRetainUntilDate: &until})
	if err != nil {
		t.Fatal(err)
	}
	part, err := c.UploadPart(ctx, &s3.UploadPartInput{Bucket: b, Key: k, UploadId: up.UploadId, PartNumber: aws.Int32(1), Body: strings.NewReader("part")})
	if err != nil {
		t.Fatal(err)
	}
	complete := func() (*s3.CompleteMultipartUploadOutput, error) {
		return c.CompleteMultipartUpload(ctx, &s3.CompleteMultipartUploadInput{Bucket: b, Key: k, UploadId: up.UploadId,
			MultipartUpload: &types.CompletedMultipartUpload{Parts: []types.CompletedPart{{PartNumber: aws.Int32(1), ETag: part.ETag}}}})
	}
	_, err = complete()
	if err == nil {
		t.Fatal("first completion answered success though its lock step failed")
	}
	// newSDKClient has retries off; the SDK's default retryer (and the
	// aws CLI, rclone, restic) retries a 500 like this one.
	t.Logf("first completion: %v (retrying, as every client's default retryer does)", err)
	if _, err = complete(); err == nil {
		t.Fatal("retried completion answered success while the store still refuses the lock")
	}
	refuse.Store(false)
	done, err := complete()
	if err != nil {
		t.Fatalf("retried completion, the store taking the lock again: %v", err)
	}
	vid := aws.ToString(done.VersionId)
	h, err := c.HeadObject(ctx, &s3.HeadObjectInput{Bucket: b, Key: k, VersionId: &vid})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("retention PUTs failed: %d; completion OK, version %s: lock mode %q until %v", failed.Load(), vid, h.ObjectLockMode, h.ObjectLockRetainUntilDate)
	if h.ObjectLockMode != types.ObjectLockModeCompliance {
		_, derr := c.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: b, Key: k, VersionId: &vid})
		t.Fatalf("CompleteMultipartUpload answered 200 but the version has no COMPLIANCE lock; DeleteObject of it through s3seal: err=%v", derr)
	}
}

// TestReviewS11cRetentionRaceShortensMoto (fixed: retention and legal-hold
// changes of one key are serialized within the process). Two
// PutObjectRetention calls on one COMPLIANCE version at once, in front of
// moto. retentionRule judges each against a HEAD taken before either lands
// (both are extensions then) and moto applies both, last one wins: the
// client that set ten years got 200, and the version ends up retained for
// two hours. The store's answer that the PUT is delayed stands for any
// slow network; the delay is only to make the order deterministic.
func TestReviewS11cRetentionRaceShortensMoto(t *testing.T) {
	m := startMoto(t)
	target, _ := url.Parse(m.Endpoint)
	rp := httputil.NewSingleHostReverseProxy(target)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPut && r.URL.Query().Has("retention") && !strings.HasPrefix(r.URL.Path, "/vault/.s3seal") {
			body, _ := io.ReadAll(r.Body)
			if strings.Contains(string(body), "T23:59:58") { // the short one: delayed
				time.Sleep(1500 * time.Millisecond)
			}
			r.Body = io.NopCloser(bytes.NewReader(body))
		}
		r.Host = target.Host
		rp.ServeHTTP(w, r)
	})}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	p := startS3seal(t, sealOpts{Backend: &motoServer{Endpoint: "http://" + ln.Addr().String()}})
	c := newSDKClient(t, p.Endpoint, p.AccessKey, p.SecretKey, true)
	ctx := context.Background()
	b, k := aws.String("vault"), aws.String("backup")
	if _, err := c.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: b, ObjectLockEnabledForBucket: aws.Bool(true)}); err != nil {
		t.Fatal(err)
	}
	now := time.Now().UTC()
	until := now.Add(time.Hour).Truncate(time.Second)
	put, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: b, Key: k, Body: strings.NewReader("precious"),
		ObjectLockMode: types.ObjectLockModeCompliance, ObjectLockRetainUntilDate: &until})
	if err != nil {
		t.Fatal(err)
	}
	vid := aws.ToString(put.VersionId)
	short := time.Date(now.Year(), now.Month(), now.Day(), 23, 59, 58, 0, time.UTC).Add(24 * time.Hour) // ~1-2 days
	long := now.AddDate(10, 0, 0).Truncate(time.Second)
	set := func(d time.Time) error {
		_, err := c.PutObjectRetention(ctx, &s3.PutObjectRetentionInput{Bucket: b, Key: k, VersionId: &vid,
			Retention: &types.ObjectLockRetention{Mode: types.ObjectLockRetentionModeCompliance, RetainUntilDate: &d}})
		return err
	}
	errShort := make(chan error, 1)
	go func() { errShort <- set(short) }()
	time.Sleep(300 * time.Millisecond) // the short one has passed s3seal's HEAD and is on its way
	if err := set(long); err != nil {
		t.Fatalf("ten-year retention: %v", err)
	}
	if err := <-errShort; err != nil {
		t.Logf("short retention refused (right): %v", err)
	}
	ret, err := c.GetObjectRetention(ctx, &s3.GetObjectRetentionInput{Bucket: b, Key: k, VersionId: &vid})
	if err != nil {
		t.Fatal(err)
	}
	got := aws.ToTime(ret.Retention.RetainUntilDate)
	if got.Before(long) {
		t.Fatalf("both PutObjectRetention answered 200; the COMPLIANCE retention the client set to %v is now %v (shortened)", long, got)
	}
}

// TestReviewS11cDefaultRetentionMultipartMoto (fixed: the completion sets
// the bucket's default retention, on the manifest first). In front
// of moto, a bucket whose lock configuration has a default retention
// (GOVERNANCE, 1 day) locks what PutObject writes, but not what a
// multipart upload writes: moto applies the default only at PutObject and
// drops locks at completion, and s3seal's lockCompleted restores only the
// lock given at CreateMultipartUpload, never the bucket's default. Every
// large file of a backup tool (aws s3 cp, rclone, restic packs over the
// multipart threshold) is then unlocked, and a writer without the bypass
// deletes the version. Seen first with aws CLI `s3 cp` of 20 MB, then
// `s3api delete-objects` as a non-admin answering Deleted.
func TestReviewS11cDefaultRetentionMultipartMoto(t *testing.T) {
	m := startMoto(t)
	dir := t.TempDir()
	creds := writeJSON(t, dir, "creds.json", map[string]any{"credentials": []map[string]any{
		{"access_key": "admin", "secret_key": "admin-secret-key", "read": []string{"*"}, "write": []string{"*"}, "admin": true},
		{"access_key": "writer", "secret_key": "writer-secret-key", "read": []string{"*"}, "write": []string{"*"}},
	}})
	p := startS3seal(t, sealOpts{Backend: m, CredentialsFile: creds})
	admin := newSDKClient(t, p.Endpoint, "admin", "admin-secret-key", true)
	c := newSDKClient(t, p.Endpoint, "writer", "writer-secret-key", true)
	ctx := context.Background()
	b := aws.String("vault")
	if _, err := admin.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: b, ObjectLockEnabledForBucket: aws.Bool(true)}); err != nil {
		t.Fatal(err)
	}
	if _, err := admin.PutObjectLockConfiguration(ctx, &s3.PutObjectLockConfigurationInput{Bucket: b, ObjectLockConfiguration: &types.ObjectLockConfiguration{
		ObjectLockEnabled: types.ObjectLockEnabledEnabled, Rule: &types.ObjectLockRule{DefaultRetention: &types.DefaultRetention{
			Mode: types.ObjectLockRetentionModeGovernance, Days: aws.Int32(1)}}}}); err != nil {
		t.Fatal(err)
	}
	single, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: b, Key: aws.String("small"), Body: strings.NewReader("small")})
	if err != nil {
		t.Fatal(err)
	}
	if h, err := c.HeadObject(ctx, &s3.HeadObjectInput{Bucket: b, Key: aws.String("small"), VersionId: single.VersionId}); err != nil || h.ObjectLockMode != types.ObjectLockModeGovernance {
		t.Fatalf("PutObject did not get the default retention: %v %v", h, err)
	}
	k := aws.String("pack")
	up, err := c.CreateMultipartUpload(ctx, &s3.CreateMultipartUploadInput{Bucket: b, Key: k})
	if err != nil {
		t.Fatal(err)
	}
	part, err := c.UploadPart(ctx, &s3.UploadPartInput{Bucket: b, Key: k, UploadId: up.UploadId, PartNumber: aws.Int32(1), Body: strings.NewReader("part")})
	if err != nil {
		t.Fatal(err)
	}
	done, err := c.CompleteMultipartUpload(ctx, &s3.CompleteMultipartUploadInput{Bucket: b, Key: k, UploadId: up.UploadId,
		MultipartUpload: &types.CompletedMultipartUpload{Parts: []types.CompletedPart{{PartNumber: aws.Int32(1), ETag: part.ETag}}}})
	if err != nil {
		t.Fatal(err)
	}
	h, err := c.HeadObject(ctx, &s3.HeadObjectInput{Bucket: b, Key: k, VersionId: done.VersionId})
	if err != nil {
		t.Fatal(err)
	}
	if h.ObjectLockMode != types.ObjectLockModeGovernance {
		_, derr := c.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: b, Key: k, VersionId: done.VersionId})
		t.Fatalf("multipart version in a bucket with default GOVERNANCE retention has lock mode %q; DeleteObject of it by a non-admin writer: err=%v", h.ObjectLockMode, derr)
	}
}
