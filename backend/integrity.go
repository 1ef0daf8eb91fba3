package backend

import (
	"errors"
	"io"
	"log/slog"
	"strings"
)

// Integrity in transit: a PUT or part may carry the CRC32C of its body
// (x-amz-checksum-crc32c), which the store checks against what arrived,
// as it would Content-MD5, at a twentieth of MD5's CPU. Stores that
// predate flexible checksums either ignore the header (nothing is lost:
// every segment is authenticated anyway, so corruption is caught at the
// latest on read) or refuse it; after the first refusal this client sends
// Content-MD5 instead, hashing the body once more.

// checksumRefused reports whether err is a store's refusal of the
// x-amz-checksum-crc32c header itself: NotImplemented, or a request error
// that names a checksum. A mismatch (BadDigest, and the SHA-256 mismatch)
// is not a refusal: the store checked and the body differed.
func checksumRefused(err error) bool {
	var e *Error
	if !errors.As(wrapErr("", err), &e) {
		return false
	}
	switch e.Code {
	case "NotImplemented":
		return true
	case "InvalidArgument", "InvalidRequest", "BadRequest", "InvalidHeader":
		return e.StatusCode < 500 && strings.Contains(strings.ToLower(e.Message), "checksum")
	}
	return false
}

// sendChecked runs call, which sends body with the checksum *crc (nil:
// none) and Content-MD5 *md5. Once the store has refused the checksum
// header, the body goes with Content-MD5 instead, on this call's retry
// and on every later call of this client.
func sendChecked[T any](c *S3, op string, crc, md5 **string, body io.ReadSeeker, call func() (T, error)) (T, error) {
	useMD5 := func() error {
		*crc = nil
		if *md5 != nil {
			_, err := body.Seek(0, io.SeekStart)
			return err
		}
		m, err := bodyMD5(body)
		*md5 = &m
		return err
	}
	if *crc != nil && c.noCRC.Load() {
		if err := useMD5(); err != nil {
			var zero T
			return zero, &Error{Op: op, Err: err}
		}
	}
	out, err := call()
	if *crc == nil || !checksumRefused(err) {
		return out, err
	}
	if !c.noCRC.Swap(true) {
		slog.Warn("the object store refused x-amz-checksum-crc32c; sending Content-MD5 with every PUT and part instead (one more pass over each body)", "answer", err)
	}
	if err := useMD5(); err != nil {
		var zero T
		return zero, &Error{Op: op, Err: err}
	}
	return call()
}
