package s3api

import (
	"context"
	"encoding/xml"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"golang.org/x/sync/singleflight"

	"github.com/s3seal/s3seal/s3api/cors"
	"github.com/s3seal/s3seal/s3api/s3err"
	"github.com/s3seal/s3seal/sealstore"
)

// CORS: s3seal checks a bucket's CORS configuration as S3 does before
// forwarding it (moto and others word their refusals otherwise), and
// evaluates the rules itself (package cors), in front of any backend: a
// preflight OPTIONS request is answered from them (corsCache, below,
// fetches and keeps them), and an actual request with an Origin header gets the
// Access-Control-* headers of the rule that allows it.

// checkCORS judges a CORSConfiguration as S3 does (package cors).
func checkCORS(body []byte) error {
	doc := &corsDoc{}
	if err := decodeXML(body, doc); err != nil {
		return err
	}
	return cors.Check(doc.Rules)
}

// forbiddenBody is S3's AccessForbidden error, which names the method and
// the kind of resource refused.
type forbiddenBody struct {
	XMLName      xml.Name   `xml:"Error"`
	Code         s3err.Code `xml:"Code"`
	Message      string     `xml:"Message"`
	Method       string     `xml:"Method"`
	ResourceType string     `xml:"ResourceType"`
	RequestID    string     `xml:"RequestId"`
}

const (
	corsNotEnabled = "CORSResponse: CORS is not enabled for this bucket."
	corsForbidden  = "CORSResponse: This CORS request is not allowed. This is usually because the evalution of Origin, " +
		"request method / Access-Control-Request-Method or Access-Control-Request-Headers are not whitelisted by the resource's CORS spec."
)

// preflight answers an OPTIONS request from the bucket's CORS rules. It
// needs no signature: browsers send it without credentials.
func (s *Server) preflight(w http.ResponseWriter, r *http.Request) {
	if ri := infoFrom(r.Context()); ri != nil {
		ri.op = "PreflightOPTIONS"
	}
	bucket, key := s.target(r)
	origin := r.Header.Get("Origin")
	if origin == "" {
		writeError(w, r, s3err.New(s3err.BadRequest, "Insufficient information. Origin request header needed."))
		return
	}
	method := r.Header.Get("Access-Control-Request-Method")
	if !slices.Contains(cors.Methods, method) {
		writeError(w, r, s3err.New(s3err.BadRequest, "Invalid Access-Control-Request-Method: "+method))
		return
	}
	headers, err := cors.RequestHeaders(r.Header.Get("Access-Control-Request-Headers"))
	if err != nil {
		writeError(w, r, err)
		return
	}
	var rules *corsDoc
	if s.corsBucket(bucket) {
		if rules, err = s.cors.rules(r.Context(), s.store, bucket, s.cfg.MaxInFlight); err != nil {
			writeError(w, r, err)
			return
		}
	}
	forbid := func(msg, resource string) {
		e := s3err.New(s3err.AccessForbidden, msg)
		writeXML(w, e.StatusCode, forbiddenBody{Code: e.Code, Message: e.Message, Method: http.MethodOptions,
			ResourceType: resource, RequestID: w.Header().Get("x-amz-request-id")})
	}
	if rules == nil {
		forbid(corsNotEnabled, "BUCKET") // S3 names the bucket here whatever was asked
		return
	}
	m, ok := cors.Match(rules.Rules, origin, method, headers)
	if !ok {
		resource := "BUCKET"
		if key != "" {
			resource = "OBJECT"
		}
		forbid(corsForbidden, resource)
		return
	}
	m.Set(w.Header(), strings.Join(headers, ", "))
	w.WriteHeader(http.StatusOK)
}

