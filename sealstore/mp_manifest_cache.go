package sealstore

import (
	"sync/atomic"

	lru "github.com/hashicorp/golang-lru/v2"

	"github.com/s3seal/s3seal/crypto"
)

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
