package sealstore

import (
	"context"

	"golang.org/x/sync/errgroup"

	"github.com/s3seal/s3seal/backend"
)

// Delete removes an object, and the manifest of a multipart object.
// Deleting a missing key succeeds, as in S3.
func (s *Store) Delete(ctx context.Context, bucket, key string) error {
	if err := CheckKey(key); err != nil {
		return err
	}
	manifest := <-s.peekManifest(ctx, bucket, key)
	if err := s.be.DeleteObject(ctx, bucket, key); err != nil {
		return err
	}
	s.dropManifest(ctx, bucket, manifest)
	return nil
}

// DeleteObjects deletes up to 1000 keys in one backend request, and the
// manifests of the multipart objects among them (found by HEADs made
// ListConcurrency at a time before the delete). Per-key failures come back
// in the result.
func (s *Store) DeleteObjects(ctx context.Context, bucket string, keys []string) ([]backend.DeleteResult, error) {
	manifests := make([]string, len(keys))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(s.opt.ListConcurrency)
	for i, k := range keys {
		g.Go(func() error { manifests[i] = <-s.peekManifest(gctx, bucket, k); return nil })
	}
	_ = g.Wait()
	res, err := s.be.DeleteObjects(ctx, bucket, keys)
	if err != nil {
		return nil, err
	}
	failed := map[string]bool{}
	for _, r := range res {
		if r.Code != "" {
			failed[r.Key] = true
		}
	}
	var drop []string
	for i, k := range keys {
		if manifests[i] != "" && !failed[k] {
			drop = append(drop, manifests[i])
		}
	}
	s.dropKeys(context.WithoutCancel(ctx), bucket, drop)
	return res, nil
}
