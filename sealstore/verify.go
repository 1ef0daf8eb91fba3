package sealstore

import (
	"context"
	"errors"
	"io"
	"strings"
	"sync"

	"golang.org/x/sync/errgroup"

	"github.com/s3seal/s3seal/backend"
	"github.com/s3seal/s3seal/crypto"
)

// What Verify found of one object.
const (
	VerifyOK         = "ok"
	VerifyPlaintext  = "plaintext"   // no s3seal metadata
	VerifyUnknownKey = "unknown-key" // wrapped under a key id not in the keyring
	// VerifyWrongKey: the wrapped data key does not open under the
	// keyring's key of the id it names. Sealed under a key this keyring
	// lacks (another key under that id), or its wrapped key was altered;
	// when no object under that id opens, the keyring is wrong.
	VerifyWrongKey = "wrong-key"
	VerifyCorrupt  = "corrupt" // metadata, manifest or data failed authentication
)

// VerifyResult is Verify's finding for one object.
type VerifyResult struct {
	Key   string
	Size  int64  // backend (ciphertext) size
	KeyID string // master key id from the metadata, when it parsed
	// KeyVersion names the version of a KMS master key the object's
	// intermediate key is sealed under, when the key service tells.
	KeyVersion string
	Status     string // one of the Verify* constants
	Err        error  // why the object is not VerifyOK
	// CustomerKeyed says the object is sealed with a customer key (SSE-C):
	// its metadata, wrapped key and manifest were checked, but a deep run
	// cannot read its content without the customer's key.
	CustomerKeyed bool
}

// VerifyOptions configure Verify.
type VerifyOptions struct {
	Prefix string
	// Deep reads every object through and authenticates every segment
	// (the plaintext is discarded); otherwise only the metadata, the
	// wrapped key (bound to the object's name) and, for a multipart
	// object, its manifest are checked.
	Deep bool
	// Concurrency bounds the objects checked at once. Default 8.
	Concurrency int
	// Listed, when set, is told of the listing's progress.
	Listed ListProgress
}

// Verify checks every object of bucket under opt.Prefix (s3seal's own keys
// under ReservedPrefix are skipped) and calls report once per object, from
// one goroutine at a time. Objects deleted meanwhile are skipped. It
// returns the first backend failure (listing or reading), which ends the
// run; findings about objects are reported, not returned.
func (s *Store) Verify(ctx context.Context, bucket string, opt VerifyOptions, report func(VerifyResult)) error {
	if opt.Concurrency <= 0 {
		opt.Concurrency = 8
	}
	count := s.startCount(ctx, bucket, opt.Prefix, opt.Listed)
	defer count.stop(false)
	var mu sync.Mutex
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(opt.Concurrency)
	err := s.listAll(gctx, bucket, opt.Prefix, func(e backend.ListEntry) error {
		if !walkedObject(e.Key) {
			return nil
		}
		count.add(e)
		g.Go(func() error {
			r, err := s.verifyOne(gctx, bucket, e, opt.Deep)
			if err != nil {
				if backend.IsNotFound(err) {
					return nil
				}
				return err
			}
			mu.Lock()
			defer mu.Unlock()
			report(r)
			return nil
		})
		return gctx.Err()
	})
	count.stop(err == nil)
	if werr := g.Wait(); err == nil || errors.Is(err, context.Canceled) && werr != nil {
		err = werr
	}
	return err
}

// verifyOne checks one object. Only backend failures are returned.
func (s *Store) verifyOne(ctx context.Context, bucket string, e backend.ListEntry, deep bool) (VerifyResult, error) {
	r := VerifyResult{Key: e.Key, Size: e.Size, Status: VerifyOK}
	var info ObjectInfo
	var err error
	own := strings.HasPrefix(e.Key, BucketDocPrefix)
	if own {
		// s3seal's own bucket documents: small, read whole, by the
		// path that reaches keys under ReservedPrefix.
		var rd *Reader
		if info, rd, err = s.Read(ctx, ReadInput{Bucket: bucket, Key: e.Key, own: true}); err == nil {
			_, err = io.Copy(io.Discard, rd)
			rd.Close()
		}
	} else {
		info, err = s.Head(ctx, bucket, e.Key)
	}
	if deep && !own && err == nil && !info.CustomerKeyed {
		var rd *Reader
		info, rd, err = s.Get(ctx, bucket, e.Key, nil)
		if err == nil {
			_, err = io.Copy(io.Discard, rd)
			rd.Close()
		}
	}
	r.CustomerKeyed = info.CustomerKeyed
	r.KeyID = info.env.KeyID
	if info.env.External() && s.opt.KMS != nil {
		r.KeyVersion = s.opt.KMS.Version(info.env.KeyID, info.env.SealedKey)
	}
	if info.backendSize > 0 {
		r.Size = info.backendSize
	}
	switch {
	case err == nil && !info.Encrypted:
		r.Status, r.Err = VerifyPlaintext, ErrNotEncrypted
	case err == nil:
	case errors.Is(err, ErrNotEncrypted):
		r.Status, r.Err = VerifyPlaintext, ErrNotEncrypted
	case errors.Is(err, crypto.ErrUnknownKey):
		r.Status, r.Err = VerifyUnknownKey, err
	case errors.Is(err, crypto.ErrKeyMismatch):
		r.Status, r.Err = VerifyWrongKey, err
		r.KeyID = crypto.KeyIDOf(err)
	case errors.Is(err, ErrIntegrity):
		r.Status, r.Err = VerifyCorrupt, err
	default:
		return r, err
	}
	return r, nil
}
