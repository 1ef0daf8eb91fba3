package s3api

import (
	"bytes"
	"crypto/md5"
	"encoding/base64"
	"encoding/xml"
	"errors"
	"io"
	"strings"

	"github.com/s3seal/s3seal/s3api/s3err"
	"github.com/s3seal/s3seal/s3api/sigv4"
)

// maxXMLBody bounds the XML request bodies s3seal reads whole
// (DeleteObjects, CreateBucket configuration). 1000 keys of 1024 bytes each
// fit with room for markup and formatting.
const maxXMLBody = 2 << 20

// readXMLBody is the one way an s3api handler reads a request body it acts
// on as a whole. It reads the verifying body (sigv4's reader) to its clean
// end, so the payload hash, chunk signatures and trailer have all been
// checked before the caller sees a byte; then it checks Content-MD5 and
// the declared flexible checksum. A body longer than limit is refused with
// MaxMessageLengthExceeded, as S3 does, before anything is acted on: a
// prefix of a body is never used, since its signature is only known good
// at the end.
func readXMLBody(req *request, limit int64) ([]byte, error) {
	body, err := readWholeBody(req, limit)
	if err != nil {
		return nil, err
	}
	if err := verifyBody(req, body); err != nil {
		return nil, err
	}
	return body, nil
}

// readCompleteBody is readXMLBody for CompleteMultipartUpload, whose
// x-amz-checksum-* headers are the checksum of the object being completed,
// not of the body: only Content-MD5 is checked against the body here.
func readCompleteBody(req *request, limit int64) ([]byte, error) {
	body, err := readWholeBody(req, limit)
	if err != nil {
		return nil, err
	}
	if want := req.r.Header.Get("Content-MD5"); want != "" {
		got := md5.Sum(body)
		if want != base64.StdEncoding.EncodeToString(got[:]) {
			return nil, s3err.New(s3err.BadDigest, "")
		}
	}
	return body, nil
}

// readWholeBody reads the verifying body to its clean end, refusing one
// longer than limit.
func readWholeBody(req *request, limit int64) ([]byte, error) {
	body, err := io.ReadAll(io.LimitReader(req.r.Body, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(body)) > limit {
		return nil, s3err.New(s3err.MaxMessageLengthExceeded, "")
	}
	return body, nil
}

// decodeXML decodes one XML document into v. Anything after the root
// element other than white space, comments and processing instructions is
// MalformedXML (xml.Unmarshal would silently ignore it).
func decodeXML(body []byte, v any) error {
	dec := xml.NewDecoder(bytes.NewReader(body))
	if err := dec.Decode(v); err != nil {
		return s3err.New(s3err.MalformedXML, "")
	}
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return s3err.New(s3err.MalformedXML, "")
		}
		switch t := tok.(type) {
		case xml.Comment, xml.ProcInst:
		case xml.CharData:
			if strings.TrimSpace(string(t)) != "" {
				return s3err.New(s3err.MalformedXML, "")
			}
		default:
			return s3err.New(s3err.MalformedXML, "")
		}
	}
}

// streamingOps are the operations that take an aws-chunked body
// (x-amz-content-sha256 STREAMING-...): S3 takes one only for the object
// uploads, and refuses it elsewhere (a bucket configuration, a tag set).
var streamingOps = map[string]bool{"PutObject": true, "UploadPart": true}

// checkPayloadMode refuses an aws-chunked body for an operation that takes
// none, as S3 does, before anything of the body is read.
func checkPayloadMode(op string, res *sigv4.Result) error {
	switch res.PayloadMode {
	case sigv4.StreamingSignedPayload, sigv4.StreamingSignedPayloadTrail, sigv4.StreamingUnsignedPayloadTrail:
		if !streamingOps[op] {
			return s3err.New(s3err.InvalidRequest, "The value of x-amz-content-sha256 header is invalid.")
		}
	}
	return nil
}
