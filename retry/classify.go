package retry

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"syscall"

	"github.com/s3seal/s3seal/backend"
)

// transientCodes are S3 error codes that say "try again": the service
// failed or was overloaded, not the request. InternalError is what RGW and
// Hetzner put in the body of a 200 when a part or completion timed out.
var transientCodes = map[string]bool{
	"InternalError":       true,
	"ServiceUnavailable":  true,
	"SlowDown":            true,
	"RequestTimeout":      true,
	"BadGateway":          true,
	"GatewayTimeout":      true,
	"Throttling":          true,
	"ThrottlingException": true,
	"TooManyRequests":     true,
}

// permanentCodes are the backend's verdict on the request itself: another
// attempt gets the same answer, whatever the status line said (a 200 whose
// body is <Error><Code>NoSuchUpload</Code> is still NoSuchUpload, and a 501
// NotImplemented does not heal).
var permanentCodes = map[string]bool{
	"AccessDenied": true, "InvalidAccessKeyId": true, "SignatureDoesNotMatch": true,
	"RequestTimeTooSkewed": true, "NoSuchBucket": true, "NoSuchKey": true, "NotFound": true,
	"NoSuchUpload": true, "InvalidPart": true, "InvalidPartOrder": true, "EntityTooSmall": true,
	"EntityTooLarge": true, "PreconditionFailed": true, "NotModified": true, "InvalidRange": true,
	"InvalidArgument": true, "InvalidRequest": true, "InvalidDigest": true, "BadDigest": true,
	"MalformedXML": true, "InvalidBucketName": true, "BucketNotEmpty": true,
	"BucketAlreadyExists": true, "BucketAlreadyOwnedByYou": true, "KeyTooLongError": true,
	"MethodNotAllowed": true, "NotImplemented": true, "MissingContentLength": true,
	"XAmzContentSHA256Mismatch": true, "InvalidStorageClass": true,
}

// Retryable reports whether err is worth another attempt. In order:
//
//   - nil, and the caller's context ending (Canceled, DeadlineExceeded),
//     are not.
//   - A *backend.Error with a known code is decided by the code:
//     InternalError, SlowDown, ServiceUnavailable, RequestTimeout and the
//     throttling codes are transient; AccessDenied, NoSuchBucket,
//     NoSuchUpload, InvalidPart, InvalidPartOrder, EntityTooSmall,
//     PreconditionFailed and the other request errors are not.
//   - Otherwise by status: 5xx and 429 are transient, and so is a 2xx:
//     an error reported with a 2xx status is a 200 whose body is <Error>
//     (RGW, Hetzner) or an answer cut short after its status line. Any
//     other status with a code is the backend's verdict: not transient.
//   - Without an S3 answer, transport failures are transient: connection
//     reset, refused or aborted, broken pipe, EOF and unexpected EOF,
//     timeouts, a closed connection, DNS trouble other than "no such
//     host". TLS certificate failures are not: they do not heal.
func Retryable(err error) bool {
	if err == nil || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return false
	}
	var be *backend.Error
	if errors.As(err, &be) && (be.Code != "" || be.StatusCode != 0) {
		switch {
		case transientCodes[be.Code]:
			return true
		case permanentCodes[be.Code]:
			return false
		case be.StatusCode >= 500, be.StatusCode == 429:
			return true
		case be.StatusCode >= 200 && be.StatusCode < 300:
			return true
		}
		return false
	}
	return transportTransient(err)
}

// transportTransient classifies a failure that carries no S3 answer.
func transportTransient(err error) bool {
	if certificateError(err) {
		return false
	}
	var dns *net.DNSError
	if errors.As(err, &dns) {
		return !dns.IsNotFound
	}
	if backend.IsCut(err) || errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.ECONNREFUSED) ||
		errors.Is(err, syscall.ECONNABORTED) || errors.Is(err, syscall.EPIPE) ||
		errors.Is(err, syscall.ETIMEDOUT) || errors.Is(err, io.EOF) ||
		errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, net.ErrClosed) {
		return true
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return true
	}
	var oe *net.OpError
	return errors.As(err, &oe)
}

