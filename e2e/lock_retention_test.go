package e2e

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
)

// TestRetentionNamespacedDateMoto: a PutObjectRetention body that carries
// RetainUntilDate twice, a plain one in the past and a namespaced one
// (x:RetainUntilDate) far in the future, is refused as MalformedXML, and
// what s3seal forwards is what it judged. In front of moto (which checks
// no retention rule; s3seal's retentionRule is the only guard), Go's
// encoding/xml matches by local name and keeps the last while moto
// (xmltodict, qualified names) keeps the plain, past date: were the body
// judged one way and forwarded untouched, a client with mere write access
// could shorten an unexpired COMPLIANCE retention to the past and delete
// the locked version.
func TestRetentionNamespacedDateMoto(t *testing.T) {
	m := startMoto(t)
	p := startS3seal(t, sealOpts{Backend: m})
	c := newSDKClient(t, p.Endpoint, p.AccessKey, p.SecretKey, true)
	ctx := context.Background()
	b := aws.String("vault")
	mustCreateLockedBucket(t, c, *b)
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

// TestRetentionRaceMoto: retention and legal-hold changes of one key are
// serialized within the process. Two PutObjectRetention calls on one
// COMPLIANCE version at once, in front of moto: were each judged against a
// HEAD taken before either lands (both extensions then), moto would apply
// both, last one wins, and the client that set ten years would get 200
// for a version retained for two hours. The store's delay of the short
// PUT stands for any slow network; it only makes the order deterministic.
func TestRetentionRaceMoto(t *testing.T) {
	store := motoBehindHandler(t, startMoto(t), func(w http.ResponseWriter, r *http.Request, forward func()) {
		if r.Method == http.MethodPut && r.URL.Query().Has("retention") && !strings.HasPrefix(r.URL.Path, "/vault/.s3seal") {
			body, _ := io.ReadAll(r.Body)
			if strings.Contains(string(body), "T23:59:58") { // the short one: delayed
				time.Sleep(1500 * time.Millisecond)
			}
			r.Body = io.NopCloser(bytes.NewReader(body))
		}
		forward()
	})
	p := startS3seal(t, sealOpts{Backend: store})
	c := newSDKClient(t, p.Endpoint, p.AccessKey, p.SecretKey, true)
	ctx := context.Background()
	b, k := aws.String("vault"), aws.String("backup")
	mustCreateLockedBucket(t, c, *b)
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

// TestRetentionDateFormats: retention dates in odd but valid RFC 3339
// forms (offsets, fractions, year 9999), set through s3seal: afterwards
// the object still reads, its retention is reported, it cannot be
// shortened and a delete of the version is refused with 403 AccessDenied.
// s3seal forwards the date it judged, in UTC: moto parses only ...Z forms
// when it checks the lock, and the client's text forwarded verbatim made
// such a delete a 503 ServiceUnavailable "Please try again".
func TestRetentionDateFormats(t *testing.T) {
	for _, store := range []string{"embedded", "moto"} {
		t.Run(store, func(t *testing.T) {
			o := sealOpts{DataDir: filepath.Join(t.TempDir(), "d")}
			if store == "moto" {
				o.Backend = startMoto(t)
			}
			p := startS3seal(t, o)
			c := newSDKClient(t, p.Endpoint, p.AccessKey, p.SecretKey, true)
			ctx := context.Background()
			b := aws.String("vault")
			mustCreateLockedBucket(t, c, *b)
			rs := newRawSigner(t, p)
			for i, date := range []string{"2099-01-01T00:00:00+02:00", "2099-01-01T00:00:00.5Z", "2099-01-01T00:00:00.123456789-11:30", "9999-12-31T23:59:59Z"} {
				key := "k" + string(rune('0'+i))
				put, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: b, Key: aws.String(key), Body: strings.NewReader("data")})
				if err != nil {
					t.Fatal(err)
				}
				vid := aws.ToString(put.VersionId)
				body := []byte(`<Retention xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><Mode>COMPLIANCE</Mode><RetainUntilDate>` + date + `</RetainUntilDate></Retention>`)
				sum := sha256.Sum256(body)
				req, _ := rs.signedPut("/vault/"+key+"?retention=&versionId="+vid, http.Header{"Content-Type": {"application/xml"}}, hex.EncodeToString(sum[:]), int64(len(body)), time.Now())
				r := rs.send(req, body)
				if r.Status != 200 {
					t.Logf("%s: PUT retention %d %s", date, r.Status, r.Body)
					continue
				}
				g, err := c.GetObject(ctx, &s3.GetObjectInput{Bucket: b, Key: aws.String(key), VersionId: &vid})
				if err != nil {
					t.Errorf("%s: GET after retention: %v", date, err)
				} else {
					d, _ := io.ReadAll(g.Body)
					g.Body.Close()
					t.Logf("%s: GET ok %q mode %s until %v", date, d, g.ObjectLockMode, aws.ToTime(g.ObjectLockRetainUntilDate))
				}
				ret, err := c.GetObjectRetention(ctx, &s3.GetObjectRetentionInput{Bucket: b, Key: aws.String(key), VersionId: &vid})
				if err != nil {
					t.Errorf("%s: GetObjectRetention: %v", date, err)
				} else {
					t.Logf("%s: retention %s %v", date, ret.Retention.Mode, aws.ToTime(ret.Retention.RetainUntilDate))
				}
				sooner := time.Now().Add(time.Hour)
				_, err = c.PutObjectRetention(ctx, &s3.PutObjectRetentionInput{Bucket: b, Key: aws.String(key), VersionId: &vid,
					Retention: &types.ObjectLockRetention{Mode: types.ObjectLockRetentionModeCompliance, RetainUntilDate: &sooner}})
				if err == nil {
					t.Errorf("%s: COMPLIANCE shortened to %v", date, sooner)
				}
				_, err = c.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: b, Key: aws.String(key), VersionId: &vid})
				if err == nil {
					t.Errorf("%s: locked version deleted", date)
				} else if !strings.Contains(err.Error(), "StatusCode: 403") || !strings.Contains(err.Error(), "AccessDenied") {
					t.Errorf("%s: delete of the locked version refused with %v; want 403 AccessDenied (a 503 \"Please try again\" makes clients retry a delete that can never succeed)", date, err)
				}
			}
		})
	}
}

