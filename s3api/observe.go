package s3api

import (
	"context"
	"errors"
	"io"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/s3seal/s3seal/sealstore"
)

// Observer counts what the S3 front does (metrics). Its methods must be
// safe for concurrent use and return quickly.
type Observer interface {
	// Request reports one finished S3 request: its operation (the
	// handler's name, such as "PutObject"), the status answered, the
	// bytes of the request body read and of the response written, and
	// the time from the request's arrival (its headers read) to the end
	// of its response (the handler done writing it), waits for a slot
	// and for the client included.
	Request(operation string, status int, bytesIn, bytesOut int64, d time.Duration)
	// InFlight reports a request taking (+1) or releasing (-1) a slot.
	InFlight(delta int)
	// SlotWait reports a request that found no free slot and had to wait.
	SlotWait()
	// IntegrityFailure reports a request refused or cut because stored
	// data failed authentication.
	IntegrityFailure()
}

type nopObserver struct{}

func (nopObserver) Request(string, int, int64, int64, time.Duration) {}
func (nopObserver) InFlight(int)                                     {}
func (nopObserver) SlotWait()                                        {}
func (nopObserver) IntegrityFailure()                                {}

// reqInfo is what the layers of one request tell its end: the operation
// the router chose and whether stored data failed authentication.
type reqInfo struct {
	op        string
	integrity atomic.Bool
	// bucket and accessKey (once the signature is verified) name the
	// request in the log of a refusal.
	bucket, accessKey string
	// credentials asks the store whether it refuses s3seal's own
	// credentials (sealstore.Store.CheckCredentials), before an answer
	// names them.
	credentials func(context.Context) error
}

type infoKey struct{}

func infoFrom(ctx context.Context) *reqInfo {
	ri, _ := ctx.Value(infoKey{}).(*reqInfo)
	return ri
}

// noteErr records in the request's info what err says about stored data.
func noteErr(r *http.Request, err error) {
	if ri := infoFrom(r.Context()); ri != nil && errors.Is(err, sealstore.ErrIntegrity) {
		ri.integrity.Store(true)
	}
}

// countingBody counts the bytes read from a request body.
type countingBody struct {
	io.ReadCloser
	n int64
}

func (b *countingBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	b.n += int64(n)
	return n, err
}
