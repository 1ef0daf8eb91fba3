package backend

import (
	"bytes"
	"context"
	"encoding/xml"
	"errors"
	"io"
	"net/http"

	"github.com/aws/smithy-go"
	"github.com/aws/smithy-go/middleware"
	smithyhttp "github.com/aws/smithy-go/transport/http"
)

// error200Ops are the operations whose 200 answer may carry an <Error>
// instead of a result: S3 documents it for CopyObject, UploadPartCopy and
// CompleteMultipartUpload; Ceph RGW and Hetzner also do it for UploadPart
// and PutObject when they time out ("The server did not respond in time").
// GetObject is not among them: its 200 body is the object, whatever it is.
var error200Ops = map[string]bool{
	"PutObject":               true,
	"CopyObject":              true,
	"UploadPart":              true,
	"UploadPartCopy":          true,
	"CompleteMultipartUpload": true,
}

// maxError200Peek bounds what is read while looking for the root element:
// whitespace AWS sends to keep a completion alive, an XML declaration, then
// the root start tag.
const maxError200Peek = 1 << 20

// error200Middleware turns a 200 answer whose XML root element is <Error>
// into an error carrying the body's Code and Message, for the operations in
// error200Ops. It sits innermost in the Deserialize step, so it sees the raw
// response before any SDK deserializer or customisation does and works
// whatever the SDK version does about such answers. Other bodies are
// restored byte for byte.
type error200Middleware struct{}

func (error200Middleware) ID() string { return "S3seal:Error200" }

func (error200Middleware) HandleDeserialize(ctx context.Context, in middleware.DeserializeInput, next middleware.DeserializeHandler) (
	middleware.DeserializeOutput, middleware.Metadata, error,
) {
	out, md, err := next.HandleDeserialize(ctx, in)
	if err != nil || !error200Ops[middleware.GetOperationName(ctx)] {
		return out, md, err
	}
	resp, ok := out.RawResponse.(*smithyhttp.Response)
	if !ok || resp.StatusCode < 200 || resp.StatusCode > 299 || resp.Body == nil {
		return out, md, err
	}
	code, msg, isErr, rerr := peekError200(resp)
	if rerr != nil {
		return out, md, &smithy.DeserializationError{Err: rerr}
	}
	if !isErr {
		return out, md, nil
	}
	// AWS: a 200 with an error body is to be handled like a 5xx. The
	// status is made 500 so that everything downstream (retry
	// classification, the S3 front's mapping) treats it as the server
	// failure it is; the code and message are the body's.
	resp.StatusCode = http.StatusInternalServerError
	return out, md, &smithyhttp.ResponseError{
		Response: resp,
		Err:      &smithy.GenericAPIError{Code: code, Message: msg, Fault: smithy.FaultServer},
	}
}

// peekError200 reads resp's body up to its root element (peekErrorRoot)
// and, unless the root is <Error>, restores the body to read from its
// first byte.
func peekError200(resp *smithyhttp.Response) (code, msg string, isErr bool, err error) {
	code, msg, isErr, body, err := peekErrorRoot(resp.Body)
	if err == nil && !isErr {
		resp.Body = body
	}
	return code, msg, isErr, err
}

// ErrorDocument reports whether a whole 2xx answer body is an S3 <Error>
// document, and its Code and Message if so: the same judgement as
// peekError200, for answers already read (Forward, and the embedded
// store's look at its own answers).
func ErrorDocument(body []byte) (code, msg string, isErr bool) {
	code, msg, isErr, _, err := peekErrorRoot(io.NopCloser(bytes.NewReader(body)))
	return code, msg, isErr && err == nil
}

// peekErrorRoot reads body up to its root element. When the root is
// <Error> it reads that element, closes body and returns its Code and
// Message (code "InternalError" if the body names none). Otherwise it
// returns restored, which reads body from its first byte. A body that is
// empty or not XML is restored, not judged: the operation's own
// deserializer decides.
func peekErrorRoot(orig io.ReadCloser) (code, msg string, isErr bool, restored io.ReadCloser, err error) {
	var seen bytes.Buffer
	dec := xml.NewDecoder(io.TeeReader(io.LimitReader(orig, maxError200Peek), &seen))
	for {
		tok, terr := dec.Token()
		if terr != nil {
			// Empty, not XML, or no root element within the peek
			// limit: leave the body alone.
			if errors.Is(terr, io.EOF) || isXMLSyntax(terr) {
				break
			}
			return "", "", false, nil, terr // the connection failed mid-peek
		}
		start, ok := tok.(xml.StartElement)
		if !ok {
			continue // declaration, whitespace, comment
		}
		if start.Name.Local != "Error" {
			break
		}
		var body struct {
			Code    string `xml:"Code"`
			Message string `xml:"Message"`
		}
		if derr := dec.DecodeElement(&body, &start); derr != nil && !isXMLSyntax(derr) && !errors.Is(derr, io.EOF) {
			return "", "", false, nil, derr
		}
		orig.Close()
		if body.Code == "" {
			body.Code = "InternalError"
		}
		return body.Code, body.Message, true, nil, nil
	}
	return "", "", false, readCloser{io.MultiReader(&seen, orig), orig}, nil
}

func isXMLSyntax(err error) bool {
	var se *xml.SyntaxError
	return errors.As(err, &se) || errors.Is(err, io.ErrUnexpectedEOF)
}

// readCloser reads from a restored body and closes the original one.
type readCloser struct {
	io.Reader
	io.Closer
}

// addError200 puts error200Middleware innermost in the Deserialize step.
func addError200(stack *middleware.Stack) error {
	return stack.Deserialize.Add(error200Middleware{}, middleware.After)
}
