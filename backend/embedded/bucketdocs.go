package embedded

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strings"
)

// Bucket documents on the embedded store: policy, CORS, lifecycle,
// website configuration, ownership controls and ACLs (bucket and object) are checked for their
// shape, kept and answered back. The embedded store enforces none of
// them: it has one user, s3seal.

// maxPolicy is S3's limit on a bucket policy.
const maxPolicy = 20 << 10

// bucketDoc is a document kept as sent.
type bucketDoc struct {
	check       func([]byte) error
	missing     string // error code of a GET when none is kept
	missingMsg  string
	contentType string
	putStatus   int
}

var bucketDocs = map[string]bucketDoc{
	"policy": {check: checkPolicy, missing: "NoSuchBucketPolicy", missingMsg: "The bucket policy does not exist.",
		contentType: "application/json", putStatus: http.StatusNoContent},
	"cors": {check: checkCORS, missing: "NoSuchCORSConfiguration", missingMsg: "The CORS configuration does not exist",
		contentType: "application/xml", putStatus: http.StatusOK},
	"lifecycle": {check: checkLifecycle, missing: "NoSuchLifecycleConfiguration", missingMsg: "The lifecycle configuration does not exist",
		contentType: "application/xml", putStatus: http.StatusOK},
	"website": {check: checkWebsite, missing: "NoSuchWebsiteConfiguration", missingMsg: "The specified bucket does not have a website configuration",
		contentType: "application/xml", putStatus: http.StatusOK},
	"ownershipControls": {check: checkOwnership, missing: "OwnershipControlsNotFoundError", missingMsg: "The bucket ownership controls were not found.",
		contentType: "application/xml", putStatus: http.StatusOK},
}

func (h *attrsHandler) serveBucket(w http.ResponseWriter, r *http.Request, bucket string) error {
	q := r.URL.Query()
	sub := ""
	for _, s := range []string{"object-lock", "tagging", "policy", "cors", "lifecycle", "ownershipControls", "acl", "website"} {
		if q.Has(s) {
			sub = s
		}
	}
	if bucket != "" && sub != "" && !h.bucketExists(r, bucket) {
		return errNoSuchBucket()
	}
	switch {
	case bucket == "":
	case sub == "object-lock":
		return h.serveObjectLock(w, r, bucket)
	case sub == "tagging":
		return h.serveBucketTagging(w, r, bucket)
	case sub == "acl":
		return h.serveACL(w, r, bucket, "", "", false)
	case sub != "":
		return h.serveDoc(w, r, bucket, sub)
	case r.Method == http.MethodPut && bareQuery(q):
		return h.serveCreateBucket(w, r, bucket)
	case r.Method == http.MethodDelete && bareQuery(q):
		rec := h.record(r)
		if rec.ok() {
			if err := h.a.dropBucket(bucket); err != nil {
				slog.Warn("embedded store: a deleted bucket's records stay", "bucket", bucket, "err", err)
			}
		}
		rec.replay(w)
		return nil
	case r.Method == http.MethodPost && q.Has("delete"):
		return h.serveDeleteObjects(w, r, bucket)
	case r.Method == http.MethodPut && q.Has("versioning"):
		return h.serveVersioning(w, r, bucket)
	}
	h.base.ServeHTTP(w, r)
	return nil
}

var ownerships = []string{"BucketOwnerPreferred", "ObjectWriter", "BucketOwnerEnforced"}

func ownershipDoc(v string) []byte {
	return []byte(`<OwnershipControls xmlns="` + s3XMLNS + `"><Rule><ObjectOwnership>` + v + `</ObjectOwnership></Rule></OwnershipControls>`)
}

// serveCreateBucket is CreateBucket: a new bucket starts with an empty
// record, its Object Lock, ACL and object ownership as asked. Object Lock
// enables versioning.
func (h *attrsHandler) serveCreateBucket(w http.ResponseWriter, r *http.Request, bucket string) error {
	lock := strings.EqualFold(strings.TrimSpace(r.Header.Get("X-Amz-Bucket-Object-Lock-Enabled")), "true")
	acl, err := aclFromHeaders(r.Header)
	if err != nil {
		return err
	}
	own := r.Header.Get("X-Amz-Object-Ownership")
	if own != "" && !slices.Contains(ownerships, own) {
		return &mpError{http.StatusBadRequest, "InvalidArgument", "Invalid x-amz-object-ownership header: " + own}
	}
	rec := h.record(r)
	if rec.ok() {
		if err := h.a.dropBucket(bucket); err != nil {
			return err
		}
		err := h.a.updateBucket(bucket, func(b *bucketAttrs) error {
			b.LockEnabled, b.ACL = lock, acl
			if own != "" {
				b.Docs = map[string][]byte{"ownershipControls": ownershipDoc(own)}
			}
			return nil
		})
		if err != nil {
			return err
		}
		if lock {
			vr := inner(r.Context(), r, http.MethodPut, "/"+bucket, url.Values{"versioning": {""}})
			body := `<VersioningConfiguration xmlns="` + s3XMLNS + `"><Status>Enabled</Status></VersioningConfiguration>`
			vr.Body, vr.ContentLength = io.NopCloser(strings.NewReader(body)), int64(len(body))
			if vrec := h.record(vr); !vrec.ok() {
				slog.Warn("embedded store: a bucket with Object Lock could not enable versioning", "bucket", bucket, "status", vrec.status)
			}
		}
	}
	rec.replay(w)
	return nil
}

