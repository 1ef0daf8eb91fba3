package backend

import (
	"errors"
	"io"
	"net/http"
	"strings"

	"github.com/aws/smithy-go"
	smithyhttp "github.com/aws/smithy-go/transport/http"
)

// wrapErr turns an SDK error into an *Error for operation op. It returns nil
// for a nil err. The S3 code comes from smithy.APIError and the HTTP status
// from smithyhttp.ResponseError, both found with errors.As, so SDK wrapping
// (OperationError, retry exhaustion) does not hide them. A response without
// an S3 code gets one from its status: 404 "NotFound" (bodiless HEAD), 412
// "PreconditionFailed", 304 "NotModified", anything else its status text
// without spaces ("ServiceUnavailable"). Anything without a whole HTTP
// response (dial failure, cancelled context, a stall even after the
// headers) becomes Code "" and StatusCode 0, with the cause kept in Err for
// errors.Is/As.
func wrapErr(op string, err error) error {
	if err == nil {
		return nil
	}
	if e, ok := err.(*Error); ok {
		return e // already this package's (sendChecked's verdicts)
	}
	e := &Error{Op: op, Err: err}
	if IsStall(err) {
		// The store stopped before its answer was whole (its headers may
		// have come): no verdict, a transport failure.
		return e
	}
	var re *smithyhttp.ResponseError
	if errors.As(err, &re) {
		e.StatusCode = re.HTTPStatusCode()
		if re.Response != nil {
			e.DeleteMarker = re.Response.Header.Get("x-amz-delete-marker") == "true"
			e.VersionID = re.Response.Header.Get("x-amz-version-id")
		}
	}
	var ae smithy.APIError
	if errors.As(err, &ae) && ae.ErrorCode() != "UnknownError" {
		e.Code = ae.ErrorCode()
		e.Message = ae.ErrorMessage()
	}
	if e.StatusCode == 0 {
		// Without a response there is no backend verdict: keep the
		// error a transport failure even if the SDK invented a code.
		e.Code, e.Message = "", ""
		return e
	}
	switch e.StatusCode {
	case http.StatusNotFound:
		if e.Code == "" {
			e.Code = "NotFound"
		}
	case http.StatusPreconditionFailed:
		e.Code = "PreconditionFailed"
	case http.StatusNotModified:
		e.Code = "NotModified"
	}
	if e.Code == "" {
		// No S3 code in the answer: name the status instead, e.g.
		// "ServiceUnavailable", so callers can still tell errors apart.
		e.Code = strings.ReplaceAll(http.StatusText(e.StatusCode), " ", "")
	}
	if e.Message == "" {
		e.Message = http.StatusText(e.StatusCode)
	}
	return e
}

// CutError is an answer whose body ended before its Content-Length (or
// its last chunk): the connection broke, or the store cut it, mid-answer.
// It is a transport failure, never a short object: it does not unwrap to
// io.ErrUnexpectedEOF, which readers of a stream take for truncated data.
type CutError struct{ Err error }

func (e *CutError) Error() string {
	return "the object store's answer was cut before its end: " + e.Err.Error()
}

// IsCut reports whether err is (or wraps) a CutError.
func IsCut(err error) bool {
	var ce *CutError
	return errors.As(err, &ce)
}

// cutBody reports a body cut short as a CutError in an *Error of op.
type cutBody struct {
	io.ReadCloser
	op string
}

func (b cutBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if errors.Is(err, io.ErrUnexpectedEOF) {
		err = &Error{Op: b.op, Err: &CutError{Err: err}}
	}
	return n, err
}
