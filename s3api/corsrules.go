package s3api

import (
	"context"
	"net/http"
	"net/url"
	"sync"
	"time"

	"golang.org/x/sync/singleflight"

	"github.com/s3seal/s3seal/backend"
)

// corsTTL is how long a bucket's CORS rules, or their absence, are kept
// before they are read from the object store again; s3seal's own
// PutBucketCors and DeleteBucketCors drop them at once. A missing bucket
// is kept a second only, so that a bucket just created is seen.
// The rules are read before any signature is checked (a browser's
// preflight carries none), so what an unsigned request can cost is
// bounded: only buckets some credential may use are looked up (see
// corsBucket), one read per bucket at a time (singleflight), at most
// corsMaxFetches reads at once and never more than --max-requests (more
// answer 503 SlowDown), an unsigned request other than a preflight reads
// none (actualCORS), a store's
// failure is kept a second too, a document over corsMaxDoc (S3's own
// limit for a CORS configuration) is not kept, and a full cache keeps no
// new bucket rather than dropping the others.
const (
	corsTTL         = 5 * time.Second
	corsNoBucketTTL = time.Second
	corsMaxBuckets  = 10000
	corsMaxFetches  = 8
	corsMaxDoc      = 64 << 10
)

// corsCache holds the CORS rules of the buckets recently asked about.
type corsCache struct {
	mu      sync.Mutex
	m       map[string]corsEntry
	flight  singleflight.Group
	fetches chan struct{} // one token per read in flight (corsMaxFetches)
	once    sync.Once
}

type corsEntry struct {
	rules *corsDoc // nil: the bucket has none
	err   error    // NoSuchBucket
	until time.Time
}

// forget drops a bucket's rules, after a change through s3seal.
func (c *corsCache) forget(bucket string) {
	c.mu.Lock()
	delete(c.m, bucket)
	c.mu.Unlock()
}

// rules returns the bucket's CORS rules, nil when it has none (or the
// store keeps none), or the error of a bucket that does not exist or a
// store that failed.
func (c *corsCache) rules(ctx context.Context, f backend.Forwarder, bucket string, maxFetches int) (*corsDoc, error) {
	now := time.Now()
	c.mu.Lock()
	e, ok := c.m[bucket]
	c.mu.Unlock()
	if ok && now.Before(e.until) {
		return e.rules, e.err
	}
	// The read outlives the request that started it: others may wait on it.
	v, _, _ := c.flight.Do(bucket, func() (any, error) {
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
		defer cancel()
		return c.fetch(ctx, f, bucket, maxFetches), nil
	})
	e = v.(corsEntry)
	return e.rules, e.err
}

// fetch reads a bucket's rules from the store and keeps the answer.
func (c *corsCache) fetch(ctx context.Context, f backend.Forwarder, bucket string, maxFetches int) corsEntry {
	c.once.Do(func() { c.fetches = make(chan struct{}, max(1, min(corsMaxFetches, maxFetches))) })
	select {
	case c.fetches <- struct{}{}:
		defer func() { <-c.fetches }()
	default:
		return corsEntry{err: apiErr("SlowDown", "")} // not kept
	}
	now := time.Now()
	e := corsEntry{until: now.Add(corsTTL)}
	switch rules, err := fetchCORS(ctx, f, bucket); {
	case err == nil:
		e.rules = rules
	case backend.ErrorCode(err) == "NoSuchCORSConfiguration":
	case backend.ErrorCode(err) == "NoSuchBucket":
		e.err, e.until = apiErr("NoSuchBucket", ""), now.Add(corsNoBucketTTL)
	default:
		e.err, e.until = err, now.Add(corsNoBucketTTL)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil {
		c.m = map[string]corsEntry{}
	}
	if len(c.m) >= corsMaxBuckets {
		for b, old := range c.m {
			if !now.Before(old.until) {
				delete(c.m, b)
			}
		}
	}
	if len(c.m) < corsMaxBuckets {
		c.m[bucket] = e
	}
	return e
}

// fetchCORS reads a bucket's CORS configuration from the object store;
// a store without CORS has none.
func fetchCORS(ctx context.Context, f backend.Forwarder, bucket string) (*corsDoc, error) {
	if f == nil {
		return nil, nil
	}
	out, err := f.Forward(ctx, backend.RawRequest{Method: http.MethodGet, Bucket: bucket,
		Query: url.Values{"cors": {""}}, Header: http.Header{}})
	if err != nil {
		if backend.ErrorCode(err) == "NotImplemented" {
			return nil, nil
		}
		return nil, err
	}
	doc := &corsDoc{}
	if len(out.Body) > corsMaxDoc {
		return nil, apiErr("InternalError", "The object store answered ?cors with a document larger than S3 allows.")
	}
	if decodeXML(out.Body, doc) != nil {
		return nil, apiErr("InternalError", "The object store answered ?cors with something other than its document.")
	}
	return doc, nil
}