// actualCORS adds the Access-Control-* headers to a request with an
// Origin header that the bucket's rules allow; the method matched is
// Access-Control-Request-Method when given, else the request's. Anything
// else (no rules, no match, the rules unreadable) adds nothing: the
// request itself is served as ever.
func (s *Server) actualCORS(w http.ResponseWriter, r *http.Request) {
	origin := r.Header.Get("Origin")
	if origin == "" || r.Method == http.MethodOptions {
		return
	}
	if !s.cfg.AllowAnonymous && r.Header.Get("Authorization") == "" && !r.URL.Query().Has("X-Amz-Signature") {
		return // no anonymous request is served: its refusal needs no CORS
	}
	bucket, _ := s.target(r)
	if !s.corsBucket(bucket) {
		return
	}
	rules, err := s.cors.rules(r.Context(), s.store, bucket, s.cfg.MaxInFlight)
	if err != nil || rules == nil {
		return
	}
	method := r.Header.Get("Access-Control-Request-Method")
	if method == "" {
		method = r.Method
	}
	headers, err := cors.RequestHeaders(r.Header.Get("Access-Control-Request-Headers"))
	if err != nil {
		return
	}
	if m, ok := cors.Match(rules.Rules, origin, method, headers); ok {
		m.Set(w.Header(), strings.Join(headers, ", "))
	}
}

// corsBucket reports whether a bucket's CORS rules may be looked up for
// a request not yet authenticated: a valid bucket name that some
// credential may read or write. Any other name (a typo, /healthz, another
// tenant's bucket in the same store) is answered as a bucket without
// CORS, so an unsigned request learns nothing of it and costs the store
// nothing.
func (s *Server) corsBucket(bucket string) bool {
	if bucket == "" || checkBucketName(bucket) != nil {
		return false
	}
	for _, c := range s.cfg.Credentials {
		if c.canRead(bucket) {
			return true
		}
	}
	return false
}

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
func (c *corsCache) rules(ctx context.Context, st ObjectStore, bucket string, maxFetches int) (*corsDoc, error) {
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
		return c.fetch(ctx, st, bucket, maxFetches), nil
	})
	e = v.(corsEntry)
	return e.rules, e.err
}

// fetch reads a bucket's rules from the store and keeps the answer.
func (c *corsCache) fetch(ctx context.Context, st ObjectStore, bucket string, maxFetches int) corsEntry {
	c.once.Do(func() { c.fetches = make(chan struct{}, max(1, min(corsMaxFetches, maxFetches))) })
	select {
	case c.fetches <- struct{}{}:
		defer func() { <-c.fetches }()
	default:
		return corsEntry{err: s3err.New(s3err.SlowDown, "")} // not kept
	}
	rules, err := fetchCORS(ctx, st, bucket)
	// The entry lives from the answer on: a store slower than the TTL
	// would otherwise be asked again by every request.
	now := time.Now()
	e := corsEntry{until: now.Add(corsTTL)}
	switch {
	case err == nil:
		e.rules = rules
	case sealstore.StoreCode(err) == "NoSuchCORSConfiguration":
	case sealstore.StoreCode(err) == "NoSuchBucket":
		e.err, e.until = s3err.New(s3err.NoSuchBucket, ""), now.Add(corsNoBucketTTL)
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
func fetchCORS(ctx context.Context, st ObjectStore, bucket string) (*corsDoc, error) {
	if !st.HasSettings() {
		return nil, nil
	}
	out, err := st.Setting(ctx, sealstore.BucketCORS, sealstore.SettingRef{Bucket: bucket})
	if err != nil {
		if sealstore.StoreCode(err) == "NotImplemented" {
			return nil, nil
		}
		return nil, err
	}
	doc := &corsDoc{}
	if len(out.Body) > corsMaxDoc {
		return nil, s3err.New(s3err.InternalError, "The object store answered ?cors with a document larger than S3 allows.")
	}
	if decodeXML(out.Body, doc) != nil {
		return nil, s3err.New(s3err.InternalError, "The object store answered ?cors with something other than its document.")
	}
	return doc, nil
}
