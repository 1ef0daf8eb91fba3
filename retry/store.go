package retry

import (
	"context"
	"fmt"
	"io"
	"net/http"

	"github.com/s3seal/s3seal/backend"
)

// Policies are the retry policies of a Store, per kind of operation. A
// zero Policy means the defaults (4 attempts, 500 ms).
type Policies struct {
	// Default covers everything not named below: PUT, GET, HEAD, deletes,
	// listings, buckets, and Create/Abort/ListParts/ListMultipartUploads.
	Default Policy
	// Part covers UploadPart and UploadPartCopy.
	Part Policy
	// Complete covers CompleteMultipartUpload.
	Complete Policy
	// SourceRead bounds the reopens of a copy source (ResumingReader).
	// The Store does not use it itself; it is kept here so that the
	// configuration travels in one value (see Store.SourceRead).
	SourceRead Policy
}

// Store wraps a backend.Store so that every call is retried under p. The
// backend client underneath should not retry by itself (attempts would
// multiply). PutObject bodies are rewound before each attempt, which is why
// backend.PutInput asks for an io.ReadSeeker.
func Store(st backend.Store, p Policy) Backend {
	return NewStore(st, Policies{Default: p, Part: p, Complete: p, SourceRead: p})
}

// Backend is a store that retries: every backend.Store call, and the two
// capabilities a plain client lacks, a completion that recovers an answer
// lost between attempts (Completer) and a copy source read that resumes
// where a read broke (SourceReader). It is what sealstore's contract
// (sealstore.Backend) asks for.
type Backend interface {
	backend.Store
	Completer
	SourceReader
}

// NewStore wraps st with a policy per kind of operation.
func NewStore(st backend.Store, ps Policies) Backend {
	return &store{st: st, ps: ps}
}

type store struct {
	st backend.Store
	ps Policies
}

var _ backend.Store = (*store)(nil)

func (s *store) do(ctx context.Context, c Call, op func(attempt int) error) error {
	return DoCall(ctx, s.ps.Default, c, op)
}

func (s *store) ListBuckets(ctx context.Context) (out []backend.Bucket, err error) {
	err = s.do(ctx, Call{Operation: "ListBuckets"}, func(int) error { out, err = s.st.ListBuckets(ctx); return err })
	return out, err
}

// CreateBucket treats BucketAlreadyOwnedByYou on a retry as the success of
// an earlier attempt whose answer was lost.
func (s *store) CreateBucket(ctx context.Context, bucket string) error {
	return s.do(ctx, Call{Operation: "CreateBucket", Bucket: bucket}, func(attempt int) error {
		err := s.st.CreateBucket(ctx, bucket)
		if attempt > 1 && backend.ErrorCode(err) == "BucketAlreadyOwnedByYou" {
			return nil
		}
		return err
	})
}

func (s *store) HeadBucket(ctx context.Context, bucket string) error {
	return s.do(ctx, Call{Operation: "HeadBucket", Bucket: bucket}, func(int) error { return s.st.HeadBucket(ctx, bucket) })
}

func (s *store) DeleteBucket(ctx context.Context, bucket string) error {
	return s.do(ctx, Call{Operation: "DeleteBucket", Bucket: bucket}, func(attempt int) error {
		err := s.st.DeleteBucket(ctx, bucket)
		if attempt > 1 && backend.ErrorCode(err) == "NoSuchBucket" {
			return nil
		}
		return err
	})
}

func (s *store) BucketRegion(ctx context.Context, bucket string) (out string, err error) {
	err = s.do(ctx, Call{Operation: "GetBucketLocation", Bucket: bucket}, func(int) error { out, err = s.st.BucketRegion(ctx, bucket); return err })
	return out, err
}

// onceFor is p, with one attempt for a body that cannot be replayed.
func onceFor(body io.Reader, p Policy) Policy {
	if backend.SentOnce(body) {
		p.Attempts = 1
	}
	return p
}

// rewind puts a replayable body back at its start.
func rewind(body io.Seeker) error {
	if _, err := body.Seek(0, io.SeekStart); err != nil {
		return fmt.Errorf("rewind body for retry: %w", err)
	}
	return nil
}

