package s3api

import (
	"encoding/base64"
	"encoding/hex"
	"encoding/xml"
	"errors"
	"log/slog"
	"net/http"
	"strings"

	"github.com/s3seal/s3seal/checksum"
	"github.com/s3seal/s3seal/s3api/s3err"
	"github.com/s3seal/s3seal/s3api/sigv4"
	"github.com/s3seal/s3seal/sealstore"
)

type errorBody struct {
	XMLName   xml.Name   `xml:"Error"`
	Code      s3err.Code `xml:"Code"`
	Message   string     `xml:"Message"`
	Extra     []errExt   `xml:",omitempty"`
	Resource  string     `xml:"Resource,omitempty"`
	RequestID string     `xml:"RequestId"`

	// S3 names a bad Content-MD5 (InvalidDigest) and, on BadDigest, the
	// digest it calculated (base64) and the one it expected (hex).
	ContentMD5       string `xml:"Content-MD5,omitempty"`
	CalculatedDigest string `xml:"CalculatedDigest,omitempty"`
	ExpectedDigest   string `xml:"ExpectedDigest,omitempty"`
}

// toAPIError turns any error from the layers below into the S3 error the
// client gets. Unknown errors become InternalError; their detail goes to
// the log, not to the client.
//
// This file is the one place an error decided by another layer passes on
// with its own code and status (s3err.Forward): sigv4's and checksum's,
// which carry their status, and the store's refusals. Everywhere else the
// status is the table's (s3err.New; TestErrorsFromTable).
func toAPIError(err error) *s3err.Error {
	var ae *s3err.Error
	if errors.As(err, &ae) {
		return ae
	}
	var se *sigv4.Error
	if errors.As(err, &se) {
		e := s3err.Forward(se.Code, se.StatusCode, se.Message)
		e.Fields = se.Fields
		return e
	}
	var ce *checksum.Error
	if errors.As(err, &ce) {
		return s3err.Forward(ce.Code, ce.StatusCode, ce.Message)
	}
	if sealstore.IsStall(err) {
		// The store stopped answering, wherever it was read (a listing, a
		// segment of an object): what S3 answers when it is overloaded.
		return s3err.New(s3err.ServiceUnavailable, "The object store stopped answering. Please try again.")
	}
	var ste *sealstore.Error
	if errors.As(err, &ste) {
		// sealstore's codes are s3seal's own: the table's status.
		e := s3err.New(s3err.Code(ste.Code), ste.Message)
		e.CalculatedDigest = ste.CalculatedDigest
		for _, f := range ste.Fields {
			e.Fields = append(e.Fields, sigv4.Field{Name: f[0], Value: f[1]})
		}
		return e
	}
	var be *sealstore.StoreError
	if errors.As(err, &be) {
		return fromBackend(be)
	}
	return s3err.New(s3err.InternalError, "")
}

// fromBackend passes the backend's S3 error through when it is one a
// client understands, and hides transport detail otherwise.
func fromBackend(be *sealstore.StoreError) *s3err.Error {
	if ae := lockRefusal(be); ae != nil {
		return ae
	}
	if ae := sizeRefusal(be); ae != nil {
		return ae
	}
	if code := sealstore.CredentialRefusal(be); code != "" {
		// A 403, not a 5xx: every client retries a 5xx, rclone for many
		// minutes (aws-sdk-go v1 backs off up to 300 s an attempt), and
		// no retry mends a wrong setting; a 403's words are shown at once.
		return s3err.New(s3err.AccessDenied, credentialWords(code))
	}
	switch code := s3err.Code(be.Code); code {
	case "":
		if sealstore.IsVirtualHostFailure(be) {
			return s3err.New(s3err.InternalError, "The object store's name for this bucket (bucket.host) does not resolve: "+
				"s3seal addresses the store virtual-hosted style, and a store that serves buckets by path needs s3seal's --backend-path-style.")
		}
		return s3err.New(s3err.ServiceUnavailable, "The object store did not answer. Please try again.")
	case "NotFound": // a HEAD's 404, which has no body to name a code
		return s3err.New(s3err.NoSuchKey, "")
	case s3err.NotModified, s3err.PreconditionFailed, s3err.NoSuchKey, s3err.NoSuchBucket,
		s3err.BucketNotEmpty, s3err.BucketAlreadyExists, s3err.BucketAlreadyOwnedByYou,
		s3err.InvalidBucketName, s3err.NoSuchUpload, s3err.SlowDown, s3err.ServiceUnavailable,
		s3err.AccessDenied, s3err.InvalidRange, s3err.EntityTooSmall, s3err.EntityTooLarge,
		s3err.ConditionalRequestConflict, s3err.InvalidStorageClass, s3err.InvalidObjectState:
		return s3err.New(code, "")
	case s3err.InvalidArgument, s3err.KeyTooLongError, s3err.NotImplemented:
		// The store cannot take this key or request as the client gave
		// it (the embedded store's limits name themselves): its words.
		if be.StatusCode >= 400 && be.StatusCode < 500 || code == s3err.NotImplemented {
			return s3err.New(code, storeWords(be))
		}
	}
	if be.StatusCode >= 500 {
		return s3err.New(s3err.ServiceUnavailable, "The object store failed ("+be.Code+"). Please try again.")
	}
	return s3err.New(s3err.InternalError, "The object store refused the request ("+be.Code+").")
}

