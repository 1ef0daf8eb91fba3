package sealstore

import (
	"context"

	"github.com/s3seal/s3seal/backend"
	"github.com/s3seal/s3seal/crypto"
)

// getSource opens a copy source (CopyObject, UploadPartCopy) like Get, but
// reads its ciphertext through the backend's resuming reader when it has
// one: a copy of many GB survives a cut connection without starting over.
func (s *Store) getSource(ctx context.Context, in ReadInput) (ObjectInfo, *Reader, error) {
	bucket, key, versionID, rng := in.Bucket, in.Key, in.VersionID, in.Range
	bi, info, _, err := s.headDescribed(ctx, in)
	if err != nil {
		return info, nil, err
	}
	off, n := int64(0), info.Size
	if rng != nil {
		if off, n, err = ResolveRange(rng, info); err != nil {
			return info, nil, err
		}
	}
	if n == 0 || bi.Size == 0 { // nothing to read that a range could name
		return s.Read(ctx, in)
	}
	cOff, cLen := off, n
	switch {
	case rng == nil:
		cOff, cLen = 0, bi.Size
	case info.manifest != nil:
		cOff, cLen = info.manifest.CipherRange(off, n)
	case info.Encrypted:
		cOff, cLen = crypto.CipherRange(info.Size, off, n)
	}
	body := s.be.ReadSource(ctx, backend.GetInput{Bucket: bucket, Key: key,
		Range: &backend.ByteRange{Off: cOff, Len: cLen}, IfMatch: info.backendETag, VersionID: versionID}, cLen)
	obj := &backend.Object{Info: bi, Body: body}
	if rng == nil {
		off, n = 0, -1
	}
	_, rd, err := s.open(ctx, obj, bucket, off, n, in.CustomerKey)
	if err != nil {
		body.Close()
		return info, nil, err
	}
	rd.Partial = rng != nil
	return info, rd, nil
}
