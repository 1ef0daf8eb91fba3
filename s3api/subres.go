package s3api

import (
	"errors"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/gorilla/mux"

	"github.com/s3seal/s3seal/backend"
	"github.com/s3seal/s3seal/s3api/cors"
	"github.com/s3seal/s3seal/s3api/s3err"
	"github.com/s3seal/s3seal/sealstore"
)

// A subresource is a bucket's or an object's configuration that the
// backend enforces and s3seal passes on (backend.Forwarder): Object Lock,
// retention, legal hold, tags, and, changed by admin credentials only,
// CORS, lifecycle, ownership controls and ACLs (redacted for readers, subdocs.go). None carries
// object bytes. Request bodies are read and verified like every XML body
// (signature, Content-MD5, size); a GET's answer is decoded into the
// operation's document and encoded anew (subdocs.go), so the client gets
// what s3seal understood, not the backend's bytes.
type subresource struct {
	name     string          // query parameter, as S3 spells it
	object   bool            // on objects, else on buckets
	admin    bool            // only credentials with "admin": true
	adminPut bool            // PUT only for admins (GET open to readers)
	adminGet bool            // GET only for admins too (it shows the backend account)
	methods  []string        // GET, PUT, DELETE
	doc      func() document // the GET answer's document (subdocs.go); nil for a JSON policy
	headers  []string        // request headers passed on
	// check judges a PUT's body; a document it returns is forwarded in
	// its place (the lock documents, lockdoc.go), nil forwards the body.
	check func(body []byte) ([]byte, error)
	op    string // operation name suffix: Get<op>, Put<op>, Delete<op>
	limit int64  // a PUT body's limit when not maxXMLBody
	// overLimit is the answer to a PUT body past limit when it is not
	// MaxMessageLengthExceeded.
	overLimit func() error
}

var subresources = []subresource{
	{name: "tagging", object: true, methods: []string{"GET", "PUT", "DELETE"}, op: "ObjectTagging", doc: func() document { return &tagDoc{} },
		check: func(b []byte) ([]byte, error) { _, err := parseTagBody(b, maxObjectTags); return nil, err }},
	{name: "retention", object: true, methods: []string{"GET", "PUT"}, op: "ObjectRetention", doc: func() document { return &retentionDoc{} },
		headers: []string{bypassHeader}, check: checkRetention},
	{name: "legal-hold", object: true, methods: []string{"GET", "PUT"}, op: "ObjectLegalHold", doc: func() document { return &legalHoldDoc{} }, check: checkLegalHold},
	{name: "tagging", methods: []string{"GET", "PUT", "DELETE"}, op: "BucketTagging", doc: func() document { return &tagDoc{} },
		check: func(b []byte) ([]byte, error) { _, err := parseBucketTagBody(b); return nil, err }},
	{name: "object-lock", adminPut: true, methods: []string{"GET", "PUT"}, op: "ObjectLockConfiguration", doc: func() document { return &lockConfigDoc{} },
		headers: []string{"X-Amz-Bucket-Object-Lock-Token"}, check: checkLockConfig},
	{name: "cors", admin: true, methods: []string{"GET", "PUT", "DELETE"}, op: "BucketCors", doc: func() document { return &corsDoc{} },
		check: func(b []byte) ([]byte, error) { return nil, checkCORS(b) }, limit: cors.MaxBody},
	{name: "lifecycle", admin: true, methods: []string{"GET", "PUT", "DELETE"}, op: "BucketLifecycle", doc: func() document { return &lifecycleDoc{} },
		check: checkLifecycle},
	{name: "website", admin: true, methods: []string{"GET", "PUT", "DELETE"}, op: "BucketWebsite", doc: func() document { return &websiteDoc{} },
		check: checkWebsite, limit: maxWebsiteBody},
}

