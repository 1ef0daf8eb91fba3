package s3api

import (
	"encoding/xml"
	"errors"
	"log/slog"
	"net/http"
	"strings"

	"github.com/s3seal/s3seal/backend"
	"github.com/s3seal/s3seal/s3api/checksum"
	"github.com/s3seal/s3seal/s3api/sigv4"
	"github.com/s3seal/s3seal/sealstore"
)

// APIError is an S3 error as the client sees it: a code, an HTTP status
// and a message rendered in the S3 XML error body.
type APIError struct {
	Code       string
	StatusCode int
	Message    string
	Resource   string
	Fields     []sigv4.Field // extra elements of the body, as S3 adds them
	// CalculatedDigest is the MD5 (base64) of a body whose Content-MD5
	// did not match (BadDigest).
	CalculatedDigest string
	// why is the rule that refused the request, for the log only (the
	// client reads S3's words).
	why string
}

func (e *APIError) Error() string { return e.Code + ": " + e.Message }

// errorTable holds the status and default message of every code s3seal
// answers with itself.
var errorTable = map[string]APIError{
	"AccessDenied":               {StatusCode: 403, Message: "Access Denied."},
	"BadDigest":                  {StatusCode: 400, Message: "The Content-MD5 you specified did not match what we received."},
	"BucketAlreadyExists":        {StatusCode: 409, Message: "The requested bucket name is not available. The bucket namespace is shared by all users of the system. Please select a different name and try again."},
	"BucketAlreadyOwnedByYou":    {StatusCode: 409, Message: "Your previous request to create the named bucket succeeded and you already own it."},
	"BucketNotEmpty":             {StatusCode: 409, Message: "The bucket you tried to delete is not empty."},
	"ConditionalRequestConflict": {StatusCode: 409, Message: "A conflicting operation occurred. If using PutObject you can retry the request. If using multipart upload you should initiate another CreateMultipartUpload request and re-upload each part."},
	"EntityTooSmall":             {StatusCode: 400, Message: "Your proposed upload is smaller than the minimum allowed object size."},
	"EntityTooLarge":             {StatusCode: 400, Message: "Your proposed upload exceeds the maximum allowed object size."},
	"IncompleteBody":             {StatusCode: 400, Message: "You did not provide the number of bytes specified by the Content-Length HTTP header."},
	"InternalError":              {StatusCode: 500, Message: "We encountered an internal error. Please try again."},
	"InvalidArgument":            {StatusCode: 400, Message: "Invalid Argument."},
	"InvalidBucketName":          {StatusCode: 400, Message: "The specified bucket is not valid."},
	"InvalidDigest":              {StatusCode: 400, Message: "The Content-MD5 you specified was invalid."},
	"InvalidPart":                {StatusCode: 400, Message: "One or more of the specified parts could not be found.  The part may not have been uploaded, or the specified entity tag may not match the part's entity tag."},
	"InvalidPartNumber":          {StatusCode: 416, Message: "The requested partnumber is not satisfiable."},
	"InvalidPartOrder":           {StatusCode: 400, Message: "The list of parts was not in ascending order. Parts must be ordered by part number."},
	"InvalidRange":               {StatusCode: 416, Message: "The requested range is not satisfiable"},
	"InvalidRequest":             {StatusCode: 400, Message: "Invalid Request."},
	"InvalidStorageClass":        {StatusCode: 400, Message: "The storage class you specified is not valid."},
	"InvalidObjectState":         {StatusCode: 403, Message: "The operation is not valid for the object's storage class."},
	"KeyTooLongError":            {StatusCode: 400, Message: "Your key is too long."},
	"MalformedXML":               {StatusCode: 400, Message: "The XML you provided was not well-formed or did not validate against our published schema."},
	"MetadataTooLarge":           {StatusCode: 400, Message: "Your metadata headers exceed the maximum allowed metadata size."},
	"MaxMessageLengthExceeded":   {StatusCode: 400, Message: "Your request was too big."},
	"MethodNotAllowed":           {StatusCode: 405, Message: "The specified method is not allowed against this resource."},
	"MissingContentLength":       {StatusCode: 411, Message: "You must provide the Content-Length HTTP header."},
	"NoSuchBucket":               {StatusCode: 404, Message: "The specified bucket does not exist."},
	"NoSuchKey":                  {StatusCode: 404, Message: "The specified key does not exist."},
	"NoSuchUpload":               {StatusCode: 404, Message: "The specified multipart upload does not exist. The upload ID may be invalid, or the upload may have been aborted or completed."},
	"NoSuchVersion":              {StatusCode: 404, Message: "The specified version does not exist."},
	"NotImplemented":             {StatusCode: 501, Message: "A header you provided implies functionality that is not implemented."},
	"NotModified":                {StatusCode: 304, Message: "Not Modified."},
	"PreconditionFailed":         {StatusCode: 412, Message: "At least one of the pre-conditions you specified did not hold."},
	"ServiceUnavailable":         {StatusCode: 503, Message: "Please reduce your request rate."},
	"RequestTimeout":             {StatusCode: 400, Message: "Your socket connection to the server was not read from or written to within the timeout period."},
	"SlowDown":                   {StatusCode: 503, Message: "Please reduce your request rate."},
}