// PutObject sends a body it cannot rewind (backend.Once) once: its
// failure goes back to the caller, whose own client sends it again.
func (s *store) PutObject(ctx context.Context, in backend.PutInput) (out backend.PutOutput, err error) {
	err = DoCall(ctx, onceFor(in.Body, s.ps.Default), Call{Operation: "PutObject", Bucket: in.Bucket, Key: in.Key}, func(attempt int) error {
		if attempt > 1 {
			if err := rewind(in.Body); err != nil {
				return err
			}
		}
		out, err = s.st.PutObject(ctx, in)
		return err
	})
	return out, err
}

// GetObject retries until the backend answers; the body itself is not
// retried (the caller is already streaming it; see ResumingReader).
func (s *store) GetObject(ctx context.Context, in backend.GetInput) (out *backend.Object, err error) {
	err = s.do(ctx, Call{Operation: "GetObject", Bucket: in.Bucket, Key: in.Key}, func(int) error { out, err = s.st.GetObject(ctx, in); return err })
	return out, err
}

func (s *store) HeadObject(ctx context.Context, bucket, key string) (out backend.ObjectInfo, err error) {
	err = s.do(ctx, Call{Operation: "HeadObject", Bucket: bucket, Key: key}, func(int) error { out, err = s.st.HeadObject(ctx, bucket, key); return err })
	return out, err
}

func (s *store) ObjectTagging(ctx context.Context, bucket, key, versionID string) (out string, err error) {
	err = s.do(ctx, Call{Operation: "GetObjectTagging", Bucket: bucket, Key: key}, func(int) error {
		out, err = s.st.ObjectTagging(ctx, bucket, key, versionID)
		return err
	})
	return out, err
}

func (s *store) PutObjectLock(ctx context.Context, in backend.ObjectLockInput) error {
	return s.do(ctx, Call{Operation: "PutObjectLock", Bucket: in.Bucket, Key: in.Key}, func(int) error { return s.st.PutObjectLock(ctx, in) })
}

func (s *store) BucketDefaultRetention(ctx context.Context, bucket string) (d backend.DefaultRetention, err error) {
	err = s.do(ctx, Call{Operation: "GetObjectLockConfiguration", Bucket: bucket}, func(int) error {
		d, err = s.st.BucketDefaultRetention(ctx, bucket)
		return err
	})
	return d, err
}

func (s *store) DeleteObject(ctx context.Context, bucket, key string) error {
	return s.do(ctx, Call{Operation: "DeleteObject", Bucket: bucket, Key: key}, func(int) error { return s.st.DeleteObject(ctx, bucket, key) })
}

func (s *store) DeleteObjects(ctx context.Context, bucket string, keys []string) (out []backend.DeleteResult, err error) {
	err = s.do(ctx, Call{Operation: "DeleteObjects", Bucket: bucket}, func(int) error { out, err = s.st.DeleteObjects(ctx, bucket, keys); return err })
	return out, err
}

// CopyObject is retried like any other call: a copy that went through
// but whose answer was lost fails its retry's source condition when the
// copy changed the ETag, which the caller sees as PreconditionFailed.
func (s *store) CopyObject(ctx context.Context, in backend.CopyInput) (out backend.CopyOutput, err error) {
	err = s.do(ctx, Call{Operation: "CopyObject", Bucket: in.Bucket, Key: in.Key}, func(int) error { out, err = s.st.CopyObject(ctx, in); return err })
	return out, err
}

func (s *store) ListObjects(ctx context.Context, in backend.ListInput) (out backend.ListOutput, err error) {
	err = s.do(ctx, Call{Operation: "ListObjects", Bucket: in.Bucket}, func(int) error { out, err = s.st.ListObjects(ctx, in); return err })
	return out, err
}

// NewForwarder returns f with its reads (GET and HEAD, which change
// nothing) retried under p, as the Store's calls are; other methods are
// sent once, as f sends them (the client retries those).
func NewForwarder(f backend.Forwarder, p Policy) backend.Forwarder {
	return forwarder{f: f, p: p}
}

type forwarder struct {
	f backend.Forwarder
	p Policy
}

func (r forwarder) Forward(ctx context.Context, in backend.RawRequest) (*backend.RawResponse, error) {
	if in.Method != http.MethodGet && in.Method != http.MethodHead {
		return r.f.Forward(ctx, in)
	}
	var out *backend.RawResponse
	err := DoCall(ctx, r.p, Call{Operation: "Forward " + in.Method, Bucket: in.Bucket, Key: in.Key}, func(int) error {
		var err error
		out, err = r.f.Forward(ctx, in)
		return err
	})
	return out, err
}
