package backend

import (
	"errors"
	"io"
)

// Once is a PutInput or UploadPartInput body that can be read only once:
// ciphertext sent to the store as it is sealed (sealstore's streamed PUT).
// It is sent as a plain stream of its declared Size, with no checksum of
// its own (none is known before its end) and no Content-MD5 retry; the
// retry layer sends it once. Whoever feeds it ends it with an error, not
// io.EOF, when the body must not be stored: the store then sees a body
// shorter than its Content-Length and refuses it.
type Once struct{ R io.Reader }

// ErrOnce is Seek's answer: a Once body cannot be rewound.
var ErrOnce = errors.New("backend: a body sent once cannot be rewound")

func (o *Once) Read(p []byte) (int, error) { return o.R.Read(p) }

// Seek fails: a Once body is never replayed.
func (o *Once) Seek(int64, int) (int64, error) { return 0, ErrOnce }

// sdkBody is the body the SDK gets: a plain reader, which it can neither
// rewind nor take for an *io.PipeReader (which smithy sends chunked,
// without the Content-Length a store needs).
func (o *Once) sdkBody() io.Reader { return struct{ io.Reader }{o.R} }

// SentOnce reports whether body is a Once body.
func SentOnce(body io.Reader) bool {
	_, ok := body.(*Once)
	return ok
}

// MD5Refused reports whether err is a store's refusal of a body sent
// without Content-MD5 (as stores answer for buckets with Object Lock).
func MD5Refused(err error) bool { return md5Refused(err) }
