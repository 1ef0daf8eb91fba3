package e2e

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/s3seal/s3seal/internal/faultproxy"
)

// TestAbortIfMatchInitiatedTimeListingFails: AbortMultipartUpload with
// x-amz-if-match-initiated-time fails closed. s3seal checks the time by
// listing the uploads (s3api's abortCondition); when that listing fails
// (here: AccessDenied for every ListMultipartUploads) the abort fails and
// the upload stays, instead of an abort whose precondition was never
// checked destroying it.
func TestAbortIfMatchInitiatedTimeListingFails(t *testing.T) {
	p, fp := startFaultyOn(t, "moto")
	c := sdkFor(t, p)
	mustCreateBucket(t, c, "abort-cond")
	cr, err := c.CreateMultipartUpload(ctxT(t), &s3.CreateMultipartUploadInput{Bucket: aws.String("abort-cond"), Key: aws.String("k")})
	if err != nil {
		t.Fatal(err)
	}
	fp.Inject(faultproxy.Rule{Op: faultproxy.ListMultipartUploads, Fault: faultproxy.ErrorInBody, Code: "AccessDenied", Message: "Access Denied"})
	wrong := time.Date(2001, 1, 1, 0, 0, 0, 0, time.UTC) // not the upload's initiation time
	_, err = c.AbortMultipartUpload(ctxT(t), &s3.AbortMultipartUploadInput{Bucket: aws.String("abort-cond"), Key: aws.String("k"),
		UploadId: cr.UploadId, IfMatchInitiatedTime: aws.Time(wrong)})
	if err == nil {
		t.Errorf("abort with a wrong x-amz-if-match-initiated-time succeeded while the condition could not be checked")
	}
	fp.Reset()
	if _, err := c.ListParts(ctxT(t), &s3.ListPartsInput{Bucket: aws.String("abort-cond"), Key: aws.String("k"), UploadId: cr.UploadId}); err != nil {
		wantStatus(t, "upload after the refused conditional abort (want it still there)", err, http.StatusOK, "")
	}
}

// TestAbortConditionHostileListing: a hostile (or buggy) store whose
// ListMultipartUploads always answers IsTruncated with the same
// NextKeyMarker must not keep s3seal's AbortMultipartUpload
// x-amz-if-match-initiated-time check (s3api's abortCondition) listing for
// as long as the client waits: one client request (here with a 3 s
// timeout) makes a bounded number of backend requests.
func TestAbortConditionHostileListing(t *testing.T) {
	m := startMoto(t)
	target, _ := url.Parse(m.Endpoint)
	rp := httputil.NewSingleHostReverseProxy(target)
	var lists atomic.Int64
	hostile := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet && r.URL.Query().Has("uploads") {
			lists.Add(1)
			w.Header().Set("Content-Type", "application/xml")
			w.Write([]byte(`<?xml version="1.0" encoding="UTF-8"?><ListMultipartUploadsResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/">` +
				`<Bucket>abort-loop</Bucket><KeyMarker></KeyMarker><UploadIdMarker></UploadIdMarker><NextKeyMarker>k</NextKeyMarker>` +
				`<NextUploadIdMarker>x</NextUploadIdMarker><MaxUploads>1000</MaxUploads><IsTruncated>true</IsTruncated></ListMultipartUploadsResult>`))
			return
		}
		rp.ServeHTTP(w, r)
	}))
	t.Cleanup(hostile.Close)
	_, c := startWithBucket(t, sealOpts{Backend: &motoServer{Endpoint: hostile.URL}, Args: fastRetries}, mustCreateBucket, "abort-loop")
	cr, err := c.CreateMultipartUpload(ctxT(t), &s3.CreateMultipartUploadInput{Bucket: aws.String("abort-loop"), Key: aws.String("k")})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	start := time.Now()
	_, err = c.AbortMultipartUpload(ctx, &s3.AbortMultipartUploadInput{Bucket: aws.String("abort-loop"), Key: aws.String("k"),
		UploadId: cr.UploadId, IfMatchInitiatedTime: aws.Time(time.Now().Add(-time.Hour))})
	n := lists.Load()
	t.Logf("abort: %v after %v; backend ListMultipartUploads requests: %d", err, time.Since(start).Round(time.Millisecond), n)
	if n > 100 {
		t.Errorf("one AbortMultipartUpload made %d backend listings (no bound, no progress check)", n)
	}
}
