package backend

import (
	"bytes"
	"context"
	"crypto/md5"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/xml"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
)

// RawRequest is an S3 request on a bucket's or an object's sub-resource
// (?tagging, ?retention, ?policy, ...) that s3seal passes to the backend
// as it is: these carry no object bytes, only what the backend enforces.
type RawRequest struct {
	Method      string
	Bucket, Key string // Key "" for a bucket's sub-resource
	Query       url.Values
	Header      http.Header // only the headers the operation defines
	Body        []byte
}

// RawResponse is the backend's successful answer to a RawRequest.
type RawResponse struct {
	StatusCode int
	Header     http.Header
	Body       []byte
}

// Forwarder sends RawRequests. Failures come back as *Error with the
// backend's code, like every other operation.
type Forwarder interface {
	Forward(ctx context.Context, in RawRequest) (*RawResponse, error)
}

var _ Forwarder = (*S3)(nil)

// maxRawBody bounds what s3seal reads of a sub-resource answer (S3 caps
// policies at 20 KB and configurations well under this).
const maxRawBody = 4 << 20

type rawTarget struct {
	cfg   S3Config
	http  aws.HTTPClient
	creds aws.CredentialsProvider
}

// Forward signs in with the backend credentials (SigV4, payload hash and
// Content-MD5 of the body) and sends it once: these operations are cheap
// for the client to retry, and a failed one is reported as the backend's
// error. A 2xx answer whose body is an S3 <Error> document is that error
// (as a 500), never a success.
func (c *S3) Forward(ctx context.Context, in RawRequest) (*RawResponse, error) {
	t := c.raw
	op := "Forward " + in.Method
	u, err := url.Parse(t.cfg.Endpoint)
	if err != nil {
		return nil, &Error{Op: op, Err: err}
	}
	path := strings.TrimSuffix(u.Path, "/")
	if t.cfg.PathStyle {
		path += "/" + in.Bucket
	} else {
		u.Host = in.Bucket + "." + u.Host
	}
	if in.Key != "" {
		path += "/" + in.Key
	} else if t.cfg.PathStyle {
		path += "/"
	}
	if !t.cfg.PathStyle && path == "" {
		path = "/"
	}
	u.Path = path
	u.RawPath = escapePath(path)
	u.RawQuery = strings.ReplaceAll(in.Query.Encode(), "+", "%20") // the signer sends it in this form too
	req, err := http.NewRequestWithContext(ctx, in.Method, u.String(), bytes.NewReader(in.Body))
	if err != nil {
		return nil, &Error{Op: op, Err: err}
	}
	for k, vs := range in.Header {
		for _, v := range vs {
			req.Header.Add(k, v)
		}
	}
	req.ContentLength = int64(len(in.Body))
	if len(in.Body) > 0 {
		sum := md5.Sum(in.Body)
		req.Header.Set("Content-MD5", base64.StdEncoding.EncodeToString(sum[:]))
	}
	hash := sha256.Sum256(in.Body)
	payload := hex.EncodeToString(hash[:])
	req.Header.Set("X-Amz-Content-Sha256", payload)
	creds, err := t.creds.Retrieve(ctx)
	if err != nil {
		return nil, &Error{Op: op, Err: err}
	}
	region := t.cfg.Region
	if region == "" {
		region = DefaultRegion
	}
	if err := v4.NewSigner(func(o *v4.SignerOptions) { o.DisableURIPathEscaping = true }).SignHTTP(ctx, creds, req, payload, "s3", region, time.Now()); err != nil {
		return nil, &Error{Op: op, Err: err}
	}
	resp, err := t.http.Do(req)
	if err != nil {
		return nil, &Error{Op: op, Err: err}
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxRawBody+1))
	if err != nil {
		// The answer did not come whole: no verdict of the store, a
		// transport failure (a stall after the headers among them).
		return nil, &Error{Op: op, Err: err}
	}
	if len(body) > maxRawBody {
		return nil, &Error{Op: op, Code: "InternalError", StatusCode: http.StatusBadGateway, Message: "backend answer too large"}
	}
	if resp.StatusCode/100 != 2 {
		var e struct {
			Code    string
			Message string
		}
		_ = xml.Unmarshal(body, &e)
		if e.Code == "" {
			e.Code = http.StatusText(resp.StatusCode)
			if resp.StatusCode == http.StatusNotFound {
				e.Code = "NotFound"
			}
		}
		return nil, &Error{Op: op, Code: e.Code, StatusCode: resp.StatusCode, Message: e.Message,
			Err: fmt.Errorf("status %d", resp.StatusCode)}
	}
	if code, msg, isErr := ErrorDocument(body); isErr {
		// A 2xx whose body is an S3 <Error> (RGW's "did not respond in
		// time") did not do what was asked: it is that error, as a 5xx,
		// as error200Middleware makes it for the SDK operations.
		return nil, &Error{Op: op, Code: code, StatusCode: http.StatusInternalServerError, Message: msg,
			Err: fmt.Errorf("status %d with an <Error> body", resp.StatusCode)}
	}
	return &RawResponse{StatusCode: resp.StatusCode, Header: resp.Header, Body: body}, nil
}

// escapePath percent-encodes every byte of p but the unreserved characters
// and "/", as the SDK does for object keys: the path is signed as sent
// (DisableURIPathEscaping), and this is the form S3 signs it in.
func escapePath(p string) string {
	var b strings.Builder
	for i := 0; i < len(p); i++ {
		c := p[i]
		if 'A' <= c && c <= 'Z' || 'a' <= c && c <= 'z' || '0' <= c && c <= '9' || strings.IndexByte("-_.~/", c) >= 0 {
			b.WriteByte(c)
		} else {
			fmt.Fprintf(&b, "%%%02X", c)
		}
	}
	return b.String()
}
