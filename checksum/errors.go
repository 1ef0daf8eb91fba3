package checksum

import (
	"fmt"
	"net/http"
)

// S3 error codes returned by this package.
const (
	CodeBadDigest      = "BadDigest"
	CodeInvalidDigest  = "InvalidDigest"
	CodeInvalidRequest = "InvalidRequest"
)

// Error is a checksum failure shaped as an S3 error response. Match it with
// errors.As.
type Error struct {
	Code       string
	StatusCode int
	Message    string
}

// Error implements the error interface.
func (e *Error) Error() string { return fmt.Sprintf("checksum: %s: %s", e.Code, e.Message) }

func newErr(code, format string, args ...any) *Error {
	return &Error{Code: code, StatusCode: http.StatusBadRequest, Message: fmt.Sprintf(format, args...)}
}