// apiErr builds an APIError for a code from the table; msg overrides the
// default message when not empty.
func apiErr(code, msg string) *APIError {
	e, ok := errorTable[code]
	if !ok {
		e = errorTable["InternalError"]
	}
	e.Code = code
	if msg != "" {
		e.Message = msg
	}
	return &e
}

type errorBody struct {
	XMLName   xml.Name `xml:"Error"`
	Code      string   `xml:"Code"`
	Message   string   `xml:"Message"`
	Extra     []errExt `xml:",omitempty"`
	Resource  string   `xml:"Resource,omitempty"`
	RequestID string   `xml:"RequestId"`

	// S3 names a bad Content-MD5 (InvalidDigest) and, on BadDigest, the
	// digest it calculated (base64) and the one it expected (hex).
	ContentMD5       string `xml:"Content-MD5,omitempty"`
	CalculatedDigest string `xml:"CalculatedDigest,omitempty"`
	ExpectedDigest   string `xml:"ExpectedDigest,omitempty"`
}

// toAPIError turns any error from the layers below into the S3 error the
// client gets. Unknown errors become InternalError; their detail goes to
// the log, not to the client.
func toAPIError(err error) *APIError {
	var ae *APIError
	if errors.As(err, &ae) {
		return ae
	}
	var se *sigv4.Error
	if errors.As(err, &se) {
		return &APIError{Code: se.Code, StatusCode: se.StatusCode, Message: se.Message, Fields: se.Fields}
	}
	var ce *checksum.Error
	if errors.As(err, &ce) {
		return &APIError{Code: ce.Code, StatusCode: ce.StatusCode, Message: ce.Message}
	}
	if backend.IsStall(err) {
		// The store stopped answering, wherever it was read (a listing, a
		// segment of an object): what S3 answers when it is overloaded.
		return apiErr("ServiceUnavailable", "The object store stopped answering. Please try again.")
	}
	var ste *sealstore.Error
	if errors.As(err, &ste) {
		e := apiErr(ste.Code, ste.Message)
		e.CalculatedDigest = ste.CalculatedDigest
		return e
	}
	var be *backend.Error
	if errors.As(err, &be) {
		return fromBackend(be)
	}
	return apiErr("InternalError", "")
}

// fromBackend passes the backend's S3 error through when it is one a
// client understands, and hides transport detail otherwise.
func fromBackend(be *backend.Error) *APIError {
	if ae := lockRefusal(be); ae != nil {
		return ae
	}
	if ae := sizeRefusal(be); ae != nil {
		return ae
	}
	switch be.Code {
	case "":
		return apiErr("ServiceUnavailable", "The object store did not answer. Please try again.")
	case "NotFound":
		return apiErr("NoSuchKey", "")
	case "NotModified", "PreconditionFailed", "NoSuchKey", "NoSuchBucket",
		"BucketNotEmpty", "BucketAlreadyExists", "BucketAlreadyOwnedByYou",
		"InvalidBucketName", "NoSuchUpload", "SlowDown", "ServiceUnavailable",
		"AccessDenied", "InvalidRange", "EntityTooSmall", "EntityTooLarge",
		"ConditionalRequestConflict", "InvalidStorageClass", "InvalidObjectState":
		return apiErr(be.Code, "")
	case "InvalidArgument", "KeyTooLongError", "NotImplemented":
		// The store cannot take this key or request as the client gave
		// it (the embedded store's limits name themselves): its words.
		if be.StatusCode >= 400 && be.StatusCode < 500 || be.Code == "NotImplemented" {
			return apiErr(be.Code, be.Message)
		}
	}
	if be.StatusCode >= 500 {
		return apiErr("ServiceUnavailable", "The object store failed ("+be.Code+"). Please try again.")
	}
	return apiErr("InternalError", "The object store refused the request ("+be.Code+").")
}

// storeRefusal passes a store's 4xx refusal on with its code and status.
// Its words pass too (they name what was wrong with the request), except
// for the NoSuch... codes s3seal's table knows: those read as AWS words
// them, whatever the store says (a store's "The specified bucket does not
// exist" without the period, RGW's or moto's own phrasing).
func storeRefusal(be *backend.Error) *APIError {
	if _, known := errorTable[be.Code]; known && (strings.HasPrefix(be.Code, "NoSuch") || strings.HasSuffix(be.Code, "NotFoundError")) {
		e := apiErr(be.Code, "")
		if be.StatusCode > 0 {
			e.StatusCode = be.StatusCode
		}
		return e
	}
	return &APIError{Code: be.Code, StatusCode: be.StatusCode, Message: be.Message}
}

// writeError renders err as an S3 XML error body.
func writeError(w http.ResponseWriter, r *http.Request, err error) {
	ae := toAPIError(err)
	noteErr(r, err)
	reqID := w.Header().Get("x-amz-request-id")
	switch {
	case ae.Code == "InternalError" || ae.StatusCode >= 500:
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