// confirmCredentialRefusal is err, unless it is the store's refusal of
// the request's signature (sealstore.CredentialRefusal) while the store
// takes s3seal's credentials for others: that request alone was refused
// (a store's bug with an unusual key, or a hostile store), and the
// answer must not send the operator after a secret that is right.
func confirmCredentialRefusal(r *http.Request, err error) error {
	code := sealstore.CredentialRefusal(err)
	if code == "" {
		return err
	}
	ri := infoFrom(r.Context())
	if ri == nil || ri.credentials == nil || ri.credentials(r.Context()) != nil {
		return err
	}
	slog.WarnContext(r.Context(), "the object store refused one request's signature while it takes s3seal's credentials for others",
		"code", code, "method", r.Method, "path", r.URL.Path, "err", err)
	return s3err.New(s3err.InternalError, "The object store refused this request ("+code+"), though it takes s3seal's credentials for others.")
}

// credentialWords is the answer to a store's refusal of s3seal's own
// credentials (code, sealstore.CredentialRefusal): the client's request
// was fine; s3seal's configuration is not.
func credentialWords(code string) string {
	if code == "RequestTimeTooSkewed" {
		return "The object store refused s3seal's requests (RequestTimeTooSkewed): the clock of s3seal's machine is too far from the store's. Your own request was accepted."
	}
	return "The object store refused the backend credentials s3seal signs with (" + code + "): " +
		"check s3seal's --backend-access-key and --backend-secret-key-file (and --backend-region). Your own credentials were accepted; this is s3seal's configuration."
}

// storeRefusal passes a store's 4xx refusal on with its code and status.
// Its words pass when the code is one s3seal's table knows (they name what
// was wrong with the request: a malformed tag, a lock rule), except for
// the NoSuch... codes, which read as AWS words them whatever the store
// says (a store's "The specified bucket does not exist" without the
// period, RGW's or moto's own phrasing), and except for words that name
// an identity of the store's (an ARN, a user, an account number): the
// table's words then. A code the table does not know passes with words of
// s3seal's: the store's are its own business (an IAM denial names the
// role and account s3seal uses).
func storeRefusal(be *sealstore.StoreError) *s3err.Error {
	e, known := s3err.Lookup(s3err.Code(be.Code))
	if !known {
		return s3err.Forward(be.Code, be.StatusCode, "The object store refused the request.")
	}
	if strings.HasPrefix(be.Code, "NoSuch") || strings.HasSuffix(be.Code, "NotFoundError") || namesIdentity(be.Message) {
		status := e.StatusCode
		if be.StatusCode > 0 {
			status = be.StatusCode
		}
		return s3err.Forward(be.Code, status, e.Message)
	}
	return s3err.Forward(be.Code, be.StatusCode, be.Message)
}

// storeWords are a store's words for its error, "" (the table's) when
// they name an identity of the store's.
func storeWords(be *sealstore.StoreError) string {
	if namesIdentity(be.Message) {
		return ""
	}
	return be.Message
}

// namesIdentity reports words that name an identity of the store's: an
// ARN, an IAM user or role, or a 12-digit account number.
func namesIdentity(msg string) bool {
	if strings.Contains(msg, "arn:") || strings.Contains(msg, "User:") || strings.Contains(msg, "assumed-role") {
		return true
	}
	run := 0
	for _, c := range msg {
		if c >= '0' && c <= '9' {
			if run++; run >= 12 {
				return true
			}
		} else {
			run = 0
		}
	}
	return false
}

