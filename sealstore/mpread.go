package sealstore

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync/atomic"

	lru "github.com/hashicorp/golang-lru/v2"

	"github.com/s3seal/s3seal/backend"
	"github.com/s3seal/s3seal/crypto"
)

// maxManifestSize bounds what s3seal reads as a manifest (10,000 parts with
// a checksum each take under 1 MiB).
const maxManifestSize = 8 << 20

// manifestID names one manifest: the upload's oid and the backend ETag of
// the object it describes. Neither ever changes for an object.
type manifestID struct {
	oid  [crypto.OIDSize]byte
	etag string
}

// manifestCache holds opened manifests by manifestID. It is bounded by the parts its manifests
// hold in all (a 10,000-part manifest weighs ~500 kB, a one-part one ~100
// bytes), and keeps no per-part checksums: reads do not need them.
type manifestCache struct {
	lru      *lru.Cache[manifestID, crypto.Manifest]
	parts    atomic.Int64
	maxParts int64
}

func newManifestCache(maxParts int) (*manifestCache, error) {
	c := &manifestCache{maxParts: int64(maxParts)}
	l, err := lru.NewWithEvict(1<<20, func(_ manifestID, m crypto.Manifest) { c.parts.Add(-int64(len(m.Parts))) })
	c.lru = l
	return c, err
}

func (c *manifestCache) Get(id manifestID) (crypto.Manifest, bool) { return c.lru.Get(id) }

// Add caches m (without its per-part checksums) and evicts the least
// recently used manifests until the parts fit.
func (c *manifestCache) Add(id manifestID, m crypto.Manifest) {
	if int64(len(m.Parts)) > c.maxParts {
		return
	}
	slim := crypto.Manifest{Parts: make([]crypto.ManifestPart, len(m.Parts)), Checksums: m.Checksums}
	for i, p := range m.Parts {
		p.Checksums = nil
		slim.Parts[i] = p
	}
	if c.lru.Contains(id) {
		return
	}
	c.parts.Add(int64(len(slim.Parts)))
	c.lru.Add(id, slim)
	for c.parts.Load() > c.maxParts {
		if _, _, ok := c.lru.RemoveOldest(); !ok {
			return
		}
	}
}

// manifest returns the manifest of the multipart object with data key dk,
// backend ETag etag and backend size size, from the cache or from the
// backend: first under its name (the ETag), else among the manifests of the
// upload (a backend whose ETags are not S3's, and a completion that stopped
// before it stored the manifest under the ETag the backend gave): the one
// whose size is the object's and, if several are, whose parts decrypt.
func (s *Store) manifest(ctx context.Context, bucket, key string, dk *crypto.DataKey, etag string, size int64) (crypto.Manifest, error) {
	id := manifestID{dk.OID(), etag}
	if m, ok := s.manifests.Get(id); ok {
		return m, nil
	}
	m, err := s.loadManifest(ctx, bucket, key, dk, etag, size)
	if err != nil {
		return crypto.Manifest{}, err
	}
	s.manifests.Add(id, m)
	return m, nil
}

// loadManifest is manifest without the cache: it reads the manifest whole,
// per-part checksums included.
func (s *Store) loadManifest(ctx context.Context, bucket, key string, dk *crypto.DataKey, etag string, size int64) (crypto.Manifest, error) {
	m, err := s.readManifest(ctx, bucket, key, dk, manifestKey(dk.OID(), etag))
	if backend.IsNotFound(err) {
		m, err = s.findManifest(ctx, bucket, key, dk, etag, size)
	}
	return m, err
}

// readManifest reads and opens one manifest object.
func (s *Store) readManifest(ctx context.Context, bucket, key string, dk *crypto.DataKey, mkey string) (crypto.Manifest, error) {
	obj, err := s.be.GetObject(ctx, backend.GetInput{Bucket: bucket, Key: mkey})
	if err != nil {
		return crypto.Manifest{}, err
	}
	defer obj.Body.Close()
	sealed, err := io.ReadAll(io.LimitReader(obj.Body, maxManifestSize+1))
	if err != nil {
		return crypto.Manifest{}, err
	}
	if len(sealed) > maxManifestSize {
		return crypto.Manifest{}, integrityErr(bucket, key, fmt.Errorf("manifest over %d bytes", maxManifestSize))
	}
	m, err := crypto.OpenManifest(dk, sealed)
	if err != nil {
		return crypto.Manifest{}, integrityErr(bucket, key, err)
	}
	return m, nil
}