func certificateError(err error) bool {
	var (
		ua  x509.UnknownAuthorityError
		ci  x509.CertificateInvalidError
		he  x509.HostnameError
		cve *tls.CertificateVerificationError
	)
	return errors.As(err, &ua) || errors.As(err, &ci) || errors.As(err, &he) || errors.As(err, &cve)
}

// storeDown reports a failure that says the store is not there: a stall
// (the backend's timeouts cut a request to a store that stopped moving) or
// a refused connection. Policy.DownAttempts bounds the attempts they cost.
func storeDown(err error) bool {
	return backend.IsStall(err) || errors.Is(err, syscall.ECONNREFUSED)
}

// lostUpload reports the answer a retried completion gets when an earlier
// attempt did complete the upload: the upload id is gone.
func lostUpload(err error) bool { return backend.ErrorCode(err) == "NoSuchUpload" }

// completionInProgress reports Hetzner's answer to a completion retried
// while the first one is still assembling the object: InternalError with
// "This multipart completion is already in progress".
func completionInProgress(err error) bool {
	var be *backend.Error
	return errors.As(err, &be) && be.Code == "InternalError" &&
		strings.Contains(strings.ToLower(be.Message), "completion is already in progress")
}

// Cause names a transient failure in few words, for metrics: the S3 error
// code when the backend answered with a known transient one, "http_<n>"
// for another status, else "stall" (the backend's Timeouts cut a request
// to a store that stopped moving), "timeout", "connection" (reset, refused,
// aborted, broken pipe, closed), "eof" (an answer cut short), "dns" or
// "transport".
func Cause(err error) string {
	var be *backend.Error
	if errors.As(err, &be) && (be.Code != "" || be.StatusCode != 0) {
		if transientCodes[be.Code] {
			return be.Code
		}
		return fmt.Sprintf("http_%d", be.StatusCode)
	}
	var dns *net.DNSError
	var ne net.Error
	switch {
	case backend.IsStall(err):
		return "stall"
	case errors.As(err, &dns):
		return "dns"
	case errors.Is(err, syscall.ETIMEDOUT), errors.As(err, &ne) && ne.Timeout():
		return "timeout"
	case backend.IsCut(err), errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return "eof"
	case errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.ECONNREFUSED),
		errors.Is(err, syscall.ECONNABORTED), errors.Is(err, syscall.EPIPE), errors.Is(err, net.ErrClosed):
		return "connection"
	}
	return "transport"
}

// refusalOutcome is the outcome of an attempt the backend refused for
// good. An object, bucket or upload that is not there (404: the HEAD
// before a write, a GET of a key a client guesses) is "not_found", and a
// conditional request whose condition does not hold (304, 412: a client's
// If-None-Match, rewrap's copy of an object written meanwhile) is
// "condition_failed": both are answers of normal traffic, counted apart
// so that an alert on the rate of "error" fires on failures only. Two
// 404s are failures all the same: NoSuchBucket (the bucket is gone, or
// the endpoint or path-style setting points elsewhere, and every request
// answers so) and NoSuchUpload under a part or a completion (the upload
// is gone with the client's data); ListParts and aborts answering
// NoSuchUpload are how gc and rewrap learn that an upload is over, and a
// HeadBucket answering NoSuchBucket is how CreateBucket learns that the
// bucket is not there yet.
func refusalOutcome(op string, err error) string {
	var e *backend.Error
	if errors.As(err, &e) {
		switch e.StatusCode {
		case http.StatusNotFound:
			switch {
			case e.Code == "NoSuchBucket" && op != "HeadBucket":
				return "error"
			case e.Code == "NoSuchUpload" && (op == "UploadPart" || op == "UploadPartCopy" || op == "CompleteMultipartUpload"):
				return "error"
			}
			return "not_found"
		case http.StatusNotModified, http.StatusPreconditionFailed:
			return "condition_failed"
		}
	}
	return "error"
}
