package s3api

import (
	"context"
	"sync"
	"time"

	"golang.org/x/sync/singleflight"

	"github.com/s3seal/s3seal/sealstore"
)

// lifecycleCache holds the lifecycle rules of the buckets recently
// written or read, for x-amz-expiration. The rules are the store's (it
// applies them); s3seal reads them with GET ?lifecycle, as it reads CORS
// rules (corsCache), keeps them lifecycleTTL, and forgets a bucket's at
// once when they change through s3seal. The header is advice: a read
// that fails, or is refused for want of a slot, leaves it out and never
// fails the request.
type lifecycleCache struct {
	mu      sync.Mutex
	m       map[string]lifecycleEntry
	flight  singleflight.Group
	fetches chan struct{} // one token per read in flight (lifecycleMaxFetches)
	once    sync.Once
}

type lifecycleEntry struct {
	rules []lcRule // nil: none, or unreadable
	until time.Time
}

// Bounds of the lifecycle cache: as long as CORS rules are kept (another
// s3seal's change shows within that), as many buckets, as many reads at
// once.
const (
	lifecycleTTL        = corsTTL
	lifecycleMaxBuckets = corsMaxBuckets
	lifecycleMaxFetches = corsMaxFetches
	lifecycleMaxDoc     = maxXMLBody
)

// forget drops a bucket's rules, after a change through s3seal.
func (c *lifecycleCache) forget(bucket string) {
	c.mu.Lock()
	delete(c.m, bucket)
	c.mu.Unlock()
}

// rules returns the bucket's lifecycle rules, nil when it has none or
// they could not be read.
func (c *lifecycleCache) rules(ctx context.Context, st ObjectStore, bucket string, maxFetches int) []lcRule {
	if !st.HasSettings() {
		return nil
	}
	now := time.Now()
	c.mu.Lock()
	e, ok := c.m[bucket]
	c.mu.Unlock()
	if ok && now.Before(e.until) {
		return e.rules
	}
	ch := c.flight.DoChan(bucket, func() (any, error) {
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
		defer cancel()
		return c.fetch(ctx, st, bucket, maxFetches), nil
	})
	// x-amz-expiration is advice: an answer does not wait on a slow
	// store for it longer than lifecycleWait. The read goes on and is
	// kept for the requests after.
	t := time.NewTimer(lifecycleWait)
	defer t.Stop()
	select {
	case r := <-ch:
		return r.Val.([]lcRule)
	case <-t.C:
		return nil
	case <-ctx.Done():
		return nil
	}
}

// lifecycleWait bounds how long an answer waits for its bucket's
// lifecycle rules.
var lifecycleWait = time.Second

// fetch reads a bucket's rules from the store and keeps them.
func (c *lifecycleCache) fetch(ctx context.Context, st ObjectStore, bucket string, maxFetches int) []lcRule {
	c.once.Do(func() { c.fetches = make(chan struct{}, max(1, min(lifecycleMaxFetches, maxFetches))) })
	select {
	case c.fetches <- struct{}{}:
		defer func() { <-c.fetches }()
	default:
		return nil // not kept
	}
	out, err := st.Setting(ctx, sealstore.BucketLifecycle, sealstore.SettingRef{Bucket: bucket})
	// The entry lives from the answer on (as the CORS rules').
	now := time.Now()
	e := lifecycleEntry{until: now.Add(lifecycleTTL)}
	if err == nil && len(out.Body) <= lifecycleMaxDoc {
		// A document s3seal would refuse on PUT (the store's own, or
		// forged) gives no header.
		_, e.rules, _ = parseLifecycle(out.Body)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil {
		c.m = map[string]lifecycleEntry{}
	}
	if len(c.m) >= lifecycleMaxBuckets {
		for b, old := range c.m {
			if !now.Before(old.until) {
				delete(c.m, b)
			}
		}
	}
	if len(c.m) < lifecycleMaxBuckets {
		c.m[bucket] = e
	}
	return e.rules
}

// setExpiration sets x-amz-expiration on the answer about an object when
// a rule of its bucket will expire it. tags are the object's when known
// (a PUT's x-amz-tagging); nil reads them from the store when a rule
// filters on tags and the object has some.
func (s *Server) setExpiration(req *request, info sealstore.ObjectInfo, tags []tag) {
	rules := s.lifecycle.rules(req.r.Context(), s.store, req.bucket, s.cfg.MaxInFlight)
	if len(rules) == 0 {
		return
	}
	mod := info.LastModified
	if mod.IsZero() {
		mod = time.Now()
	}
	readTags := func() []tag {
		if tags != nil || info.TagCount == 0 {
			return tags
		}
		out, err := s.store.Setting(req.r.Context(), sealstore.ObjectTagging,
			sealstore.SettingRef{Bucket: req.bucket, Key: req.key, VersionID: info.VersionID})
		if err != nil {
			return nil
		}
		var t tagging
		if decodeXML(out.Body, &t) != nil {
			return nil
		}
		return t.TagSet.Tags
	}
	if v := expirationHeader(rules, req.key, info.Size, mod, readTags); v != "" {
		req.w.Header().Set("x-amz-expiration", v)
	}
}