// TestDefaultRetentionCopyAndMissingVersionMoto: in front of moto with a
// default retention, a CopyObject's new version gets the default; a
// PutObjectRetention naming a version that does not exist is NoSuchVersion
// (404), answered from s3seal's own HEAD (passed on "for the store to name
// what is missing", moto answers it with a 500, and the client would get
// 503 "Please try again" after s3seal's retries).
func TestDefaultRetentionCopyAndMissingVersionMoto(t *testing.T) {
	m := startMoto(t)
	creds := writeJSON(t, t.TempDir(), "creds.json", map[string]any{"credentials": []map[string]any{
		{"access_key": "admin", "secret_key": "admin-secret-key", "read": []string{"*"}, "write": []string{"*"}, "admin": true}}})
	p := startS3seal(t, sealOpts{Backend: m, CredentialsFile: creds})
	c := newSDKClient(t, p.Endpoint, "admin", "admin-secret-key", true)
	ctx := context.Background()
	b := aws.String("vault")
	mustCreateLockedBucket(t, c, *b)
	if _, err := c.PutObjectLockConfiguration(ctx, &s3.PutObjectLockConfigurationInput{Bucket: b, ObjectLockConfiguration: &types.ObjectLockConfiguration{
		ObjectLockEnabled: types.ObjectLockEnabledEnabled, Rule: &types.ObjectLockRule{DefaultRetention: &types.DefaultRetention{
			Mode: types.ObjectLockRetentionModeGovernance, Days: aws.Int32(1)}}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: b, Key: aws.String("src"), Body: strings.NewReader("small")}); err != nil {
		t.Fatal(err)
	}
	cp, err := c.CopyObject(ctx, &s3.CopyObjectInput{Bucket: b, Key: aws.String("dst"), CopySource: aws.String("vault/src")})
	if err != nil {
		t.Fatal(err)
	}
	h, err := c.HeadObject(ctx, &s3.HeadObjectInput{Bucket: b, Key: aws.String("dst"), VersionId: cp.VersionId})
	if err != nil || h.ObjectLockMode != types.ObjectLockModeGovernance {
		t.Errorf("copy's version lock %q, %v; want the default GOVERNANCE", h.ObjectLockMode, err)
	}
	until := time.Now().Add(48 * time.Hour)
	_, err = c.PutObjectRetention(ctx, &s3.PutObjectRetentionInput{Bucket: b, Key: aws.String("dst"), VersionId: aws.String("00000000-0000-0000-0000-000000000000"),
		Retention: &types.ObjectLockRetention{Mode: types.ObjectLockRetentionModeGovernance, RetainUntilDate: &until}})
	if err == nil || !strings.Contains(err.Error(), "StatusCode: 404") || !strings.Contains(err.Error(), "NoSuchVersion") {
		t.Errorf("PutObjectRetention of a missing version: %v; want 404 NoSuchVersion", err)
	}
}
