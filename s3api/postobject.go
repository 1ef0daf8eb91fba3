package s3api

import (
	"encoding/xml"
	"errors"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/s3seal/s3seal/access"
	"github.com/s3seal/s3seal/s3api/postpolicy"
	"github.com/s3seal/s3seal/s3api/s3err"
	"github.com/s3seal/s3seal/s3api/sigv4"
	"github.com/s3seal/s3seal/sealstore"
)

// postObject serves a browser upload: a POST of multipart/form-data to the
// bucket, authenticated by the signed POST policy it carries rather than
// by its headers. Nothing is stored unless the signature, the credential's
// access, the policy's expiration and every condition hold and the file
// arrived whole within content-length-range: the file is sealed into
// sealstore's spool like a PUT body, and published after its end.
func (s *Server) postObject(w http.ResponseWriter, r *http.Request) {
	if ri := infoFrom(r.Context()); ri != nil {
		ri.op = "PostObject"
	}
	if err := s.servePost(w, r); err != nil {
		writeError(w, r, err)
	}
}

func (s *Server) servePost(w http.ResponseWriter, r *http.Request) error {
	bucket, _ := s.target(r)
	ri := infoFrom(r.Context())
	if ri != nil {
		ri.bucket = bucket
	}
	form, file, err := readPostForm(r)
	if err != nil {
		return err
	}
	if form.get("key") == "" {
		return missingPostField("key")
	}
	// the access key the form names, verified or not
	claimed, _, _ := strings.Cut(form.get("x-amz-credential"), "/")
	if claimed == "" {
		claimed = form.get("awsaccesskeyid")
	}
	if ri != nil {
		ri.accessKey = claimed
	}
	// refuse records a refusal taken before access decides, as serve's
	// are: the POST is the PutObject of the form's key.
	refuse := func(who access.Principal, rule string, err error) error {
		return s.auditRefusal(r, who, "PutObject", bucket, form.get("key"), rule, err)
	}
	// An unsigned form (no signature field, no policy) is an anonymous
	// upload (anonymous.go): served only with AllowAnonymous, and only
	// where the bucket grants everyone WRITE.
	anon := s.cfg.AllowAnonymous && anonymousForm(form)
	res := &sigv4.Result{}
	if !anon {
		if res, err = s.verifier.VerifyPOST(form.auth()); err != nil {
			rule := ruleSignature
			if anonymousForm(form) {
				rule = ruleAnonymous
			}
			return refuse(access.Principal{AccessKey: claimed}, rule, err)
		}
	}
	release, err := s.acquire(r, res.AccessKey)
	if err != nil {
		return err
	}
	defer release()
	cred := s.cfg.Credentials[res.AccessKey]
	if !anon {
		if err := cred.check(accWrite, bucket); err != nil {
			return refuse(cred.principal(), ruleCredLists, err)
		}
	}
	rng := postpolicy.SizeRange{Max: -1}
	if !anon {
		pol, err := postpolicy.Parse(form.get("policy"))
		if err != nil {
			return err
		}
		if !time.Now().Before(pol.Expiration) {
			return refuse(cred.principal(), rulePostPolicy, postpolicy.Denied("Policy expired."))
		}
		form.expandFilename(file)
		if rng, err = pol.Check(form, bucket); err != nil {
			return refuse(cred.principal(), rulePostPolicy, err)
		}
	} else {
		form.expandFilename(file)
	}
	key := form.get("key")
	if key == "" {
		return missingPostField("key")
	}
	req := &request{w: w, r: r, bucket: bucket, key: key, auth: res, cred: cred}
	if !anon {
		req.who = cred.principal()
	}
	if err := s.authorize(req, "PutObject"); err != nil {
		return err
	}
	h := form.objectHeader()
	if err := postTagging(form, h); err != nil {
		return err
	}
	if err := s.authorizePost(r, res, cred, bucket, key, h); err != nil {
		return err
	}
	if err := writePolicy.check(h); err != nil {
		return err
	}
	meta, headers, err := objectHeaders(h)
	if err != nil {
		return err
	}
	protect, err := protectionOf(h, cred)
	if err != nil {
		return err
	}
	record, err := s.recordOfWrite(req, h)
	if err != nil {
		return err
	}
	checks, err := newBodyChecks(h)
	if err != nil {
		return err
	}
	// SSE-C and SSE-KMS fields mean what their headers mean on a PUT.
	ck, cerr := customerKeyFrom(h, ssecPrefix)
	if cerr != nil {
		return cerr
	}
	backendSSE(h, &headers)
	if err := s.bucketDefaultSSE(r.Context(), bucket, &headers, ck); err != nil {
		return err
	}
	sk, err := s.sealKeyOf(cred, bucket, key, &headers)
	if err != nil {
		return err
	}
	body := &rangedBody{r: file, max: rng.Max}
	finalize := checks.finalize(nil)
	info, err := s.store.Put(r.Context(), sealstore.PutInput{
		Bucket: bucket, Key: key, Body: body, Size: -1,
		ContentMD5: checks.exp.ContentMD5, Meta: meta, Headers: headers,
		KeyID: sk.keyID, KMSContext: sk.kmsContext, BucketKey: sk.bucketKey,
		Observe: checks.hasher, Protect: protect, CustomerKey: ck, Record: record,
		Finalize: func() (map[string]string, error) {
			if body.n < rng.Min {
				return nil, withExtra(s3err.New(s3err.EntityTooSmall, "Your proposed upload is smaller than the minimum allowed size"),
					"ProposedSize", itoa(body.n), "MinSizeAllowed", itoa(rng.Min))
			}
			return finalize()
		},
	})
	if err != nil {
		return err
	}
	setSSEHeaders(w.Header(), info, ck) // the object's encryption, as on a PUT
	postAnswer(w, r, form, bucket, key, info)
	return nil
}