// addSubresources registers the sub-resource routes on the bucket or
// object router; they must come before the router's catch-all for unknown
// parameters.
func (s *Server) addSubresources(rt *mux.Router, object bool) {
	s.addACLRoutes(rt, object) // ACLs and the public access block: kept by s3seal (bucketacl.go)
	for _, sr := range subresources {
		if sr.object != object {
			continue
		}
		for _, m := range sr.methods {
			need := accWrite
			if m == http.MethodGet {
				need = accRead
			}
			verb := map[string]string{"GET": "Get", "PUT": "Put", "DELETE": "Delete"}[m]
			rt.Methods(m).MatcherFunc(onlySub(sr.name, sr.object)).
				HandlerFunc(s.serve(verb+sr.op, need, s.forward(sr)))
		}
	}
}

// onlySub matches requests that name the sub-resource and no other
// parameter but versionId (objects only) and the presigned-URL fields.
func onlySub(name string, object bool) mux.MatcherFunc {
	return func(r *http.Request, _ *mux.RouteMatch) bool {
		q := r.URL.Query()
		if !q.Has(name) {
			return false
		}
		for k := range q {
			if k != name && !plainParams[strings.ToLower(k)] && !(object && k == "versionId") {
				return false
			}
		}
		return true
	}
}

// forward passes one sub-resource request to the backend.
func (s *Server) forward(sr subresource) handler {
	return func(req *request) error {
		// Without a store to forward to, 501 to everyone, before the
		// admin check.
		if s.cfg.Forwarder == nil {
			return s3err.New(s3err.NotImplemented, "s3seal does not implement ?"+sr.name+" on this backend.")
		}
		// Reading a configuration is open to the bucket's readers (s3cmd
		// info, the console and SDK tools ask for it); changing it is for
		// admins, since the object store enforces it against everyone.
		denied := s3err.New(s3err.AccessDenied, "Only credentials marked \"admin\": true may change ?"+sr.name+" (it is enforced by the object store).")
		if sr.admin && !req.cred.Admin && req.r.Method != http.MethodGet {
			return denied
		}
		// A bucket policy names the backend's account (principal ARNs)
		// and its network (conditions): only admins read it. s3cmd info
		// prints "Not available" on the 403.
		if sr.adminGet && !req.cred.Admin {
			return s3err.New(s3err.AccessDenied, "Only credentials marked \"admin\": true may read or change ?"+sr.name+" (it names the object store's account).")
		}
		if sr.adminPut && req.r.Method == http.MethodPut && !req.cred.Admin {
			return s3err.New(s3err.AccessDenied, "Only credentials marked \"admin\": true may change ?"+sr.name+" (a default retention cannot be taken back).")
		}
		if sr.object {
			if err := sealstore.CheckKey(req.key); err != nil {
				return err
			}
		}
		if slices.Contains(sr.headers, bypassHeader) {
			if err := checkBypass(req); err != nil {
				return err
			}
		}
		in := backend.RawRequest{Method: req.r.Method, Bucket: req.bucket, Key: req.key,
			Query: url.Values{sr.name: {""}}, Header: http.Header{}}
		if v, ok := req.r.URL.Query()["versionId"]; ok && sr.object {
			if _, err := checkVersionID(v[0]); err != nil {
				return err
			}
			in.Query["versionId"] = v[:1]
		}
		for _, h := range sr.headers {
			if v := req.r.Header.Get(h); v != "" && h != bypassHeader {
				in.Header.Set(h, v)
			}
		}
		// The bypass is never the client's text: backends read the header
		// their own way (RGW url-decodes it, some take its mere presence),
		// so only the "true" checkBypass judged, from an admin, goes on.
		if slices.Contains(sr.headers, bypassHeader) && req.cred.Admin && bypassAsked(req.r.Header) {
			in.Header.Set(bypassHeader, "true")
		}
		lockOn, err := s.objectLockOn(req, sr)
		if err != nil {
			return err
		}
		if req.r.Method == http.MethodPut {
			limit := int64(maxXMLBody)
			if sr.limit > 0 {
				limit = sr.limit
			}
			body, err := readXMLBody(req, limit)
			if sr.overLimit != nil && err != nil && toAPIError(err).Code == s3err.MaxMessageLengthExceeded {
				return sr.overLimit()
			}
			if err != nil {
				return err
			}
			if sr.check != nil {
				canon, err := sr.check(body)
				if err != nil {
					return err
				}
				if canon != nil {
					body = canon
				}
			}
			in.Body = body
		}
		if err := s.lockBucketState(req, sr); err != nil {
			return err
		}
		if req.r.Method == http.MethodPut && (sr.name == "retention" || sr.name == "legal-hold") {
			// Judged on a HEAD, then forwarded: no other change of the
			// key's lock from this process in between.
			defer s.lockOps.lock(req.bucket, req.key)()
		}
		if err := s.lockTarget(req, sr, &in, lockOn); err != nil {
			return err
		}
		manifest := ""
		if req.r.Method == http.MethodPut && (sr.name == "retention" || sr.name == "legal-hold") {
			var err error
			if manifest, err = s.lockManifest(req, &in); err != nil {
				return err
			}
		}
		out, err := s.cfg.Forwarder.Forward(req.r.Context(), in)
		if err != nil && sr.name == "object-lock" && !sr.object && req.r.Method == http.MethodPut {
			out, err = s.lockConfigWithoutDocs(req, in, out, err)
		}
		if sr.name == "cors" && req.r.Method != http.MethodGet {
			s.cors.forget(req.bucket) // cors.go: the next request reads the new rules
		}
		if sr.name == "lifecycle" && req.r.Method != http.MethodGet {
			s.lifecycle.forget(req.bucket) // lifecycle_cache.go: likewise
		}
		if err != nil {
			if manifest != "" {
				slog.WarnContext(req.r.Context(), "lock: the manifest took the "+sr.name+" but its object did not; a retry of the request evens them out",
					"bucket", req.bucket, "key", req.key, "manifest", manifest, "err", err)
			}
			err = s.missingObject(req, sr, in, err)
			if sr.object {
				err = s.subresourceMarkerErr(req, in.Query.Get("versionId"), err)
			}
			return forwardErr(err)
		}
		if sr.object {
			subresourceVersion(req.w.Header(), out.Header.Get("X-Amz-Version-Id"), req.r.URL.Query().Get("versionId"))
		}
		switch req.r.Method {
		case http.MethodGet:
			doc, ok := answerDoc(sr, out.Body, req.cred.Admin, req.auth.AccessKey)
			if ok && sr.name == "legal-hold" && !hasLegalHold(out.Body) {
				return errNoLegalHold()
			}
			if !ok && sr.name == "retention" {
				if doc, err = s.retentionFromHead(req, in); err != nil {
					return err
				}
				ok = true
			}
			if !ok {
				return s3err.New(s3err.InternalError, "The object store answered ?"+sr.name+" with something other than its document; it was not passed on.")
			}
			ct := "application/xml"
			if sr.doc == nil {
				ct = "application/json"
			}
			req.w.Header().Set("Content-Type", ct)
			req.w.WriteHeader(http.StatusOK)
			_, _ = req.w.Write(doc)
		case http.MethodDelete:
			req.w.WriteHeader(http.StatusNoContent)
		case http.MethodPut:
			req.w.WriteHeader(putStatus(sr))
		default:
			req.w.WriteHeader(http.StatusOK)
		}
		return nil
	}
}

