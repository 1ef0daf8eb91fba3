package backend

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
)

// Integrity in transit: a PUT or part may carry the CRC32C of its body
// (x-amz-checksum-crc32c), which the store checks against what arrived,
// as it would Content-MD5, at a twentieth of MD5's CPU. A store that
// checked it says so: its answer carries the checksum back (AWS, MinIO,
// versitygw). Stores that predate flexible checksums either ignore the
// header (Ceph RGW before Squid, and others that check Content-MD5 all the
// same) or refuse it. So until the store has confirmed the checksum once,
// a body goes with Content-MD5 beside it; after an answer that does not
// confirm it, or a refusal, this client sends Content-MD5 instead, hashing
// every body once more. Segments are authenticated whatever the store
// checks, but that finds a body damaged on its way in only when it is
// read, once the client was told it was stored.

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
// none) and Content-MD5 *md5, and finds in its answer (confirmed) the
// checksum the store confirmed. Until the store has confirmed the
// checksum, the body carries Content-MD5 too; once the store has refused
// the header (a refusal that the body sent again without it does not
// meet; before a confirmation any 400 counts, see badRequest) or answered
// without confirming it, the body goes with Content-MD5 instead, on this
// call's retry and on every later call of this client.
func sendChecked[T any](c *S3, op string, crc, md5 **string, body io.ReadSeeker, call func() (T, error), confirmed func(T) *string) (T, error) {
	var zero T
	// withMD5 gives the body its Content-MD5 (hashing it if it has none)
	// and leaves it rewound.
	withMD5 := func() error {
		if *md5 != nil {
			_, err := body.Seek(0, io.SeekStart)
			return err
		}
		m, err := bodyMD5(body)
		*md5 = &m
		return err
	}
	useMD5 := func() error {
		*crc = nil
		return withMD5()
	}
	switch {
	case *crc == nil:
	case c.noCRC.Load():
		if err := useMD5(); err != nil {
			return zero, &Error{Op: op, Err: err}
		}
	case !c.crcOK.Load() && *md5 == nil:
		if err := withMD5(); err != nil {
			return zero, &Error{Op: op, Err: err}
		}
	}
	out, err := call()
	if *crc != nil && err == nil {
		return out, c.confirm(op, **crc, aws.ToString(confirmed(out)))
	}
	if *crc == nil || !(checksumRefused(err) || !c.crcOK.Load() && badRequest(err)) {
		return out, err
	}
	refusal := err
	if err := useMD5(); err != nil {
		return zero, &Error{Op: op, Err: err}
	}
	out, err = call()
	// Refused again in the same words without the checksum: it was not
	// the cause (NotImplemented also answers tags on a store without them,
	// say), and later bodies keep it.
	if !sameRefusal(err, refusal) && !c.noCRC.Swap(true) {
		slog.Warn("the object store refused x-amz-checksum-crc32c; sending Content-MD5 with every PUT and part instead (one more pass over each body)", "answer", refusal)
	}
	return out, err
}

// badRequest reports whether err is a 400 or a NotImplemented: on a store
// that has not yet confirmed the checksum, such an answer may be its
// refusal of the header in words that name no checksum ("Invalid
// argument."), or a checksum it computes wrongly; sendChecked then sends
// the body once more without the header (with Content-MD5, which checks
// it all the same) to tell.
func badRequest(err error) bool {
	var e *Error
	return errors.As(wrapErr("", err), &e) && (e.StatusCode == http.StatusBadRequest || e.Code == "NotImplemented")
}

// sameRefusal reports whether err is the refusal first answered: the same
// code and message.
func sameRefusal(err, first error) bool {
	var a, b *Error
	return errors.As(wrapErr("", err), &a) && errors.As(wrapErr("", first), &b) &&
		a.Code == b.Code && a.Message == b.Message
}

// confirm judges the checksum a store's success answer carries back for
// a body sent with the checksum sent: the same, it checked it; none, it
// does not check it (Content-MD5 from now on); another, it holds other
// bytes than were sent, which is BadDigest as if it had said so.
func (c *S3) confirm(op, sent, got string) error {
	switch got {
	case sent:
		c.crcOK.Store(true)
		return nil
	case "":
		if !c.noCRC.Swap(true) {
			slog.Warn("the object store does not confirm x-amz-checksum-crc32c, so it does not check it; sending Content-MD5 with every PUT and part instead (one more pass over each body)", "operation", op)
		}
		return nil
	}
	return &Error{Op: op, Code: "BadDigest", StatusCode: http.StatusBadRequest,
		Message: fmt.Sprintf("the object store confirmed CRC32C %s of a body sent with CRC32C %s", got, sent)}
}