// storeDenial passes a store's refusal of access (a 401 or 403) on with
// its code, in S3's words for AccessDenied and with its status: a store's
// own words name its account and policy.
func storeDenial(be *sealstore.StoreError) *s3err.Error {
	d := s3err.New(s3err.AccessDenied, "")
	return s3err.Forward(be.Code, d.StatusCode, d.Message)
}

// writeError renders err as an S3 XML error body.
func writeError(w http.ResponseWriter, r *http.Request, err error) {
	err = confirmCredentialRefusal(r, err)
	ae := toAPIError(err)
	noteErr(r, err)
	reqID := w.Header().Get("x-amz-request-id")
	switch {
	case sealstore.CredentialRefusal(err) != "":
		slog.WarnContext(r.Context(), "the object store refuses s3seal's backend credentials; check --backend-access-key and --backend-secret-key-file",
			"code", sealstore.CredentialRefusal(err), "method", r.Method, "path", r.URL.Path, "request_id", reqID, "err", err)
	case ae.Code == s3err.InternalError || ae.StatusCode >= 500:
		slog.ErrorContext(r.Context(), "request failed", "method", r.Method, "path", r.URL.Path, "code", ae.Code, "request_id", reqID, "err", err)
	case errors.Is(err, sealstore.ErrIntegrity):
		// An object s3seal will not serve (no s3seal metadata): the
		// operator hears of it as the client does.
		slog.WarnContext(r.Context(), "request refused", "method", r.Method, "path", r.URL.Path, "code", ae.Code, "request_id", reqID, "err", err)
	case ae.StatusCode == http.StatusForbidden:
		logRefusal(r, ae, err)
	default:
		slog.DebugContext(r.Context(), "request refused", "method", r.Method, "path", r.URL.Path, "code", ae.Code, "err", err)
	}
	if ae.StatusCode == http.StatusNotModified || r.Method == http.MethodHead {
		w.WriteHeader(ae.StatusCode)
		return
	}
	body := errorBody{Code: ae.Code, Message: ae.Message, Extra: errExts(ae.Fields), Resource: ae.Resource, RequestID: reqID}
	digestFields(&body, ae, r.Header)
	if body.Resource == "" {
		body.Resource = r.URL.Path
	}
	writeXML(w, ae.StatusCode, body)
}

// errorElement is err as the <Error> element that ends a 200 answer whose
// status line went out early (keep-alive), as S3 sends it.
func errorElement(w http.ResponseWriter, r *http.Request, err error) errorBody {
	ae := toAPIError(err)
	noteErr(r, err)
	slog.ErrorContext(r.Context(), "request failed after its status line", "method", r.Method, "path", r.URL.Path, "code", ae.Code,
		"request_id", w.Header().Get("x-amz-request-id"), "err", err)
	return errorBody{Code: ae.Code, Message: ae.Message, Resource: r.URL.Path, RequestID: w.Header().Get("x-amz-request-id")}
}

// writeXML renders v as an XML document with the given status.
func writeXML(w http.ResponseWriter, status int, v any) {
	out, err := xml.Marshal(v)
	if err != nil {
		slog.Error("xml encoding failed", "err", err)
		w.WriteHeader(http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/xml")
	w.WriteHeader(status)
	_, _ = w.Write([]byte(xml.Header))
	_, _ = w.Write(out)
}

// errExt is one extra element of an S3 error body, named by the
// field (ArgumentName, HeadersNotSigned, X-Amz-Expires, ...).
type errExt struct {
	XMLName xml.Name
	Value   string `xml:",chardata"`
}

// errExts renders an error's extra fields as elements, in order.
func errExts(fs []sigv4.Field) []errExt {
	if len(fs) == 0 {
		return nil
	}
	out := make([]errExt, len(fs))
	for i, f := range fs {
		out[i] = errExt{XMLName: xml.Name{Local: f.Name}, Value: f.Value}
	}
	return out
}

// digestFields adds to an error document what S3 says of a Content-MD5 it
// refused: the header's value on InvalidDigest, and on a BadDigest for
// Content-MD5 the digest calculated (base64) and the one expected (the
// header's, in hex).
func digestFields(body *errorBody, ae *s3err.Error, h http.Header) {
	v := h.Get("Content-Md5")
	switch {
	case ae.Code == s3err.InvalidDigest:
		body.ContentMD5 = v
	case ae.Code == s3err.BadDigest && ae.CalculatedDigest != "":
		body.CalculatedDigest = ae.CalculatedDigest
		if b, err := base64.StdEncoding.DecodeString(v); err == nil {
			body.ExpectedDigest = hex.EncodeToString(b)
		}
	}
}