// lockManifest sends a retention or legal hold to the manifest of a
// multipart object version before the version gets it (s3seal cannot read
// the object without it), and pins in to that version. Manifest first: a
// lock the store refuses on the manifest (shortening a COMPLIANCE
// retention) is refused on the object too, and the request fails whole
// with the store's answer, before the object changed.
func (s *Server) lockManifest(req *request, in *backend.RawRequest) (string, error) {
	mkey, vid, err := s.store.ManifestOf(req.r.Context(), req.bucket, req.key, in.Query.Get("versionId"))
	if err != nil {
		return "", err
	}
	if mkey != "" {
		m := backend.RawRequest{Method: in.Method, Bucket: in.Bucket, Key: mkey,
			Query: url.Values{}, Header: in.Header, Body: in.Body}
		for k := range in.Query {
			if k != "versionId" {
				m.Query[k] = in.Query[k]
			}
		}
		if _, err := s.cfg.Forwarder.Forward(req.r.Context(), m); err != nil {
			return "", forwardErr(err)
		}
	}
	if mkey != "" && vid != "" && !in.Query.Has("versionId") {
		in.Query.Set("versionId", vid)
	}
	return mkey, nil
}

// forwardErr passes the backend's answer to a sub-resource request on:
// request errors (4xx) with their code and message, since they are about
// the configuration the client sent; server errors as ServiceUnavailable.
func forwardErr(err error) error {
	if ae := absentDoc(err); ae != nil {
		return ae
	}
	var be *backend.Error
	if errors.As(err, &be) && be.Code != "" && be.StatusCode >= 400 && be.StatusCode < 500 {
		if be.Code == "NotFound" {
			return s3err.New(s3err.NoSuchKey, "")
		}
		if be.Code == "AccessDenied" || be.StatusCode == 401 || be.StatusCode == 403 {
			// A store's refusal names its own account and policy (AWS:
			// "User: arn:aws:iam::<account>:... is not authorized"):
			// the code passes, its words do not.
			return storeDenial(be)
		}
		return storeRefusal(be)
	}
	if errors.As(err, &be) && be.Code == "NotImplemented" {
		return s3err.New(s3err.NotImplemented, be.Message)
	}
	return err
}