// serveVersioning refuses to suspend versioning in a bucket with Object
// Lock, as S3 does; anything else goes to the inner store.
func (h *attrsHandler) serveVersioning(w http.ResponseWriter, r *http.Request, bucket string) error {
	b, err := h.a.bucket(bucket)
	if err != nil {
		return err
	}
	if b.LockEnabled {
		body, err := readSubBody(r, maxSubBody)
		if err != nil {
			return err
		}
		var v struct {
			Status string `xml:"Status"`
		}
		if xml.Unmarshal(body, &v) == nil && v.Status == "Suspended" {
			return &mpError{http.StatusConflict, "InvalidBucketState", "An Object Lock configuration is present on this bucket, so the versioning state cannot be changed."}
		}
		r.Body, r.ContentLength = io.NopCloser(bytes.NewReader(body)), int64(len(body))
	}
	h.base.ServeHTTP(w, r)
	return nil
}

func (h *attrsHandler) serveDoc(w http.ResponseWriter, r *http.Request, bucket, sub string) error {
	d := bucketDocs[sub]
	switch r.Method {
	case http.MethodGet:
		b, err := h.a.bucket(bucket)
		if err != nil {
			return err
		}
		doc, ok := b.Docs[sub]
		if !ok {
			return &mpError{http.StatusNotFound, d.missing, d.missingMsg}
		}
		w.Header().Set("Content-Type", d.contentType)
		w.WriteHeader(http.StatusOK)
		w.Write(doc)
		return nil
	case http.MethodPut:
		body, err := readSubBody(r, maxSubBody)
		if err != nil {
			return err
		}
		if err := d.check(body); err != nil {
			return err
		}
		if err := h.a.updateBucket(bucket, func(b *bucketAttrs) error {
			if b.Docs == nil {
				b.Docs = map[string][]byte{}
			}
			b.Docs[sub] = body
			return nil
		}); err != nil {
			return err
		}
		w.WriteHeader(d.putStatus)
	case http.MethodDelete:
		if err := h.a.updateBucket(bucket, func(b *bucketAttrs) error { delete(b.Docs, sub); return nil }); err != nil {
			return err
		}
		w.WriteHeader(http.StatusNoContent)
	default:
		return errMethod()
	}
	return nil
}

func checkPolicy(b []byte) error {
	if len(b) > maxPolicy {
		return &mpError{http.StatusBadRequest, "MalformedPolicy", "Policy exceeds the maximum allowed document size."}
	}
	var m map[string]json.RawMessage
	if !bytes.HasPrefix(bytes.TrimSpace(b), []byte("{")) || json.Unmarshal(b, &m) != nil {
		return &mpError{http.StatusBadRequest, "MalformedPolicy", "Policies must be valid JSON and the first byte must be '{'"}
	}
	return nil
}

// decodeRoot decodes b into v, whose root element must be named root.
func decodeRoot(b []byte, root string, v any) error {
	var start struct{ XMLName xml.Name }
	if xml.Unmarshal(b, &start) != nil || start.XMLName.Local != root || xml.Unmarshal(b, v) != nil {
		return errMalformedXML
	}
	return nil
}

func checkCORS(b []byte) error {
	var c struct {
		Rules []struct {
			Methods []string `xml:"AllowedMethod"`
			Origins []string `xml:"AllowedOrigin"`
		} `xml:"CORSRule"`
	}
	if err := decodeRoot(b, "CORSConfiguration", &c); err != nil {
		return err
	}
	if len(c.Rules) == 0 || len(c.Rules) > 100 {
		return errMalformedXML
	}
	for _, rule := range c.Rules {
		if len(rule.Methods) == 0 || len(rule.Origins) == 0 {
			return errMalformedXML
		}
		for _, m := range rule.Methods {
			if !slices.Contains([]string{"GET", "PUT", "POST", "DELETE", "HEAD"}, m) {
				return &mpError{http.StatusBadRequest, "InvalidRequest", "Found unsupported HTTP method in CORS config. Unsupported method is " + m}
			}
		}
	}
	return nil
}

func checkLifecycle(b []byte) error {
	var c struct {
		Rules []struct {
			Status string `xml:"Status"`
		} `xml:"Rule"`
	}
	if err := decodeRoot(b, "LifecycleConfiguration", &c); err != nil {
		return err
	}
	if len(c.Rules) == 0 || len(c.Rules) > 1000 {
		return errMalformedXML
	}
	for _, rule := range c.Rules {
		if rule.Status != "Enabled" && rule.Status != "Disabled" {
			return errMalformedXML
		}
	}
	return nil
}

func checkOwnership(b []byte) error {
	var c struct {
		Rules []struct {
			ObjectOwnership string `xml:"ObjectOwnership"`
		} `xml:"Rule"`
	}
	if err := decodeRoot(b, "OwnershipControls", &c); err != nil {
		return err
	}
	if len(c.Rules) != 1 || !slices.Contains(ownerships, c.Rules[0].ObjectOwnership) {
		return errMalformedXML
	}
	return nil
}

// checkWebsite checks a website configuration's shape; s3api judged its
// content (s3api/website.go).
func checkWebsite(b []byte) error {
	var c struct {
		Index    *struct{} `xml:"IndexDocument"`
		Redirect *struct{} `xml:"RedirectAllRequestsTo"`
	}
	if err := decodeRoot(b, "WebsiteConfiguration", &c); err != nil {
		return err
	}
	if (c.Index == nil) == (c.Redirect == nil) {
		return errMalformedXML
	}
	return nil
}
