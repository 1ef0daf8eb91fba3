package e2e

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
)

// CORS and website configuration against the s3seal binary, on the
// embedded store and in front of moto: a browser's unsigned preflight is
// answered from the rules s3seal keeps in the store, the same way on
// both; a website configuration is judged by s3seal (moto would take
// anything) and read back.
func TestCORSAndWebsite(t *testing.T) {
	t.Parallel()
	for _, mode := range []string{"embedded", "moto"} {
		t.Run(mode, func(t *testing.T) {
			dir := t.TempDir()
			creds := writeJSON(t, dir, "creds.json", map[string]any{"credentials": []map[string]any{
				{"access_key": "admin", "secret_key": "admin-secret-key", "read": []string{"*"}, "write": []string{"*"}, "admin": true},
			}})
			opts := sealOpts{CredentialsFile: creds, DataDir: filepath.Join(dir, "data")}
			if mode == "moto" {
				opts.Backend = startMoto(t)
			}
			p := startS3seal(t, opts)
			c := newSDKClient(t, p.Endpoint, "admin", "admin-secret-key", true)
			ctx := context.Background()
			b := aws.String("site")
			mustCreateBucket(t, c, *b)
			preflight := func(bucket, origin, method string) *http.Response {
				t.Helper()
				req, _ := http.NewRequest(http.MethodOptions, p.Endpoint+"/"+bucket+"/index.html", nil)
				req.Header.Set("Origin", origin)
				req.Header.Set("Access-Control-Request-Method", method)
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				resp.Body.Close()
				return resp
			}
			if r := preflight("site", "https://app.example", "GET"); r.StatusCode != 403 {
				t.Errorf("preflight without rules: %d, want 403", r.StatusCode)
			}
			if r := preflight("nosuch", "https://app.example", "GET"); r.StatusCode != 404 {
				t.Errorf("preflight on a missing bucket: %d, want 404", r.StatusCode)
			}
			_, err := c.PutBucketCors(ctx, &s3.PutBucketCorsInput{Bucket: b, CORSConfiguration: &types.CORSConfiguration{CORSRules: []types.CORSRule{
				{AllowedOrigins: []string{"https://*.example"}, AllowedMethods: []string{"GET", "PUT"}, MaxAgeSeconds: aws.Int32(60)}}}})
			if err != nil {
				t.Fatal(err)
			}
			r := preflight("site", "https://app.example", "PUT")
			if r.StatusCode != 200 || r.Header.Get("Access-Control-Allow-Origin") != "https://app.example" ||
				r.Header.Get("Access-Control-Allow-Methods") != "GET, PUT" || r.Header.Get("Access-Control-Max-Age") != "60" {
				t.Errorf("preflight allowed: %d %v", r.StatusCode, r.Header)
			}
			if r := preflight("site", "https://other.org", "GET"); r.StatusCode != 403 {
				t.Errorf("preflight from another origin: %d, want 403", r.StatusCode)
			}
			_, err = c.PutBucketCors(ctx, &s3.PutBucketCorsInput{Bucket: b, CORSConfiguration: &types.CORSConfiguration{CORSRules: []types.CORSRule{
				{AllowedOrigins: []string{"*"}, AllowedMethods: []string{"PATCH"}}}}})
			wantStatus(t, "PutBucketCors PATCH", err, 400, "InvalidRequest")

			_, err = c.PutBucketWebsite(ctx, &s3.PutBucketWebsiteInput{Bucket: b, WebsiteConfiguration: &types.WebsiteConfiguration{
				IndexDocument: &types.IndexDocument{Suffix: aws.String("/index.html")}}})
			wantStatus(t, "website suffix with a slash", err, 400, "InvalidArgument")
			_, err = c.GetBucketWebsite(ctx, &s3.GetBucketWebsiteInput{Bucket: b})
			wantStatus(t, "GetBucketWebsite of none", err, 404, "NoSuchWebsiteConfiguration")
			if _, err := c.PutBucketWebsite(ctx, &s3.PutBucketWebsiteInput{Bucket: b, WebsiteConfiguration: &types.WebsiteConfiguration{
				RedirectAllRequestsTo: &types.RedirectAllRequestsTo{HostName: aws.String("example.com"), Protocol: types.ProtocolHttps}}}); err != nil {
				t.Fatal(err)
			}
			w, err := c.GetBucketWebsite(ctx, &s3.GetBucketWebsiteInput{Bucket: b})
			if err != nil || w.RedirectAllRequestsTo == nil || aws.ToString(w.RedirectAllRequestsTo.HostName) != "example.com" ||
				w.RedirectAllRequestsTo.Protocol != types.ProtocolHttps {
				t.Fatalf("website read back: %+v, %v", w, err)
			}
			if _, err := c.DeleteBucketWebsite(ctx, &s3.DeleteBucketWebsiteInput{Bucket: b}); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestCORSAnonymousRequestsNoBackendFanout, with the real binary in front
// of a slow moto: anonymous requests with an Origin header (preflights,
// GETs, /healthz) must not each make s3seal send a signed GET ?cors to the
// object store before authentication and outside --max-requests: at most
// one such read, never more at once than --max-requests.
func TestCORSAnonymousRequestsNoBackendFanout(t *testing.T) {
	moto := startMoto(t)
	target, _ := url.Parse(moto.Endpoint)
	rp := httputil.NewSingleHostReverseProxy(target)
	var cors, inFlight, peak atomic.Int64
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Has("cors") {
			cors.Add(1)
			n := inFlight.Add(1)
			defer inFlight.Add(-1)
			for p := peak.Load(); n > p && !peak.CompareAndSwap(p, n); p = peak.Load() {
			}
			time.Sleep(300 * time.Millisecond) // a slow store
		}
		rp.ServeHTTP(w, r)
	}))
	defer proxy.Close()
	p := startS3seal(t, sealOpts{Backend: &motoServer{Endpoint: proxy.URL}, Args: []string{"--max-requests", "1"}})
	const n = 40
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			method, path := http.MethodOptions, fmt.Sprintf("/anon-%d/k", i)
			switch i % 4 {
			case 1:
				method = http.MethodGet
			case 2:
				method, path = http.MethodGet, "/healthz"
			}
			req, _ := http.NewRequest(method, p.Endpoint+path, nil)
			req.Header.Set("Origin", "http://evil.example")
			req.Header.Set("Access-Control-Request-Method", "GET")
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Error(err)
				return
			}
			resp.Body.Close()
		}(i)
	}
	wg.Wait()
	t.Logf("%d anonymous requests -> %d signed GET ?cors to the store, %d at once (--max-requests 1)", n, cors.Load(), peak.Load())
	// Fixed by decision: only preflights (unsigned by design) read rules,
	// only of buckets some credential may use, one read per bucket at a
	// time, never more at once than --max-requests.
	if cors.Load() > 1 || peak.Load() > 1 {
		t.Errorf("anonymous requests drove %d backend GET ?cors (peak %d concurrent, --max-requests 1)", cors.Load(), peak.Load())
	}
}