// findManifest looks among the upload's manifests for the object's.
func (s *Store) findManifest(ctx context.Context, bucket, key string, dk *crypto.DataKey, etag string, size int64) (crypto.Manifest, error) {
	var fits []crypto.Manifest
	err := s.listAll(ctx, bucket, manifestDir(dk.OID()), func(e backend.ListEntry) error {
		m, err := s.readManifest(ctx, bucket, key, dk, e.Key)
		if err == nil && m.CipherSize() == size {
			fits = append(fits, m)
		}
		if backend.IsNotFound(err) || errors.Is(err, ErrIntegrity) {
			return nil
		}
		return err
	})
	if err != nil {
		return crypto.Manifest{}, err
	}
	var found []crypto.Manifest
	for _, m := range fits {
		if len(fits) == 1 || s.partsOpen(ctx, bucket, key, dk, etag, m, fits) {
			found = append(found, m)
		}
	}
	if len(found) != 1 {
		return crypto.Manifest{}, integrityErr(bucket, key, fmt.Errorf("the manifest of this multipart object is missing (%d candidates fit)", len(found)))
	}
	return found[0], nil
}

// partsOpen reports whether the object's parts are m's where m differs
// from the other candidates: the first segment of each such part is read
// (pinned to the object's ETag) and must decrypt as m's stream.
func (s *Store) partsOpen(ctx context.Context, bucket, key string, dk *crypto.DataKey, etag string, m crypto.Manifest, all []crypto.Manifest) bool {
	var cstart int64
	for i, p := range m.Parts {
		differs := false
		for _, o := range all {
			differs = differs || len(o.Parts) != len(m.Parts) || o.Parts[i].Stream != p.Stream
		}
		if differs {
			n := min(p.PlainSize, crypto.SegmentSize)
			cOff, cLen := crypto.CipherRange(p.PlainSize, 0, n)
			obj, err := s.be.GetObject(ctx, backend.GetInput{Bucket: bucket, Key: key, IfMatch: etag,
				Range: &backend.ByteRange{Off: cstart + cOff, Len: cLen}})
			if err != nil {
				return false
			}
			r, err := crypto.NewReader(io.LimitReader(obj.Body, cLen), dk, p.Stream, p.PlainSize, 0, n)
			if err == nil {
				_, err = io.Copy(io.Discard, r)
			}
			obj.Body.Close()
			if err != nil {
				return false
			}
		}
		cstart += crypto.CiphertextSize(p.PlainSize)
	}
	return true
}

// partsReader reads a plaintext range of a multipart object from src,
// which holds exactly the ciphertext of that range (m.CipherRange, or the
// whole object): each part the range touches is opened as its own sealed
// stream, and after the last one src must be at its end.
type partsReader struct {
	src   io.Reader
	dk    *crypto.DataKey
	parts []partRange
	cur   io.Reader
	err   error
}

// partRange is the piece [off, off+n) of one part that a read covers.
type partRange struct {
	part   crypto.ManifestPart
	off, n int64
}

// newPartsReader reads [off, off+n) of the object; whole means the whole
// object (every part, the empty ones too, is authenticated).
func newPartsReader(src io.Reader, dk *crypto.DataKey, m crypto.Manifest, off, n int64, whole bool) *partsReader {
	r := &partsReader{src: src, dk: dk}
	var start int64
	for _, p := range m.Parts {
		lo, hi := max(off, start), min(off+n, start+p.PlainSize)
		switch {
		case whole:
			r.parts = append(r.parts, partRange{p, 0, p.PlainSize})
		case hi > lo:
			r.parts = append(r.parts, partRange{p, lo - start, hi - lo})
		}
		start += p.PlainSize
	}
	return r
}

func (r *partsReader) Read(p []byte) (int, error) {
	for r.err == nil {
		if r.cur == nil {
			if r.err = r.openNext(); r.err != nil {
				break
			}
		}
		n, err := r.cur.Read(p)
		if err == io.EOF {
			r.cur = nil
			err = nil
		}
		r.err = err
		if n > 0 {
			return n, nil
		}
	}
	return 0, r.err
}

// openNext opens the next part of the read or, after the last, checks that
// src ended and reports io.EOF.
func (r *partsReader) openNext() error {
	if len(r.parts) == 0 {
		var one [1]byte
		if n, err := io.ReadFull(r.src, one[:]); n > 0 {
			return fmt.Errorf("%w: data after the last part", crypto.ErrCorrupt)
		} else if err != io.EOF {
			return err
		}
		return io.EOF
	}
	pr := r.parts[0]
	r.parts = r.parts[1:]
	_, cLen := crypto.CipherRange(pr.part.PlainSize, pr.off, pr.n)
	cur, err := crypto.NewReader(io.LimitReader(r.src, cLen), r.dk, pr.part.Stream, pr.part.PlainSize, pr.off, pr.n)
	if err != nil {
		return err
	}
	r.cur = cur
	return nil
}
