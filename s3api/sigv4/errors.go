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
	CodeInvalidRequest                  = "InvalidRequest"
	CodeInvalidURI                      = "InvalidURI"
	CodeMalformedTrailerError           = "MalformedTrailerError"
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

func errChunkFormat(format string, args ...any) *Error {
	return newErr(CodeInvalidRequest, http.StatusBadRequest, "malformed aws-chunked body: "+format, args...)
}

func errTrailer(format string, args ...any) *Error {
	return newErr(CodeMalformedTrailerError, http.StatusBadRequest,
		"The request contained trailing data that was not well-formed: "+format, args...)
}

// msgV2 tells a client refused for Signature Version 2 how each common
// client is set to sign with SigV4.
const msgV2 = "s3seal only supports AWS Signature Version 4 (AWS4-HMAC-SHA256). " +
	"Configure your client for SigV4: aws CLI: aws configure set default.s3.signature_version s3v4; " +
	"boto3: Config(signature_version=\"s3v4\"); " +
	"s3cmd: signature_v2 = False in ~/.s3cfg (no --signature-v2); " +
	"rclone: v2_auth = false in the remote (no --s3-v2-auth); " +
	"mc: mc alias set ALIAS URL KEY SECRET --api S3v4."

func errV2() *Error {
	return newErr(CodeSignatureVersionNotSupported, http.StatusBadRequest, "%s", msgV2)
}
