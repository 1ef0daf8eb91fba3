package sigv4

import (
	"fmt"
	"net/http"
)

// S3 error codes returned by this package, as AWS names them.
const (
	CodeAccessDenied                    = "AccessDenied"
	CodeAuthorizationHeaderMalformed    = "AuthorizationHeaderMalformed"
	CodeAuthorizationQueryParametersErr = "AuthorizationQueryParametersError"
	CodeIncompleteBody                  = "IncompleteBody"
	CodeInvalidAccessKeyID              = "InvalidAccessKeyId"
	CodeInvalidArgument                 = "InvalidArgument"
	CodeInvalidChunkSize                = "InvalidChunkSizeError"
	CodeInvalidRequest                  = "InvalidRequest"
	CodeInvalidURI                      = "InvalidURI"
	CodeMalformedTrailerError           = "MalformedTrailerError"
	CodeMissingContentLength            = "MissingContentLength"
	CodeRequestTimeTooSkewed            = "RequestTimeTooSkewed"
	CodeSignatureDoesNotMatch           = "SignatureDoesNotMatch"
	CodeSignatureVersionNotSupported    = "SignatureVersionNotSupported"
	CodeXAmzContentSHA256Mismatch       = "XAmzContentSHA256Mismatch"
)

// Error is an authentication or payload-verification failure, shaped as an
// S3 error response: Code is the S3 error code (one of the Code* constants),
// StatusCode the HTTP status to answer with. Message never contains secrets
// or signatures. Match it with errors.As.
//
// An Error wraps nothing: in particular a body that ends too early is an
// IncompleteBody Error that matches neither io.EOF nor io.ErrUnexpectedEOF,
// so that no reader of the body can take it for an end of stream (a
// reader's only clean end is a bare io.EOF).
type Error struct {
	Code       string
	StatusCode int
	Message    string
	// Fields are the extra elements S3 adds to this error's XML body
	// (ArgumentName, HeadersNotSigned, X-Amz-Expires, ...), in order.
	Fields []Field
	// detail says, for the log, what exactly was wrong where S3's message
	// does not (a malformed aws-chunked body); never sent to the client.
	detail string
}

// Field is one extra element of an S3 error body.
type Field struct{ Name, Value string }

// with returns e with the extra elements name/value pairs appended.
func (e *Error) with(nameValues ...string) *Error {
	for i := 0; i+1 < len(nameValues); i += 2 {
		e.Fields = append(e.Fields, Field{nameValues[i], nameValues[i+1]})
	}
	return e
}

// Error implements the error interface.
func (e *Error) Error() string {
	if e.detail != "" {
		return fmt.Sprintf("sigv4: %s: %s (%s)", e.Code, e.Message, e.detail)
	}
	return fmt.Sprintf("sigv4: %s: %s", e.Code, e.Message)
}

func newErr(code string, status int, format string, args ...any) *Error {
	return &Error{Code: code, StatusCode: status, Message: fmt.Sprintf(format, args...)}
}

func errAccessDenied(msg string) *Error {
	return newErr(CodeAccessDenied, http.StatusForbidden, "%s", msg)
}

func errMalformed(format string, args ...any) *Error {
	return newErr(CodeAuthorizationHeaderMalformed, http.StatusBadRequest, format, args...)
}

// errExpiresRange is S3's answer to a presigned URL whose X-Amz-Expires
// is a number out of range (negative, or past a week): the code and
// words of a malformed query, but 403, as S3 answers an expired URL; a
// value that is no number is 400.
func errExpiresRange(msg string) *Error {
	return newErr(CodeAuthorizationQueryParametersErr, http.StatusForbidden, "%s", msg)
}

func errQueryMalformed(format string, args ...any) *Error {
	return newErr(CodeAuthorizationQueryParametersErr, http.StatusBadRequest, format, args...)
}

func errSignature() *Error {
	return newErr(CodeSignatureDoesNotMatch, http.StatusForbidden,
		"The request signature we calculated does not match the signature you provided. Check your key and signing method.")
}

func errChunkSignature() *Error {
	return newErr(CodeSignatureDoesNotMatch, http.StatusForbidden,
		"The chunk signature we calculated does not match the signature you provided.")
}

func errTrailerSignature() *Error {
	return newErr(CodeSignatureDoesNotMatch, http.StatusForbidden,
		"The trailer signature we calculated does not match the signature you provided.")
}

func errIncomplete(format string, args ...any) *Error {
	return newErr(CodeIncompleteBody, http.StatusBadRequest, format, args...)
}

// msgBodyCut is S3's word for an aws-chunked body it cannot decode: one
// that ends early or whose framing is broken.
const msgBodyCut = "The request body terminated unexpectedly"

func errChunkFormat(format string, args ...any) *Error {
	e := newErr(CodeIncompleteBody, http.StatusBadRequest, "%s", msgBodyCut)
	e.detail = "malformed aws-chunked body: " + fmt.Sprintf(format, args...)
	return e
}

func errTrailer(format string, args ...any) *Error {
	e := newErr(CodeMalformedTrailerError, http.StatusBadRequest,
		"The request contained trailing data that was not well-formed or did not conform to our published schema.")
	e.detail = fmt.Sprintf(format, args...)
	return e
}

// errDecodedLength is S3's answer to an aws-chunked body whose data is
// shorter or longer than its x-amz-decoded-content-length.
func errDecodedLength(detail string) *Error {
	e := newErr(CodeIncompleteBody, http.StatusBadRequest, "You did not provide the number of bytes specified by the Content-Length HTTP header")
	e.detail = detail
	return e
}

// hintV4 tells the users of common clients what makes them sign with SigV4.
const hintV4 = "Configure your client for SigV4: aws CLI: aws configure set default.s3.signature_version s3v4; " +
	"boto3: Config(signature_version=\"s3v4\"); " +
	"s3cmd: signature_v2 = False in ~/.s3cfg (no --signature-v2); " +
	"rclone: v2_auth = false in the remote (no --s3-v2-auth); " +
	"mc: mc alias set ALIAS URL KEY SECRET --api S3v4."

// errV2Request is AWS's answer to a request signed with Signature Version
// 2 (header or query) in a region that takes only SigV4, followed by what
// to set in the client (aws CLI v1's aws s3 presign makes SigV2 URLs).
func errV2Request() *Error {
	return newErr(CodeInvalidRequest, http.StatusBadRequest,
		"%s", msgV2Request)
}

const msgV2Request = "The authorization mechanism you have provided is not supported. Please use AWS4-HMAC-SHA256. " + hintV4

// errInvalidArg is InvalidArgument naming the argument and its value, as
// S3 words it.
func errInvalidArg(msg, name, value string) *Error {
	return newErr(CodeInvalidArgument, http.StatusBadRequest, "%s", msg).with("ArgumentName", name, "ArgumentValue", value)
}
