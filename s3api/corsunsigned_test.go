package s3api

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"

	"github.com/s3seal/s3seal/backend"
)

// The CORS paths an unsigned request reaches (preflights, and requests
// with an Origin header before authentication): what they cost the
// store and what they show of it.

// blockingCORSForwarder answers GET ?cors after a delay, counting calls and
// the most that were in flight at once.
type blockingCORSForwarder struct {
	calls, inFlight, peak atomic.Int64
	delay                 time.Duration
	doc                   []byte
}

func (f *blockingCORSForwarder) Forward(ctx context.Context, in backend.RawRequest) (*backend.RawResponse, error) {
	f.calls.Add(1)
	n := f.inFlight.Add(1)
	defer f.inFlight.Add(-1)
	for {
		p := f.peak.Load()
		if n <= p || f.peak.CompareAndSwap(p, n) {
			break
		}
	}
	time.Sleep(f.delay)
	if f.doc == nil {
		return nil, &backend.Error{Code: "NoSuchCORSConfiguration", StatusCode: 404}
	}
	return &backend.RawResponse{StatusCode: 200, Header: http.Header{}, Body: f.doc}, nil
}

// A request carrying an Origin header, and a preflight, may make s3seal
// read the bucket's CORS rules from the object store before any
// authentication: an anonymous client cannot drive one backend request
// per request, nor more at once than MaxInFlight (distinct bucket names
// would defeat the cache).
func TestUnsignedCORSStoreReadsBounded(t *testing.T) {
	fw := &blockingCORSForwarder{delay: 300 * time.Millisecond}
	creds := Credentials{"admin": {AccessKey: "admin", SecretKey: "as", Read: []string{"*"}, Write: []string{"*"}, Admin: true}}
	srv := newTestServerFw(t, Config{Credentials: creds, MaxInFlight: 1, MaxInFlightPerKey: 1}, fw)
	const n = 40
	var wg sync.WaitGroup
	statuses := make([]int, n)
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			var req *http.Request
			if i%2 == 0 { // preflight
				req, _ = http.NewRequest(http.MethodOptions, fmt.Sprintf("%s/bucket-%d/k", srv.URL, i), nil)
				req.Header.Set("Access-Control-Request-Method", "GET")
			} else { // plain unsigned GET: refused AccessDenied, but only after the fetch
				req, _ = http.NewRequest(http.MethodGet, fmt.Sprintf("%s/bucket-%d/k", srv.URL, i), nil)
			}
			req.Header.Set("Origin", "http://evil.example")
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Error(err)
				return
			}
			resp.Body.Close()
			statuses[i] = resp.StatusCode
		}(i)
	}
	wg.Wait()
	t.Logf("statuses %v; backend ?cors calls %d, peak concurrent %d (MaxInFlight 1)", statuses, fw.calls.Load(), fw.peak.Load())
	// A preflight carries no signature by design, so it may read its bucket's rules, but never more at once than
	// MaxInFlight, and an unsigned plain request reads none.
	if fw.calls.Load() > n/2 || fw.peak.Load() > 1 {
		t.Errorf("%d anonymous requests caused %d backend requests before authentication, up to %d at once (MaxInFlight is 1)",
			n, fw.calls.Load(), fw.peak.Load())
	}
}

