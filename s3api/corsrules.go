package s3api

import (
	"context"
	"net/http"
	"net/url"
	"sync"
	"time"

	"github.com/s3seal/s3seal/backend"
)

// corsTTL is how long a bucket's CORS rules, or their absence, are kept
// before they are read from the object store again; s3seal's own
// PutBucketCors and DeleteBucketCors drop them at once. A missing bucket
// is kept a second only, so that a bucket just created is seen.
const (
	corsTTL         = 5 * time.Second
	corsNoBucketTTL = time.Second
	corsMaxBuckets  = 10000
)

// corsCache holds the CORS rules of the buckets recently asked about.
type corsCache struct {
	mu sync.Mutex
	m  map[string]corsEntry
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
func (c *corsCache) rules(ctx context.Context, f backend.Forwarder, bucket string) (*corsDoc, error) {
	now := time.Now()
	c.mu.Lock()
	e, ok := c.m[bucket]
	c.mu.Unlock()
	if ok && now.Before(e.until) {
		return e.rules, e.err
	}
	e = corsEntry{until: now.Add(corsTTL)}
	switch rules, err := fetchCORS(ctx, f, bucket); {
	case err == nil:
		e.rules = rules
	case backend.ErrorCode(err) == "NoSuchCORSConfiguration":
	case backend.ErrorCode(err) == "NoSuchBucket":
		e.err, e.until = apiErr("NoSuchBucket", ""), now.Add(corsNoBucketTTL)
	default:
		return nil, err // not kept: the next request asks again
	}
	c.mu.Lock()
	if c.m == nil || len(c.m) >= corsMaxBuckets {
		c.m = map[string]corsEntry{}
	}
	c.m[bucket] = e
	c.mu.Unlock()
	return e.rules, e.err
}

// fetchCORS reads a bucket's CORS configuration from the object store;
// a store without CORS has none.
func fetchCORS(ctx context.Context, f backend.Forwarder, bucket string) (*corsDoc, error) {
	if f == nil {
		return nil, nil
	}
	if l, ok := f.(backend.SubresourceLimits); ok && l.SubresourceLimit("cors") != "" {
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
	if decodeXML(out.Body, doc) != nil {
		return nil, apiErr("InternalError", "The object store answered ?cors with something other than its document.")
	}
	return doc, nil
}
