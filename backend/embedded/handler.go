package embedded

import (
	"crypto/subtle"
	"net/http"
	"strings"
)

// newHandler wraps the gofakes3 handler with the request and response
// fixes that need HTTP headers (fixedBackend covers the rest):
//
//   - Requests whose Host is not the listener's address, or which carry an
//     Origin header, are refused with 403: gofakes3 checks no signature and
//     answers CORS preflights with "*", so this keeps web pages (DNS
//     rebinding, cross-origin fetches to 127.0.0.1) away from it.
//   - A bucket named "." or ".." (or none, before a key) is 400
//     InvalidBucketName: buckets are directories here.
//   - A query that names no operation the store implements, or carries a
//     parameter that operation does not take, is refused (queryError,
//     query.go) before any layer acts on it.
//   - Requests not signed with accessKey (random per start) are refused with
//     403, so other local processes cannot use the store either. The
//     signature itself is not checked: the key acts as a bearer token that
//     never leaves this process.
//   - PUT (a copy with REPLACE too, and multipart initiation) copy Cache-Control, Content-Language and
//     Expires, which gofakes3 drops, into X-Amz-S3seal-Std-* headers that it
//     does store; fixedBackend renames them back on read.
//   - GET and HEAD with If-Match: gofakes3 ignores the header; the ETag it
//     is about to send is compared and a mismatch becomes 412
//     PreconditionFailed before any byte of the object is written.
//   - Multipart requests are answered by mp, with parts on disk.
//   - Requests about versions are answered by the store itself
//     (serveVersions, serveRead: versions_http.go).
//   - Objects assembled from parts get their multipart ETag (etagMetaKey)
//     on GET and HEAD in place of gofakes3's MD5 of the body.
func newHandler(host, accessKey string, mp *mpStore, attrs *attrStore, next http.Handler) http.Handler {
	var served http.Handler = baseHandler(mp, next)
	if attrs != nil {
		served = newAttrsHandler(attrs, served) // tags, lock, documents (embedded_attrs*.go)
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Host != host || r.Header.Get("Origin") != "" || !signedWith(r, accessKey) {
			writeS3Error(w, r, http.StatusForbidden, "AccessDenied", "Access Denied")
			return
		}
		for k := range r.Header {
			if strings.HasPrefix(k, privateHeaderPrefix) {
				delete(r.Header, k)
			}
		}
		if err := queryError(r); err != nil {
			writeMPError(w, r, err)
			return
		}
		if bucket, _, _ := strings.Cut(strings.TrimPrefix(r.URL.Path, "/"), "/"); bucket == "." || bucket == ".." ||
			bucket == "" && r.URL.Path != "/" {
			// Buckets are directories here: "." and ".." would name the
			// directory of buckets, or another bucket's files.
			writeS3Error(w, r, http.StatusBadRequest, "InvalidBucketName", "The specified bucket is not valid.")
			return
		}
		served.ServeHTTP(w, r)
	})
}

// baseHandler serves an authenticated request: multipart uploads from
// mp, the rest by next (gofakes3) with the fixes above.
func baseHandler(mp *mpStore, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		bucket, key, isObject := strings.Cut(strings.TrimPrefix(r.URL.Path, "/"), "/")
		if !isObject {
			if mp.serveMultipart(w, r, bucket, "") || mp.createLaxBucket(w, r, bucket) || mp.fb.serveVersions(w, r, bucket, "") {
				return
			}
			if r.Method == http.MethodDelete && bareQuery(r.URL.Query()) {
				// A deleted bucket takes its uploads in progress along.
				sw := &statusWriter{ResponseWriter: w}
				next.ServeHTTP(sw, r)
				if sw.status >= 200 && sw.status < 300 {
					mp.dropBucket(bucket)
				}
				return
			}
			next.ServeHTTP(w, r)
			return
		}
		q := r.URL.Query()
		copyReplace := r.Header.Get("X-Amz-Copy-Source") == "" || strings.EqualFold(r.Header.Get("X-Amz-Metadata-Directive"), "REPLACE")
		if (r.Method == http.MethodPut && !q.Has("uploadId") && copyReplace) ||
			(r.Method == http.MethodPost && q.Has("uploads")) {
			for _, h := range smuggledHeaders {
				if v := r.Header.Get(h); v != "" {
					r.Header.Set(stdHeaderPrefix+h, v)
				}
			}
		}
		if mp.serveMultipart(w, r, bucket, key) || mp.fb.serveVersions(w, r, bucket, key) {
			return
		}
		if r.Method == http.MethodGet || r.Method == http.MethodHead {
			var iw *ifMatchWriter
			inner := w
			if r.Header.Get("If-Match") != "" {
				iw = &ifMatchWriter{ResponseWriter: w, r: r, want: r.Header.Get("If-Match")}
				inner = iw
			}
			ew := &etagWriter{ResponseWriter: inner}
			mp.fb.serveRead(ew, r, bucket, key, next)
			ew.fix()
			if iw != nil {
				iw.decide()
			}
			return
		}
		next.ServeHTTP(w, r)
	})
}

