package s3api

import (
	"net/http"
	"strings"

	"github.com/s3seal/s3seal/s3api/s3err"
	"github.com/s3seal/s3seal/sealstore"
)

// A request header that changes what S3 does and that s3seal does not
// implement is refused with 501 NotImplemented, never ignored. Each
// operation has a table of such headers: a nil accept function refuses any
// value, else it names the values that are harmless (they ask for what
// s3seal does anyway). Headers not listed are either implemented by the
// handler or harmless to ignore; docs/DESIGN.md lists which is which.
type headerPolicy struct {
	exact    map[string]func(v string) bool // canonical header name -> acceptable value
	prefixes []string                       // canonical prefixes refused whatever the value
}

func oneOf(vals ...string) func(string) bool {
	return func(v string) bool {
		for _, ok := range vals {
			if strings.EqualFold(strings.TrimSpace(v), ok) {
				return true
			}
		}
		return false
	}
}

// Checked on every object and bucket operation: the bucket owner check,
// against the owner s3seal shows, the caller (checkExpectedOwner, below). SSE-C
// headers are checked by checkSSEHeaders and implemented by the object
// handlers (s3api/sse.go).
var commonRefused = map[string]func(string) bool{
	"X-Amz-Expected-Bucket-Owner": func(string) bool { return true },
}

func policy(extra map[string]func(string) bool, prefixes ...string) headerPolicy {
	p := headerPolicy{exact: map[string]func(string) bool{}, prefixes: prefixes}
	for k, v := range commonRefused {
		p.exact[k] = v
	}
	for k, v := range extra {
		p.exact[k] = v
	}
	return p
}

// writeRefused are the headers of PutObject and CopyObject s3seal does
// not implement. Objects are private to s3seal's backend account and
// encrypted by s3seal with AES-256, so those values are accepted. The
// storage class and website redirect location are passed on (see
// objectHeaders).
var writeRefused = map[string]func(string) bool{
	"X-Amz-Acl":                          func(string) bool { return true },          // checked by protection
	"X-Amz-Server-Side-Encryption":       oneOf("AES256", "aws:kms", "aws:kms:dsse"), // passed to the backend
	"X-Amz-Tagging":                      func(string) bool { return true },          // checked by protection
	"If-Modified-Since":                  nil,                                        // S3 has no such write condition
	"If-Unmodified-Since":                nil,
	"X-Amz-Write-Offset-Bytes":           nil,
	"X-Amz-Object-Annotation-Directive":  nil,
	"X-Amz-Source-Expected-Bucket-Owner": func(string) bool { return true }, // checkExpectedOwner
}

var (
	writePolicy = policy(writeRefused) // X-Amz-Object-Lock-*, X-Amz-Acl, X-Amz-Grant-*: protection
	readPolicy  = policy(nil)
	// Conditional deletes (If-Match, x-amz-if-match-size and
	// -last-modified-time) are implemented: see deleteCondition.
	deletePolicy = policy(nil)
	// UploadPart and UploadPartCopy: SSE-C of the part or its source is
	// implemented; SSE-KMS headers on a part are ignored, as S3 takes the
	// upload's.
	partPolicy = policy(map[string]func(string) bool{
		"X-Amz-Source-Expected-Bucket-Owner": func(string) bool { return true }, // checkExpectedOwner
	})
	// CompleteMultipartUpload implements If-Match, If-None-Match and
	// x-amz-mp-object-size.
	completePolicy     = policy(nil)
	bucketPolicy       = policy(nil)
	createBucketPolicy = policy(map[string]func(string) bool{
		"X-Amz-Acl":                        func(string) bool { return true }, // bucketACL
		"X-Amz-Bucket-Object-Lock-Enabled": oneOf("true", "false"),
		"X-Amz-Object-Ownership":           func(string) bool { return true }, // bucketACL
		"X-Amz-Bucket-Namespace":           nil,
	}) // X-Amz-Grant-*: bucketACL
)

// check refuses the first header of h the policy does not allow, after
// server-side encryption headers S3 refuses as bad input (400, see
// checkSSEHeaders).
func (p headerPolicy) check(h http.Header) error {
	if e := checkSSEHeaders(h); e != nil {
		return e
	}
	for name, vals := range h {
		name = http.CanonicalHeaderKey(name)
		accept, listed := p.exact[name]
		if !listed {
			for _, pre := range p.prefixes {
				if strings.HasPrefix(name, pre) {
					listed = true
				}
			}
		}
		if !listed {
			continue
		}
		for _, v := range vals {
			if accept == nil || !accept(v) {
				return s3err.New(s3err.NotImplemented, "s3seal does not implement the header "+name+
					" (with this value); it is refused rather than ignored.")
			}
		}
	}
	return nil
}

// writeCondition reads S3's conditional write headers: If-None-Match
// accepts only "*" (anything else is 501, as in S3), If-Match a list of
// ETags (or "*"), compared with the plaintext ETag.
func writeCondition(h http.Header) (*sealstore.Condition, error) {
	var c sealstore.Condition
	if v := strings.TrimSpace(h.Get("If-None-Match")); v != "" {
		if v != "*" {
			return nil, s3err.New(s3err.NotImplemented, "")
		}
		c.IfNoneMatch = true
	}
	if v := h.Get("If-Match"); strings.TrimSpace(v) != "" {
		for _, e := range strings.Split(v, ",") {
			e = strings.Trim(strings.TrimPrefix(strings.TrimSpace(e), "W/"), `"`)
			if e != "" {
				c.IfMatch = append(c.IfMatch, e)
			}
		}
		if c.IfMatch == nil {
			return nil, s3err.New(s3err.InvalidArgument, "If-Match names no ETag.")
		}
	}
	if !c.IfNoneMatch && c.IfMatch == nil {
		return nil, nil
	}
	if c.IfNoneMatch && c.IfMatch != nil {
		// Both on one write: S3 implements either, not the two together.
		return nil, s3err.New(s3err.NotImplemented, "")
	}
	return &c, nil
}

// checkExpectedOwner answers x-amz-expected-bucket-owner and a copy's
// x-amz-source-expected-bucket-owner. s3seal has no bucket owners (see
// docs/DESIGN.md): the owner a client is shown of any bucket it may reach
// is itself, its access key id, as ListBuckets reports. So the header
// naming that id passes, any other value is AccessDenied, as S3 answers a
// bucket another account owns. The headers are removed once checked: no
// handler acts on them and the backend's account is not the client's.
func checkExpectedOwner(r *http.Request, accessKey string) error {
	for _, name := range []string{"X-Amz-Expected-Bucket-Owner", "X-Amz-Source-Expected-Bucket-Owner"} {
		vs, ok := r.Header[name]
		if !ok {
			continue
		}
		for _, v := range vs {
			if v != accessKey || accessKey == "" {
				return refusedBy(name + " names another owner than the access key")
			}
		}
		r.Header.Del(name)
	}
	return nil
}
