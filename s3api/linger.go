package s3api

import (
	"io"
	"net/http"
	"time"
)

// refusalLinger is how long a refused request's unread body is read and
// dropped after the refusal went out (lingerAfterRefusal).
const refusalLinger = 500 * time.Millisecond

// postHandlerDiscard is what net/http reads of an unread body before it
// answers (its maxPostHandlerReadBytes); more, and it closes instead.
const postHandlerDiscard = 256 << 10

// lingerAfterRefusal lets a client that sends its body without waiting
// for 100 Continue read a refusal given before the body was read (503
// SlowDown when the spool's disk or the request slots are full, 403, ...).
// net/http would close the connection with the body unread: the client,
// still sending, gets a reset, and its kernel drops the answer unread.
// aws-sdk-go-v2 is such a client, whatever its Expect header says (its
// requests carry no protocol version, so net/http does not wait). So the
// answer is flushed, then the body read and dropped for refusalLinger at
// most: nothing of it is kept, and a client that does wait for 100
// Continue sends nothing and closes. It runs once the request slot was
// given back. body is the request's own, beneath the transfer guard, whose
// deadlines take over again afterwards.
func lingerAfterRefusal(w http.ResponseWriter, r *http.Request, body io.Reader, unread int64) {
	// Up to 256 KiB left (or a length not declared), net/http reads the
	// rest itself before it answers, under the transfer guard's deadline.
	if r.ProtoMajor != 1 || body == nil || unread <= postHandlerDiscard {
		return
	}
	rc := http.NewResponseController(w)
	if rc.Flush() != nil || rc.SetReadDeadline(time.Now().Add(refusalLinger)) != nil {
		return
	}
	_, _ = io.Copy(io.Discard, body)
}