// statusWriter remembers the status sent.
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(p []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.ResponseWriter.Write(p)
}

// etagWriter replaces gofakes3's ETag with the multipart ETag kept in
// etagMetaKey, and drops that entry, before the status line goes out (so
// before an ifMatchWriter underneath decides).
type etagWriter struct {
	http.ResponseWriter
	fixed bool
}

func (w *etagWriter) fix() {
	if w.fixed {
		return
	}
	w.fixed = true
	h := w.Header()
	if v := h.Get(etagMetaKey); v != "" {
		h.Set("ETag", `"`+v+`"`)
	}
	h.Del(etagMetaKey)
}

func (w *etagWriter) WriteHeader(code int) {
	w.fix()
	w.ResponseWriter.WriteHeader(code)
}

func (w *etagWriter) Write(p []byte) (int, error) {
	w.fix()
	return w.ResponseWriter.Write(p)
}

// ifMatchWriter holds back the status line until it knows whether the
// ETag gofakes3 set satisfies If-Match.
type ifMatchWriter struct {
	http.ResponseWriter
	r               *http.Request
	want            string
	decided, failed bool
	wroteHeader     bool
}

// decide runs once, before the first byte or status goes out (or after the
// handler returned without writing, as a bodiless HEAD does).
func (w *ifMatchWriter) decide() {
	if w.decided {
		return
	}
	w.decided = true
	etag := w.Header().Get("ETag")
	if etag == "" || etagMatches(w.want, etag) {
		return
	}
	w.failed = true
	for k := range w.Header() {
		delete(w.Header(), k)
	}
	writeS3Error(w.ResponseWriter, w.r, http.StatusPreconditionFailed, "PreconditionFailed",
		"At least one of the pre-conditions you specified did not hold")
}

func (w *ifMatchWriter) WriteHeader(code int) {
	if code >= 200 && code < 300 {
		w.decide()
	} else {
		w.decided = true // an error answer: nothing to check
	}
	// gofakes3 sends an error status after a body it failed to finish
	// (client gone); a second status line is only log noise.
	if !w.failed && !w.wroteHeader {
		w.wroteHeader = true
		w.ResponseWriter.WriteHeader(code)
	}
}

func (w *ifMatchWriter) Write(p []byte) (int, error) {
	w.decide()
	if w.failed {
		return len(p), nil // swallow the object body
	}
	w.wroteHeader = true
	return w.ResponseWriter.Write(p)
}

// etagMatches applies If-Match: "*" or any listed ETag equal to etag.
func etagMatches(ifMatch, etag string) bool {
	etag = strings.Trim(etag, `"`)
	for _, v := range strings.Split(ifMatch, ",") {
		v = strings.TrimSpace(v)
		if v == "*" || strings.Trim(v, `"`) == etag {
			return true
		}
	}
	return false
}

func writeS3Error(w http.ResponseWriter, r *http.Request, status int, code, msg string) {
	w.Header().Set("Content-Type", "application/xml")
	w.WriteHeader(status)
	if r.Method != http.MethodHead {
		// code and msg are constants of this file: no escaping needed.
		w.Write([]byte(`<?xml version="1.0" encoding="UTF-8"?>` + "\n<Error><Code>" + code +
			"</Code><Message>" + msg + "</Message></Error>"))
	}
}

// signedWith reports whether r's SigV4 credential (header or presigned
// query) names accessKey, compared in constant time.
func signedWith(r *http.Request, accessKey string) bool {
	cred := r.URL.Query().Get("X-Amz-Credential")
	if auth := r.Header.Get("Authorization"); auth != "" {
		_, c, ok := strings.Cut(auth, "Credential=")
		if !ok {
			return false
		}
		cred = c
	}
	ak, _, ok := strings.Cut(cred, "/")
	return ok && subtle.ConstantTimeCompare([]byte(ak), []byte(accessKey)) == 1
}
