package s3api

import (
	"errors"
	"net/http"
	"strings"

	"github.com/gorilla/mux"

	"github.com/s3seal/s3seal/s3api/cors"
	"github.com/s3seal/s3seal/s3api/s3err"
	"github.com/s3seal/s3seal/sealstore"
)

// A settingRoute serves GET, PUT and DELETE of one setting that the
// object store keeps and enforces (sealstore.Setting): tags, Object Lock,
// CORS, lifecycle, website. A PUT's body is read and verified like every
// XML body (signature, Content-MD5, size) and judged by check before the
// store sees it; a GET's answer is decoded into the operation's document
// and encoded anew (subdocs.go), so the client gets what s3seal
// understood, not the store's bytes. What one setting needs beyond that
// is its own handler's (lockretention.go) or its judge and changed hooks.
type settingRoute struct {
	setting  sealstore.Setting
	admin    bool // only credentials with "admin": true change it
	adminPut bool // PUT only for admins (a default retention cannot be taken back)
	// doc is the GET answer's document (subdocs.go).
	doc func() document
	// check judges a PUT's body; a document it returns is put in its
	// place (the lock documents, lockdoc.go), nil puts the body.
	check func(body []byte) ([]byte, error)
	limit int64 // a PUT body's limit when not maxXMLBody
	// judge, when set, answers what S3 answers of the bucket before a PUT
	// whose body check took (ObjectLockConfiguration: versioning).
	judge func(s *Server, req *request) error
	// changed, when set, is told of a PUT or DELETE sent to the store
	// (the caches of the rules s3seal applies itself forget the bucket).
	changed func(s *Server, bucket string)
	// handle, when set, serves the setting instead (retention and legal
	// hold, which are judged on their object version: lockretention.go).
	handle func(s *Server, rt settingRoute) handler
	// noContent answers a PUT with 204, as AWS does for PutBucketTagging.
	noContent bool
	// lockToken passes x-amz-bucket-object-lock-token on.
	lockToken bool
}

