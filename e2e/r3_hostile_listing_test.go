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
)

// R3 FINDING (fixed; this test now guards it on the current code): a hostile (or
// buggy) store whose ListMultipartUploads always answers IsTruncated with
// the same NextKeyMarker keeps s3seal's AbortMultipartUpload
// x-amz-if-match-initiated-time check (s3api/mp_args.go abortCondition,
// `for {}` with no bound and no progress check) listing for as long as
// the client waits: one client request, an unbounded number of backend
// requests. Here: a 3 s client timeout.
func TestR3AbortConditionLoopsOnHostileListing(t *testing.T) {
	m := startMoto(t)
	target, _ := url.Parse(m.Endpoint)
	rp := httputil.NewSingleHostReverseProxy(target)
	var lists atomic.Int64
	hostile := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet && r.URL.Query().Has("uploads") {
			lists.Add(1)
			w.Header().Set("Content-Type", "application/xml")
			w.Write([]byte(`<?xml version="1.0" encoding="UTF-8"?><ListMultipartUploadsResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/">` +
				`<Bucket>r3loop</Bucket><KeyMarker></KeyMarker><UploadIdMarker></UploadIdMarker><NextKeyMarker>k</NextKeyMarker>` +
				`<NextUploadIdMarker>x</NextUploadIdMarker><MaxUploads>1000</MaxUploads><IsTruncated>true</IsTruncated></ListMultipartUploadsResult>`))
			return
		}
		rp.ServeHTTP(w, r)
	}))
	t.Cleanup(hostile.Close)
	p := startS3seal(t, sealOpts{Backend: &motoServer{Endpoint: hostile.URL}, Args: fastRetries})
	c := sdkFor(t, p)
	mustCreateBucket(t, c, "r3loop")
	cr, err := c.CreateMultipartUpload(ctxT(t), &s3.CreateMultipartUploadInput{Bucket: aws.String("r3loop"), Key: aws.String("k")})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	start := time.Now()
	_, err = c.AbortMultipartUpload(ctx, &s3.AbortMultipartUploadInput{Bucket: aws.String("r3loop"), Key: aws.String("k"),
		UploadId: cr.UploadId, IfMatchInitiatedTime: aws.Time(time.Now().Add(-time.Hour))})
	n := lists.Load()
	t.Logf("abort: %v after %v; backend ListMultipartUploads requests: %d", err, time.Since(start).Round(time.Millisecond), n)
	if n > 100 {
		t.Errorf("one AbortMultipartUpload made %d backend listings (no bound, no progress check)", n)
	}
}
