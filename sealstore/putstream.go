package sealstore

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"sync"

	"github.com/s3seal/s3seal/backend"
	"github.com/s3seal/s3seal/crypto"
)

// A streamed PUT sends the ciphertext to the store as it is sealed, with
// no spool. It needs everything the envelope binds before the body
// arrives: the length, the plaintext MD5 (the client's Content-MD5) and
// the checksums (a value in a header, PutInput.Declared). The sealer holds
// the last segment back until every check has passed (sealChecked), so a
// body that fails one reaches the store short of its Content-Length and
// is refused: nothing is published. The body is sent once: a failed
// backend PUT is the client's to send again (docs/DESIGN.md, Performance).

// streamMinSize is the smallest body streamed: below it the spool costs
// little, and the store's demand for Content-MD5 of a small body in a
// bucket with Object Lock (backend.PutObject) can be met.
const streamMinSize = 1 << 20

// sealing is what a PUT made before its body: the data key, the key the
// body is sealed with (content: the data key, or the customer's for
// SSE-C, with its check), the key that wraps the data key and the sealed
// object metadata's plaintext.
type sealing struct {
	dk, content *crypto.DataKey
	wk          *crypto.WrapKey
	check       []byte
	om          crypto.ObjectMeta
}

// envelope wraps the data key bound to the plaintext's size, MD5 and
// checksums, and seals the object's metadata.
func (k sealing) envelope(in PutInput, size int64, md5 [16]byte, checksums map[string]string) (crypto.Envelope, error) {
	env, err := k.wk.Wrap(k.dk, crypto.Name{Bucket: in.Bucket, Key: in.Key}, crypto.Binding{PlainSize: size, PlainMD5: md5,
		Checksums: checksums, CustomerCheck: k.check, KMSContext: in.KMSContext, BucketKey: in.BucketKey})
	if err != nil {
		return env, fmt.Errorf("wrap data key: %w", err)
	}
	if env.SealedMeta, err = crypto.SealObjectMeta(k.dk, k.om); err != nil {
		return env, fmt.Errorf("seal object metadata: %w", err)
	}
	return env, nil
}

// streams reports whether in is a PUT s3seal streams. Conditional PUTs
// (whose lost answer is settled by asking the store, with the body
// replayed), PUTs with a lock (which stores take only with the body's
// Content-MD5) and PUTs into a bucket whose store asked for Content-MD5
// are spooled.
func (s *Store) streams(in PutInput) bool {
	if in.Size < streamMinSize || len(in.ContentMD5) != 16 || len(in.Declared) == 0 ||
		in.Cond != nil || in.Protect.Locks() {
		return false
	}
	_, spooled := s.spoolOnly.Load(in.Bucket)
	return !spooled
}

// errStoreDone ends the sealer's writes once the backend PUT returned.
var errStoreDone = errors.New("the store's PUT ended before the body was sent")

// putStreamed is put's streamed PUT (see streams).
func (s *Store) putStreamed(ctx context.Context, in PutInput, k sealing, prev <-chan prior) (ObjectInfo, error) {
	var md5 [16]byte
	copy(md5[:], in.ContentMD5)
	env, err := k.envelope(in, in.Size, md5, in.Declared)
	if err != nil {
		return ObjectInfo{}, err
	}
	var old prior
	sp, out, err := sendSealed(s, in, k.content, crypto.Stream{}, func(body io.Reader) (backend.PutOutput, error) {
		old = <-prev // before the PUT, so the HEAD cannot see this object
		return s.be.PutObject(ctx, backend.PutInput{Bucket: in.Bucket, Key: in.Key,
			Body: &backend.Once{R: body}, Size: crypto.CiphertextSize(in.Size),
			Meta: env.Metadata(), Headers: storeHeadersFor(env, in.Headers), Protect: in.Protect})
	})
	if err != nil {
		return ObjectInfo{}, s.streamFailed(in.Bucket, err)
	}
	if !maps.Equal(sp.checksums, in.Declared) {
		// Finalize checked the declared value; another set here is a bug
		// in the caller, and the object the store holds is bound to the
		// declared one, which the body has.
		return ObjectInfo{}, fmt.Errorf("streamed PUT: checksums %v, declared %v", sp.checksums, in.Declared)
	}
	return s.published(ctx, in, env, old, out, sp), nil
}

// streamFailed is the error a streamed PUT answers. A store that refused
// the body for want of its Content-MD5 (a bucket with Object Lock) gets
// the bucket's PUTs spooled from then on, and the client a 503 SlowDown,
// which S3 clients retry: its next attempt is spooled and carries the MD5.
func (s *Store) streamFailed(bucket string, err error) error {
	if backend.MD5Refused(err) {
		s.spoolOnly.Store(bucket, true)
		return errorf("SlowDown", "Please reduce your request rate.")
	}
	return err
}

// sendSealed seals in.Body (as sealChecked does) on a goroutine into a
// pipe, and runs send with the pipe's reader as the store's body. The
// body's own failure wins over the store's: the store then got a body cut
// before its last segment.
func sendSealed[T any](s *Store, in PutInput, dk *crypto.DataKey, stream crypto.Stream, send func(io.Reader) (T, error)) (*spooled, T, error) {
	pr, pw := io.Pipe()
	var (
		sp      *spooled
		sealErr error
		wg      sync.WaitGroup
	)
	wg.Go(func() {
		sp, sealErr = s.sealChecked(pw, in, dk, stream)
		if sealErr != nil {
			pw.CloseWithError(sealErr)
		} else {
			pw.Close()
		}
	})
	out, err := send(pr)
	pr.CloseWithError(errStoreDone) // a store that stopped reading frees the sealer
	wg.Wait()
	switch {
	case sealErr != nil && errors.Is(sealErr, errStoreDone) && err != nil:
		return nil, out, err
	case sealErr != nil:
		return nil, out, sealErr
	case err != nil:
		return nil, out, err
	}
	return sp, out, nil
}