// settingRoutes are the settings s3seal serves, routed by routes.go.
var settingRoutes = map[sealstore.Setting]settingRoute{
	sealstore.ObjectTagging: {setting: sealstore.ObjectTagging,
		doc:   func() document { return &tagDoc{} },
		check: func(b []byte) ([]byte, error) { _, err := parseTagBody(b, maxObjectTags); return nil, err }},
	sealstore.ObjectRetention: {setting: sealstore.ObjectRetention,
		doc: func() document { return &retentionDoc{} }, check: checkRetention, handle: (*Server).lockSettingHandler},
	sealstore.ObjectLegalHold: {setting: sealstore.ObjectLegalHold,
		doc: func() document { return &legalHoldDoc{} }, check: checkLegalHold, handle: (*Server).lockSettingHandler},
	sealstore.BucketTagging: {setting: sealstore.BucketTagging, noContent: true,
		doc:   func() document { return &tagDoc{} },
		check: func(b []byte) ([]byte, error) { _, err := parseBucketTagBody(b); return nil, err }},
	sealstore.BucketObjectLock: {setting: sealstore.BucketObjectLock, adminPut: true, lockToken: true,
		doc: func() document { return &lockConfigDoc{} }, check: checkLockConfig, judge: (*Server).lockBucketState},
	sealstore.BucketCORS: {setting: sealstore.BucketCORS, admin: true,
		doc: func() document { return &corsDoc{} }, check: func(b []byte) ([]byte, error) { return nil, checkCORS(b) }, limit: cors.MaxBody,
		changed: func(s *Server, bucket string) { s.cors.forget(bucket) }},
	sealstore.BucketLifecycle: {setting: sealstore.BucketLifecycle, admin: true,
		doc: func() document { return &lifecycleDoc{} }, check: checkLifecycle,
		changed: func(s *Server, bucket string) { s.lifecycle.forget(bucket) }},
	sealstore.BucketWebsite: {setting: sealstore.BucketWebsite, admin: true,
		doc: func() document { return &websiteDoc{} }, check: checkWebsite, limit: maxWebsiteBody},
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

// setting is the handler of k's requests.
func (s *Server) setting(k sealstore.Setting) handler {
	sr := settingRoutes[k]
	if sr.handle != nil {
		return sr.handle(s, sr)
	}
	return s.settingHandler(sr)
}

// settingHandler serves a setting that needs nothing of its object
// version: read, put or removed as the store keeps it.
func (s *Server) settingHandler(sr settingRoute) handler {
	return func(req *request) error {
		ref, err := s.settingRequest(req, sr)
		if err != nil {
			return err
		}
		ctx := req.r.Context()
		var d sealstore.SettingDoc
		switch req.r.Method {
		case http.MethodGet:
			d, err = s.store.Setting(ctx, sr.setting, ref)
		case http.MethodPut:
			var body []byte
			if body, err = s.settingBody(req, sr); err != nil {
				return err
			}
			if sr.judge != nil {
				if err := sr.judge(s, req); err != nil {
					return err
				}
			}
			var o sealstore.SettingOptions
			if sr.lockToken {
				o.LockToken = req.r.Header.Get("X-Amz-Bucket-Object-Lock-Token")
			}
			d, err = s.store.PutSetting(ctx, sr.setting, ref, body, o)
		case http.MethodDelete:
			d, err = s.store.DeleteSetting(ctx, sr.setting, ref)
		}
		if req.r.Method != http.MethodGet && sr.changed != nil {
			sr.changed(s, req.bucket)
		}
		if err != nil {
			return s.settingErr(req, sr, ref, err)
		}
		return s.answerSetting(req, sr, d, nil)
	}
}

// settingRequest answers what every setting request answers before its
// body is read: 501 on a store without settings (before anything else),
// the admin rules, the key and the version id asked for.
func (s *Server) settingRequest(req *request, sr settingRoute) (sealstore.SettingRef, error) {
	ref := sealstore.SettingRef{Bucket: req.bucket}
	if !s.store.HasSettings() {
		return ref, s3err.New(s3err.NotImplemented, "s3seal does not implement ?"+sr.setting.Param()+" on this backend.")
	}
	name := sr.setting.Param()
	// Reading a configuration is open to the bucket's readers (s3cmd
	// info, the console and SDK tools ask for it); changing it is for
	// admins, since the object store enforces it against everyone.
	if sr.admin && !req.cred.Admin && req.r.Method != http.MethodGet {
		return ref, s3err.New(s3err.AccessDenied, "Only credentials marked \"admin\": true may change ?"+name+" (it is enforced by the object store).")
	}
	if sr.adminPut && req.r.Method == http.MethodPut && !req.cred.Admin {
		return ref, s3err.New(s3err.AccessDenied, "Only credentials marked \"admin\": true may change ?"+name+" (a default retention cannot be taken back).")
	}
	if !sr.setting.OfObject() {
		return ref, nil
	}
	if err := sealstore.CheckKey(req.key); err != nil {
		return ref, err
	}
	ref.Key = req.key
	if sr.setting == sealstore.ObjectRetention {
		if err := checkBypass(req); err != nil {
			return ref, err
		}
	}
	if v, ok := req.r.URL.Query()["versionId"]; ok {
		vid, err := checkVersionID(v[0])
		if err != nil {
			return ref, err
		}
		ref.VersionID = vid
	}
	return ref, nil
}

// settingBody reads and judges a PUT's document.
func (s *Server) settingBody(req *request, sr settingRoute) ([]byte, error) {
	limit := int64(maxXMLBody)
	if sr.limit > 0 {
		limit = sr.limit
	}
	body, err := readXMLBody(req, limit)
	if err != nil {
		return nil, err
	}
	if sr.check == nil {
		return body, nil
	}
	canon, err := sr.check(body)
	if err != nil || canon == nil {
		return body, err
	}
	return canon, nil
}

// settingErr is the client's answer to a setting request the store
// refused or failed, about ref (the version it was pinned to, if any).
func (s *Server) settingErr(req *request, sr settingRoute, ref sealstore.SettingRef, err error) error {
	if sr.setting.OfObject() {
		err = s.missingObject(req, ref, err)
		err = s.subresourceMarkerErr(req, ref.VersionID, err)
	}
	return forwardErr(err)
}

// answerSetting answers a setting request the store took: the version it
// acted on, and a GET's document as s3seal understood it (doc, when the
// caller has it already, else the store's answer decoded).
func (s *Server) answerSetting(req *request, sr settingRoute, d sealstore.SettingDoc, doc []byte) error {
	if sr.setting.OfObject() {
		subresourceVersion(req.w.Header(), d.VersionID, req.r.URL.Query().Get("versionId"))
	}
	switch req.r.Method {
	case http.MethodGet:
		if doc == nil {
			var ok bool
			if doc, ok = answerDoc(sr.doc(), d.Body); !ok {
				return s3err.New(s3err.InternalError, "The object store answered ?"+sr.setting.Param()+" with something other than its document; it was not passed on.")
			}
		}
		req.w.Header().Set("Content-Type", "application/xml")
		req.w.WriteHeader(http.StatusOK)
		_, _ = req.w.Write(doc)
	case http.MethodDelete:
		req.w.WriteHeader(http.StatusNoContent)
	case http.MethodPut:
		if sr.noContent {
			req.w.WriteHeader(http.StatusNoContent)
		} else {
			req.w.WriteHeader(http.StatusOK)
		}
	}
	return nil
}

// forwardErr passes the store's answer to a setting request on: request
// errors (4xx) with their code and message, since they are about the
// configuration the client sent; server errors as ServiceUnavailable.
func forwardErr(err error) error {
	if ae := absentDoc(err); ae != nil {
		return ae
	}
	var be *sealstore.StoreError
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

// missingObject turns a store's failure (5xx) on an object's setting
// into NoSuchKey when the object is not there: some stores (moto) answer
// 500 to DELETE ?tagging of a missing key where S3 answers 404 NoSuchKey,
// and the client's answer must not depend on the store. A version named
// by id is the store's to judge; other errors pass unchanged.
func (s *Server) missingObject(req *request, ref sealstore.SettingRef, err error) error {
	var be *sealstore.StoreError
	if ref.VersionID != "" || !errors.As(err, &be) || be.StatusCode < 500 {
		return err
	}
	if _, herr := s.store.ObjectLock(req.r.Context(), req.bucket, req.key, ""); sealstore.IsNotFound(herr) {
		return s3err.New(s3err.NoSuchKey, "")
	}
	return err
}
