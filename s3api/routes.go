package s3api

import (
	"net/http"
	"strings"

	"github.com/gorilla/mux"
)

// queryParams that select no sub-resource: list parameters, GET response
// overrides and presigned-URL fields. Any other query parameter names a
// sub-resource (acl, tagging, versioning, ...) that s3seal does not
// implement; such requests get 501 rather than being passed through.
var plainParams = map[string]bool{
	"prefix": true, "delimiter": true, "marker": true, "max-keys": true,
	"encoding-type": true, "list-type": true, "continuation-token": true,
	"start-after": true, "fetch-owner": true, "x-id": true,
	"response-content-type": true, "response-content-language": true,
	"response-expires": true, "response-cache-control": true,
	"response-content-disposition": true, "response-content-encoding": true,
	"x-amz-algorithm": true, "x-amz-credential": true, "x-amz-date": true,
	"x-amz-expires": true, "x-amz-signedheaders": true, "x-amz-signature": true,
	"x-amz-security-token": true, "x-amz-content-sha256": true,
	"x-amz-checksum-mode": true, "x-amz-user-agent": true,
}

// subresources implemented per level; see routes.
var bucketSubs = map[string]bool{"location": true, "delete": true}

func (s *Server) routes() *mux.Router {
	r := mux.NewRouter().SkipClean(true)
	r.Path("/healthz").Methods(http.MethodGet, http.MethodHead).MatcherFunc(unsigned).HandlerFunc(s.healthz)

	level := func(want int) mux.MatcherFunc {
		return func(r *http.Request, _ *mux.RouteMatch) bool {
			bucket, key := s.target(r)
			switch {
			case bucket == "":
				return want == 0
			case key == "":
				return want == 1
			default:
				return want == 2
			}
		}
	}
	unknownSub := func(allowed map[string]bool) mux.MatcherFunc {
		return func(r *http.Request, _ *mux.RouteMatch) bool {
			for k := range r.URL.Query() {
				lk := strings.ToLower(k)
				if !plainParams[lk] && !allowed[lk] {
					return true
				}
			}
			return false
		}
	}
	has := func(param string) mux.MatcherFunc {
		return func(r *http.Request, _ *mux.RouteMatch) bool {
			_, ok := r.URL.Query()[param]
			return ok
		}
	}

	svc := r.MatcherFunc(level(0)).Subrouter()
	svc.Methods(http.MethodGet).MatcherFunc(unknownSub(nil)).HandlerFunc(s.serve(accService, notImplemented))
	svc.Methods(http.MethodGet).HandlerFunc(s.serve(accService, s.listBuckets))

	b := r.MatcherFunc(level(1)).Subrouter()
	b.MatcherFunc(unknownSub(bucketSubs)).HandlerFunc(s.serve(accService, notImplemented))
	b.Methods(http.MethodGet).MatcherFunc(has("location")).HandlerFunc(s.serve(accRead, s.getBucketLocation))
	b.Methods(http.MethodGet).Queries("list-type", "2").HandlerFunc(s.serve(accRead, s.listObjectsV2))
	b.Methods(http.MethodGet).HandlerFunc(s.serve(accRead, s.listObjectsV1))
	b.Methods(http.MethodPost).MatcherFunc(has("delete")).HandlerFunc(s.serve(accWrite, s.deleteObjects))
	b.Methods(http.MethodPut).HandlerFunc(s.serve(accWrite, s.createBucket))
	b.Methods(http.MethodHead).HandlerFunc(s.serve(accRead, s.headBucket))
	b.Methods(http.MethodDelete).HandlerFunc(s.serve(accWrite, s.deleteBucket))

	o := r.MatcherFunc(level(2)).Subrouter()
	o.MatcherFunc(unknownSub(nil)).HandlerFunc(s.serve(accService, notImplemented))
	o.Methods(http.MethodPut).HeadersRegexp("X-Amz-Copy-Source", ".").HandlerFunc(s.serve(accWrite, s.copyObject))
	o.Methods(http.MethodPut).HandlerFunc(s.serve(accWrite, s.putObject))
	o.Methods(http.MethodGet).HandlerFunc(s.serve(accRead, s.getObject))
	o.Methods(http.MethodHead).HandlerFunc(s.serve(accRead, s.headObject))
	o.Methods(http.MethodDelete).HandlerFunc(s.serve(accWrite, s.deleteObject))

	r.NotFoundHandler = s.serve(accService, notImplemented)
	r.MethodNotAllowedHandler = s.serve(accService, func(*request) error { return apiErr("MethodNotAllowed", "") })
	return r
}

// unsigned matches requests without any signature, so that a signed
// request for a bucket named "healthz" still reaches the S3 API.
func unsigned(r *http.Request, _ *mux.RouteMatch) bool {
	return r.Header.Get("Authorization") == "" && r.URL.Query().Get("X-Amz-Signature") == ""
}

func (s *Server) healthz(w http.ResponseWriter, r *http.Request) {
	if s.cfg.Ready != nil && !s.cfg.Ready() {
		http.Error(w, "not ready", http.StatusServiceUnavailable)
		return
	}
	w.Header().Set("Content-Type", "text/plain")
	_, _ = w.Write([]byte("ok\n"))
}

func notImplemented(req *request) error {
	q := req.r.URL.Query()
	if q.Has("uploads") || q.Has("uploadId") {
		return apiErr("NotImplemented", "s3seal does not implement multipart uploads yet: "+
			"raise the client's multipart threshold (aws CLI: s3.multipart_threshold, rclone: --s3-upload-cutoff)")
	}
	return apiErr("NotImplemented", "s3seal does not implement this operation")
}