// checkRetention checks a Retention document as S3 does and returns it
// re-encoded from the values judged, the date in UTC (lockdoc.go).
func checkRetention(body []byte) ([]byte, error) {
	n, err := parseLockDoc(body, "Retention", retentionSchema)
	if err != nil {
		return nil, err
	}
	mode, _ := n.value("Mode")
	date, _ := n.value("RetainUntilDate")
	doc := &retentionDoc{}
	if mode == "" && date == "" {
		return encodeLockDoc(doc) // removes a GOVERNANCE retention (with the bypass header)
	}
	if mode != "GOVERNANCE" && mode != "COMPLIANCE" {
		return nil, s3err.New(s3err.MalformedXML, "")
	}
	until, err := parseRetainUntil(strings.TrimSpace(date))
	if err != nil {
		return nil, err
	}
	doc.Mode, doc.RetainUntilDate = mode, retainUntilText(until)
	return encodeLockDoc(doc)
}

// checkLegalHold checks a LegalHold document and returns it re-encoded.
func checkLegalHold(body []byte) ([]byte, error) {
	n, err := parseLockDoc(body, "LegalHold", legalHoldSchema)
	if err != nil {
		return nil, err
	}
	status, _ := n.value("Status")
	if status != "ON" && status != "OFF" {
		return nil, s3err.New(s3err.MalformedXML, "")
	}
	return encodeLockDoc(&legalHoldDoc{Status: status})
}

// missingObject turns a store's failure (5xx) on an object's sub-resource
// into NoSuchKey when the object is not there: some stores (moto) answer
// 500 to DELETE ?tagging of a missing key where S3 answers 404 NoSuchKey,
// and the client's answer must not depend on the store. A version named by
// versionId is the store's to judge; other errors pass unchanged.
func (s *Server) missingObject(req *request, sr subresource, in backend.RawRequest, err error) error {
	var be *backend.Error
	if !sr.object || in.Query.Has("versionId") || !errors.As(err, &be) || be.StatusCode < 500 {
		return err
	}
	if _, herr := s.store.ObjectLock(req.r.Context(), req.bucket, req.key, ""); backend.IsNotFound(herr) {
		return s3err.New(s3err.NoSuchKey, "")
	}
	return err
}
