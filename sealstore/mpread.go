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

// manifestCache holds opened manifests by oid: an oid names one upload,
// whose manifest never changes. It is bounded by the parts its manifests
// hold in all (a 10,000-part manifest weighs ~500 kB, a one-part one ~100
// bytes), and keeps no per-part checksums: reads do not need them.
type manifestCache struct {
	lru      *lru.Cache[[crypto.OIDSize]byte, crypto.Manifest]
	parts    atomic.Int64
	maxParts int64
}

func newManifestCache(maxParts int) (*manifestCache, error) {
	c := &manifestCache{maxParts: int64(maxParts)}
	l, err := lru.NewWithEvict(1<<20, func(_ [crypto.OIDSize]byte, m crypto.Manifest) { c.parts.Add(-int64(len(m.Parts))) })
	c.lru = l
	return c, err
}

func (c *manifestCache) Get(oid [crypto.OIDSize]byte) (crypto.Manifest, bool) { return c.lru.Get(oid) }

// Add caches m (without its per-part checksums) and evicts the least
// recently used manifests until the parts fit.
func (c *manifestCache) Add(oid [crypto.OIDSize]byte, m crypto.Manifest) {
	if int64(len(m.Parts)) > c.maxParts {
		return
	}
	slim := crypto.Manifest{Parts: make([]crypto.ManifestPart, len(m.Parts)), Checksums: m.Checksums}
	for i, p := range m.Parts {
		p.Checksums = nil
		slim.Parts[i] = p
	}
	if c.lru.Contains(oid) {
		return
	}
	c.parts.Add(int64(len(slim.Parts)))
	c.lru.Add(oid, slim)
	for c.parts.Load() > c.maxParts {
		if _, _, ok := c.lru.RemoveOldest(); !ok {
			return
		}
	}
}

// manifest returns the manifest of the multipart object with data key dk,
// from the cache or from the backend. Manifests are cached by oid forever:
// an oid names one upload, whose manifest never changes.
func (s *Store) manifest(ctx context.Context, bucket, key string, dk *crypto.DataKey) (crypto.Manifest, error) {
	oid := dk.OID()
	if m, ok := s.manifests.Get(oid); ok {
		return m, nil
	}
	obj, err := s.be.GetObject(ctx, backend.GetInput{Bucket: bucket, Key: manifestKey(oid)})
	if backend.IsNotFound(err) {
		return crypto.Manifest{}, integrityErr(bucket, key, errors.New("the manifest of this multipart object is missing"))
	}
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
	s.manifests.Add(oid, m)
	return m, nil
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