// The CORS rules cache is bounded by bucket count (10000) and keeps no
// document over S3's 64 KiB limit, though the store's ?cors answer may be
// up to 4 MiB (backend/raw.go maxRawBody): anonymous preflights for
// distinct bucket names do not make s3seal keep one large document per
// name.
func TestCORSCacheBoundedBySize(t *testing.T) {
	var b strings.Builder
	b.WriteString("<CORSConfiguration>")
	for b.Len() < 1<<20 { // 1 MiB of rules (4 MiB are accepted from the store)
		b.WriteString("<CORSRule><AllowedOrigin>http://o.example</AllowedOrigin><AllowedMethod>GET</AllowedMethod></CORSRule>")
	}
	b.WriteString("</CORSConfiguration>")
	fw := &blockingCORSForwarder{doc: []byte(b.String())}
	creds := Credentials{"admin": {AccessKey: "admin", SecretKey: "as", Read: []string{"*"}, Write: []string{"*"}, Admin: true}}
	srv := newTestServerFw(t, Config{Credentials: creds}, fw)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	const n = 150
	for i := 0; i < n; i++ {
		req, _ := http.NewRequest(http.MethodOptions, fmt.Sprintf("%s/b%d", srv.URL, i), nil)
		req.Header.Set("Origin", "http://nomatch.example")
		req.Header.Set("Access-Control-Request-Method", "GET")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	grew := int64(after.HeapInuse) - int64(before.HeapInuse)
	t.Logf("%d anonymous preflights: heap in use grew by %d MiB", n, grew>>20)
	if grew > 64<<20 {
		t.Errorf("%d anonymous preflights pinned %d MiB of CORS rules in the cache (bound is 10000 buckets, no byte bound)", n, grew>>20)
	}
}

// s3seal scopes credentials to buckets (ListBuckets hides those a
// credential may not read; a request to one is AccessDenied): an anonymous
// preflight for a bucket no credential is granted neither tells one of the
// object store that exists from one that does not, nor returns its rules
// (allowed origins, methods, max-age).
func TestPreflightOutsideCredentialScope(t *testing.T) {
	fw := &docForwarder{docs: map[string][]byte{"cors": []byte(`<CORSConfiguration><CORSRule><AllowedOrigin>http://internal.corp</AllowedOrigin>` +
		`<AllowedMethod>PUT</AllowedMethod><MaxAgeSeconds>77</MaxAgeSeconds></CORSRule></CORSConfiguration>`)}}
	creds := Credentials{"u": {AccessKey: "u", SecretKey: "us", Read: []string{"public"}, Write: []string{"public"}}}
	srv := newTestServerFw(t, Config{Credentials: creds}, fw)
	exists := preflightReq(t, srv.URL+"/other-tenant-bucket/k", "http://internal.corp", "PUT", "")
	missing := preflightReq(t, srv.URL+"/missing/k", "http://internal.corp", "PUT", "")
	t.Logf("out-of-scope bucket: %+v; missing bucket: %+v", exists, missing)
	if exists.status != missing.status || exists.origin != "" {
		t.Errorf("anonymous preflight distinguishes an out-of-scope bucket (%d, origin %q, methods %q, max-age %q) from a missing one (%d)",
			exists.status, exists.origin, exists.methods, exists.maxAge, missing.status)
	}
}

type errCORSForwarder struct{ err error }

func (f errCORSForwarder) Forward(context.Context, backend.RawRequest) (*backend.RawResponse, error) {
	return nil, f.err
}

// An anonymous preflight does not show the object store's own words when
// it refuses to read ?cors (e.g. backend credentials without
// s3:GetBucketCORS).
func TestPreflightHidesStoreError(t *testing.T) {
	secret := "User: arn:aws:iam::123456789012:user/s3seal-backend is not authorized to perform: s3:GetBucketCORS"
	for _, e := range []error{
		&backend.Error{Code: "AccessDenied", StatusCode: 403, Message: secret},
		&backend.Error{Code: "InternalError", StatusCode: 500, Message: secret},
		fmt.Errorf("dial tcp 10.1.2.3:9000: connect: connection refused"),
	} {
		creds := Credentials{"u": {AccessKey: "u", SecretKey: "us", Read: []string{"*"}, Write: []string{"*"}}}
		srv := newTestServerFw(t, Config{Credentials: creds}, errCORSForwarder{e})
		req, _ := http.NewRequest(http.MethodOptions, srv.URL+"/bkt/k", nil)
		req.Header.Set("Origin", "http://o")
		req.Header.Set("Access-Control-Request-Method", "GET")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var body strings.Builder
		_, _ = io.Copy(&body, resp.Body)
		resp.Body.Close()
		t.Logf("store error %v -> anonymous sees %d %s", e, resp.StatusCode, body.String())
		if strings.Contains(body.String(), "123456789012") || strings.Contains(body.String(), "10.1.2.3") {
			t.Errorf("anonymous preflight shows the object store's own error text: %s", body.String())
		}
	}
}

// deniedForwarder: a store that refuses GET ?cors with AWS's wording,
// which names the store's account and the identity s3seal uses.
type deniedForwarder struct{ gets int }

const storeSecretWords = "User: arn:aws:iam::123456789012:user/s3seal-backend is not authorized to perform: s3:GetBucketCORS"

func (f *deniedForwarder) Forward(_ context.Context, in backend.RawRequest) (*backend.RawResponse, error) {
	f.gets++
	return nil, &backend.Error{Code: "AccessDenied", StatusCode: 403, Message: storeSecretWords}
}

// The unsigned CORS preflight does not hand the
// store's AccessDenied words (its account, s3seal's backend identity) to
// an anonymous client. Logged: a store refusal is not cached, so each
// anonymous OPTIONS is one backend GET ?cors (preflight takes no slot).
func TestPreflightHidesStoreAccessDenied(t *testing.T) {
	fw := &deniedForwarder{}
	_, url := adminClient(t, fw)
	for range 5 {
		req, _ := http.NewRequest(http.MethodOptions, url+"/bkt/obj", nil)
		req.Header.Set("Origin", "http://evil.example")
		req.Header.Set("Access-Control-Request-Method", "GET")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		t.Logf("status %d body %s", resp.StatusCode, body)
		if strings.Contains(string(body), "123456789012") || strings.Contains(string(body), "s3seal-backend") {
			t.Errorf("anonymous preflight got the store's words (status %d): %s", resp.StatusCode, body)
			break
		}
	}
	t.Logf("backend GET ?cors requests for 5 anonymous preflights: %d", fw.gets)
}

// Anonymous CORS preflights are not served with a store round trip each,
// although distinct bucket names (or any name whose lookup the store
// fails) are never answered from the cache and a preflight takes no
// request slot (routes.go routes OPTIONS to s.preflight, outside
// serve/acquire): 200 unsigned OPTIONS make far fewer backend GET ?cors.
func TestPreflightStoreReadsBounded(t *testing.T) {
	fw := &docForwarder{}
	_, url := adminClient(t, fw)
	for i := range 200 {
		req, _ := http.NewRequest(http.MethodOptions, url+"/b"+strconv.Itoa(i)+"/o", nil)
		req.Header.Set("Origin", "http://evil.example")
		req.Header.Set("Access-Control-Request-Method", "GET")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	fw.mu.Lock()
	defer fw.mu.Unlock()
	if fw.gets >= 200 {
		t.Errorf("200 anonymous preflights made %d backend requests", fw.gets)
	}
}

// TestAnonymousActualCORS: with anonymous access on, an unsigned request
// the bucket's ACL serves carries the CORS headers its rules allow, as on
// S3; with it off, the refusal carries none.
func TestAnonymousActualCORS(t *testing.T) {
	for _, anon := range []bool{true, false} {
		fw := &docForwarder{}
		creds := Credentials{"admin": {AccessKey: "admin", SecretKey: "as", Read: []string{"*"}, Write: []string{"*"}, Admin: true}}
		srv := newTestServerFw(t, Config{Credentials: creds, AllowAnonymous: anon}, fw)
		c := sdkClient(srv.URL, "admin", "as")
		ctx := context.Background()
		if _, err := c.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String("bkt"), ACL: types.BucketCannedACLPublicRead}); err != nil {
			t.Fatal(err)
		}
		if _, err := c.PutBucketCors(ctx, &s3.PutBucketCorsInput{Bucket: aws.String("bkt"), CORSConfiguration: &types.CORSConfiguration{
			CORSRules: []types.CORSRule{{AllowedOrigins: []string{"*suffix"}, AllowedMethods: []string{"GET"}}}}}); err != nil {
			t.Fatal(err)
		}
		req, _ := http.NewRequest(http.MethodGet, srv.URL+"/bkt", nil)
		req.Header.Set("Origin", "foo.suffix")
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		got := res.Header.Get("Access-Control-Allow-Origin")
		switch {
		case anon && (res.StatusCode != 200 || got != "foo.suffix"):
			t.Errorf("anonymous on: %d, Access-Control-Allow-Origin %q; want 200 and foo.suffix", res.StatusCode, got)
		case !anon && (res.StatusCode != 403 || got != ""):
			t.Errorf("anonymous off: %d, Access-Control-Allow-Origin %q; want 403 and none", res.StatusCode, got)
		}
	}
}

// TestAnonymousMissingKey: an unsigned read of a missing key is 404 where
// the bucket lets anyone list it (public-read), 403 where it does not, as
// for a signed caller.
func TestAnonymousMissingKey(t *testing.T) {
	creds := Credentials{"admin": {AccessKey: "admin", SecretKey: "as", Read: []string{"*"}, Write: []string{"*"}, Admin: true}}
	srv := newTestServerWith(t, Config{Credentials: creds, AllowAnonymous: true})
	c := sdkClient(srv.URL, "admin", "as")
	ctx := context.Background()
	for bucket, acl := range map[string]types.BucketCannedACL{"open": types.BucketCannedACLPublicRead, "closed": types.BucketCannedACLPrivate} {
		if _, err := c.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String(bucket), ACL: acl}); err != nil {
			t.Fatal(err)
		}
	}
	for bucket, want := range map[string]int{"open": 404, "closed": 403} {
		res, err := http.Get(srv.URL + "/" + bucket + "/missing")
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != want {
			t.Errorf("%s: %d, want %d", bucket, res.StatusCode, want)
		}
	}
}