// postAnswer answers a stored upload as S3 does: a 303 to
// success_action_redirect (or the older redirect) when it is an http(s)
// URL, with bucket, key and etag added to its query; else the status of
// success_action_status, 200, 201 (with a PostResponse document) or, by
// default and for any other value, 204.
func postAnswer(w http.ResponseWriter, r *http.Request, form *postForm, bucket, key string, info sealstore.ObjectInfo) {
	etag := quote(info.ETag)
	h := w.Header()
	h.Set("ETag", etag)
	h.Set("Location", objectURL(r, key))
	if checks := info.Checksums; len(checks) > 0 {
		setChecksumHeaders(h, info)
	}
	redirect := form.get("success_action_redirect")
	if redirect == "" {
		redirect = form.get("redirect")
	}
	if u, err := url.Parse(redirect); err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != "" {
		sep := "?"
		if strings.Contains(redirect, "?") {
			sep = "&"
		}
		q := "bucket=" + url.QueryEscape(bucket) + "&key=" + url.QueryEscape(key) + "&etag=" + url.QueryEscape(etag)
		h.Set("Location", redirect+sep+q)
		w.WriteHeader(http.StatusSeeOther)
		return
	}
	switch form.get("success_action_status") {
	case "200":
		w.WriteHeader(http.StatusOK)
	case "201":
		writeXML(w, http.StatusCreated, postResponse{Location: h.Get("Location"), Bucket: bucket, Key: key, ETag: etag})
	default:
		w.WriteHeader(http.StatusNoContent)
	}
}

// postResponse is a 201's body. AWS sends it without a namespace (unlike
// its other documents), and clients read it so: s3-tests finds its Key
// by the bare name.
type postResponse struct {
	XMLName  xml.Name `xml:"PostResponse"`
	Location string   `xml:"Location"`
	Bucket   string   `xml:"Bucket"`
	Key      string   `xml:"Key"`
	ETag     string   `xml:"ETag"`
}

// objectURL is the URL of key in the bucket the request addressed, the
// key escaped as S3 escapes it there ("/" as %2F).
func objectURL(r *http.Request, key string) string {
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	return scheme + "://" + r.Host + strings.TrimSuffix(r.URL.EscapedPath(), "/") + "/" + url.PathEscape(key)
}

func missingPostField(name string) *s3err.Error {
	return s3err.New(s3err.InvalidArgument,
		"Bucket POST must contain a field named '"+name+"'.  If it is specified, please check the order of the fields.")
}

// rangedBody is the file of a POST: more than max bytes (max >= 0) is
// EntityTooLarge, and a file cut before its closing boundary
// MalformedPOSTRequest, each as a read error, so that the PUT stores
// nothing; only a clean end of the file part is io.EOF.
type rangedBody struct {
	r   io.Reader
	n   int64
	max int64
}

func (b *rangedBody) Read(p []byte) (int, error) {
	if b.max >= 0 && int64(len(p)) > b.max-b.n+1 {
		p = p[:b.max-b.n+1]
	}
	k, err := b.r.Read(p)
	b.n += int64(k)
	if b.max >= 0 && b.n > b.max {
		return k, b.tooLarge()
	}
	if err != nil && err != io.EOF {
		var ae *s3err.Error
		if !errors.As(err, &ae) {
			// The form ended (or the connection broke) inside the file,
			// before its closing boundary.
			err = malformedPOST()
		}
	}
	return k, err
}

// maxProposedCount bounds how much of a file above content-length-range
// is read, and thrown away, to tell its size.
const maxProposedCount = 16 << 20

// tooLarge is EntityTooLarge for a file past the range's maximum: S3 names
// the file's size, so the rest of the file part is counted (when it ends
// cleanly within maxProposedCount) and discarded; nothing of it is kept.
func (b *rangedBody) tooLarge() *s3err.Error {
	e := s3err.New(s3err.EntityTooLarge, "")
	n, err := io.Copy(io.Discard, io.LimitReader(b.r, maxProposedCount+1))
	if err == nil && n <= maxProposedCount {
		withExtra(e, "ProposedSize", itoa(b.n+n))
	}
	return withExtra(e, "MaxSizeAllowed", itoa(b.max))
}

// withExtra returns e with the extra elements name/value pairs appended.
func withExtra(e *s3err.Error, nameValues ...string) *s3err.Error {
	for i := 0; i+1 < len(nameValues); i += 2 {
		e.Fields = append(e.Fields, sigv4.Field{Name: nameValues[i], Value: nameValues[i+1]})
	}
	return e
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// postTagging turns the form's tagging field, a Tagging document (unlike
// the x-amz-tagging header, a query string), into the x-amz-tagging header
// the object is stored with, checked as PutObjectTagging checks a
// document. An x-amz-tagging field as well adds its tags to it, so that a
// key in both is refused as a duplicate.
func postTagging(form *postForm, h http.Header) error {
	v := form.get("tagging")
	if strings.TrimSpace(v) == "" {
		return nil
	}
	tags, err := parseTagBody([]byte(v), maxObjectTags)
	if err != nil {
		return err
	}
	enc := encodeTags(tags)
	if old := h.Get("X-Amz-Tagging"); old != "" {
		enc = old + "&" + enc
	}
	h.Set("X-Amz-Tagging", enc)
	return nil
}

// anonymousForm reports whether a POST form carries no signature at all.
func anonymousForm(f *postForm) bool {
	for _, n := range []string{"policy", "x-amz-signature", "x-amz-credential", "x-amz-algorithm", "awsaccesskeyid", "signature"} {
		if _, ok := f.fields[n]; ok {
			return false
		}
	}
	return true
}
