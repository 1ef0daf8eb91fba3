package kms

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/golang-lru/v2/expirable"
	"golang.org/x/sync/singleflight"

	"github.com/s3seal/s3seal/crypto"
)

// Options bound what a Service does. The zero value means the defaults.
type Options struct {
	// CacheTTL is how long an opened intermediate key is kept, so that
	// reads of a recently used object make no call. Default 5 minutes;
	// negative: no cache. A disabled or deleted master key stops reading
	// once its keys have left the cache.
	CacheTTL time.Duration
	// CacheSize bounds the opened keys kept (32 bytes each). Default
	// 10000.
	CacheSize int
	// BucketKeyTTL is how long one bucket key seals new objects of a
	// bucket, master key and context before a new one is made. Default 5
	// minutes.
	BucketKeyTTL time.Duration
	// Timeout bounds one call to the service. Default 5 s.
	Timeout time.Duration
	// Attempts bounds the tries of a call the service did not answer.
	// Default 3.
	Attempts int
	// Backoff is the ceiling of the first wait between tries (doubling,
	// full jitter). Default 200 ms.
	Backoff time.Duration
	// TrustGenerate skips opening every key the service makes before it
	// is used: one call per object written instead of two. Without it a
	// service that answers GenerateDataKey with a key its sealed form
	// does not hold (a bug, a proxy, another key's answer) is caught
	// before a write is acknowledged, instead of when the object is read
	// from a cold cache and found lost. Bucket keys are always checked
	// (once per bucket key).
	TrustGenerate bool
	// Observer is told of every call (metrics). Default none.
	Observer Observer
	// Logger receives retries. Default slog.Default().
	Logger *slog.Logger
}

func (o Options) withDefaults() Options {
	if o.CacheTTL == 0 {
		o.CacheTTL = 5 * time.Minute
	}
	if o.CacheSize <= 0 {
		o.CacheSize = 10000
	}
	if o.BucketKeyTTL <= 0 {
		o.BucketKeyTTL = 5 * time.Minute
	}
	if o.CacheTTL > 0 && o.BucketKeyTTL > o.CacheTTL {
		// A disabled key stops sealing no later than it stops reading.
		o.BucketKeyTTL = o.CacheTTL
	}
	if o.Timeout <= 0 {
		o.Timeout = 5 * time.Second
	}
	if o.Attempts <= 0 {
		o.Attempts = 3
	}
	if o.Backoff <= 0 {
		o.Backoff = 200 * time.Millisecond
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	return o
}

// Service is s3seal's crypto.KeyService over one or more providers.
type Service struct {
	opt       Options
	providers map[string]Provider // by scheme
	// def is the scheme of the provider that client key names without a
	// scheme belong to.
	def string

	opened     *expirable.LRU[string, []byte]
	bucketKeys *expirable.LRU[string, bucketKey]
	flight     singleflight.Group

	// down holds, per scheme, until when a service that did not answer a
	// whole call (every try) is not asked again: while a KMS is down,
	// each request that needs it fails at once with 503 instead of
	// waiting out its own tries (a listing of many buckets, each
	// sealed document).
	downMu sync.Mutex
	down   map[string]time.Time

	// calls, when set, is told of every call (AuditCalls).
	calls func(ctx context.Context, op, keyID, outcome string)
}

// AuditCalls has the service tell f of every call it makes to a key
// service, once the call is over (its tries included): the operation
// ("generate", "decrypt", "rewrap", "check"), the master key's external
// id and the outcome ("ok" or the failure's kind), with the context of
// the request that made it (the first one, when several wait on one
// call). Call it before the service is used; f must be safe for
// concurrent use, and quick.
func (s *Service) AuditCalls(f func(ctx context.Context, op, keyID, outcome string)) {
	s.calls = f
}

type bucketKey struct {
	plain, sealed []byte
	keyID         string
}

var _ crypto.KeyService = (*Service)(nil)

// NewService returns a Service over providers; the first one's scheme is
// the default for key names without one.
func NewService(opt Options, providers ...Provider) (*Service, error) {
	if len(providers) == 0 {
		return nil, fmt.Errorf("kms: no provider")
	}
	opt = opt.withDefaults()
	s := &Service{opt: opt, providers: map[string]Provider{}, def: providers[0].Scheme(), down: map[string]time.Time{}}
	for _, p := range providers {
		if _, dup := s.providers[p.Scheme()]; dup {
			return nil, fmt.Errorf("kms: two %s providers: give one master key URI per kind of service", p.Scheme())
		}
		s.providers[p.Scheme()] = p
	}
	// Cached keys are not cleared when they leave the cache: a caller
	// that got one a moment before may still be copying it, and a key
	// zeroed under it would wrap a DEK that nothing can open again.
	if opt.CacheTTL > 0 {
		s.opened = expirable.NewLRU[string, []byte](opt.CacheSize, nil, opt.CacheTTL)
	}
	s.bucketKeys = expirable.NewLRU[string, bucketKey](1024, nil, opt.BucketKeyTTL)
	return s, nil
}

// Handles implements crypto.KeyService: the id's scheme is one of a
// configured provider.
func (s *Service) Handles(keyID string) bool {
	scheme, _, ok := strings.Cut(keyID, ":")
	_, known := s.providers[scheme]
	return ok && known
}

// Resolve returns the external id of a key a client or an operator names:
// an external id of a configured provider as it is, an AWS ARN
// ("arn:aws:kms:...") for the aws-kms provider, and any other name for
// the default provider. ok is false for a name no provider takes.
func (s *Service) Resolve(name string) (string, bool) {
	if name == "" {
		return "", false
	}
	if scheme, _, ok := strings.Cut(name, ":"); ok {
		if _, known := s.providers[scheme]; known {
			return name, crypto.IsExternalKeyID(name)
		}
		if scheme == "arn" {
			if _, known := s.providers["aws-kms"]; known {
				id := "aws-kms:" + name
				return id, crypto.IsExternalKeyID(id)
			}
		}
	}
	id := s.def + ":" + name
	return id, crypto.IsExternalKeyID(id)
}

// DisplayName is how S3 answers name a master key: its name at the
// provider (for AWS KMS, the key's ARN), without s3seal's scheme.
func DisplayName(externalID string) string {
	_, name, ok := strings.Cut(externalID, ":")
	if !ok {
		return externalID
	}
	return name
}

// target is the provider of req's key, the key's name there and the
// context S3 binds to req.
func (s *Service) target(req crypto.KeyRequest) (Provider, string, map[string]string, error) {
	p, name, err := s.provider(req.KeyID)
	if err != nil {
		return nil, "", nil, err
	}
	kctx, err := Context(req)
	return p, name, kctx, err
}

func (s *Service) provider(keyID string) (Provider, string, error) {
	scheme, name, _ := strings.Cut(keyID, ":")
	p, ok := s.providers[scheme]
	if !ok {
		return nil, "", &Error{Kind: NotFound, Key: keyID, Op: "resolve",
			Err: fmt.Errorf("no %s service is configured (give its master key URI)", scheme)}
	}
	return p, name, nil
}

// Context returns the encryption context s3seal gives the service for
// req: the client's pairs and, as S3 does, "aws:s3:arn" naming the object
// (the bucket, for a bucket key). A client pair of that name is
// overwritten; s3api refuses one that differs.
func Context(req crypto.KeyRequest) (map[string]string, error) {
	m, err := crypto.KMSContextMap(req.Context)
	if err != nil {
		return nil, err
	}
	m[ARNContextKey] = ContextARN(req.Name.Bucket, req.Name.Key, req.BucketKey)
	return m, nil
}

// ARNContextKey is the encryption context pair S3 always adds.
const ARNContextKey = "aws:s3:arn"

// ContextARN is the value of the "aws:s3:arn" pair: the object's ARN, or
// the bucket's for a bucket key.
func ContextARN(bucket, key string, bucketKey bool) string {
	if bucketKey {
		return "arn:aws:s3:::" + bucket
	}
	return "arn:aws:s3:::" + bucket + "/" + key
}

// NewKey implements crypto.KeyService.
func (s *Service) NewKey(ctx context.Context, req crypto.KeyRequest) ([]byte, []byte, string, error) {
	if !req.BucketKey || s.opened == nil {
		// Without the cache, revocation takes effect at once: no bucket
		// key outlives a call.
		return s.generate(ctx, req, !s.opt.TrustGenerate)
	}
	id := cacheID(req.KeyID, "", []byte(req.Name.Bucket), []byte(req.Context))
	if bk, ok := s.bucketKeys.Get(id); ok {
		return clone(bk.plain), bk.sealed, bk.keyID, nil
	}
	v, err, _ := s.flight.Do(id, func() (any, error) {
		if bk, ok := s.bucketKeys.Get(id); ok {
			return bk, nil
		}
		plain, sealed, keyID, err := s.generate(ctx, req, true)
		if err != nil {
			return nil, err
		}
		bk := bucketKey{plain: plain, sealed: sealed, keyID: keyID}
		s.bucketKeys.Add(id, bk)
		return bk, nil
	})
	if err != nil {
		return nil, nil, "", err
	}
	bk := v.(bucketKey)
	return clone(bk.plain), bk.sealed, bk.keyID, nil
}

func (s *Service) generate(ctx context.Context, req crypto.KeyRequest, check bool) ([]byte, []byte, string, error) {
	p, name, kctx, err := s.target(req)
	if err != nil {
		return nil, nil, "", err
	}
	var plain, sealed []byte
	var canonical string
	err = s.call(ctx, "generate", req.KeyID, func(ctx context.Context) error {
		var err error
		plain, sealed, canonical, err = p.GenerateKey(ctx, name, kctx)
		return err
	})
	if err != nil {
		return nil, nil, "", err
	}
	keyID := p.Scheme() + ":" + canonical
	if len(plain) != crypto.KeySize {
		clear(plain)
		return nil, nil, "", &Error{Kind: Failed, Key: req.KeyID, Op: "generate", Err: fmt.Errorf("the KMS made a %d-byte key", len(plain))}
	}
	if check {
		var opened []byte
		err := s.call(ctx, "decrypt", keyID, func(ctx context.Context) error {
			var err error
			opened, err = p.Decrypt(ctx, canonical, sealed, kctx)
			return err
		})
		same := err == nil && subtle.ConstantTimeCompare(opened, plain) == 1
		clear(opened)
		if !same {
			clear(plain)
			if err == nil {
				err = errors.New("the sealed key it answered opens to another key")
			}
			return nil, nil, "", &Error{Kind: Invalid, Key: keyID, Op: "generate",
				Err: fmt.Errorf("the key the KMS made does not open: %w", err)}
		}
	}
	if s.opened != nil {
		s.opened.Add(cacheID(keyID, ctxString(kctx), sealed), clone(plain))
	}
	return plain, sealed, keyID, nil
}

// OpenKey implements crypto.KeyService: from the cache when the key was
// opened (or made) within CacheTTL, else one call to the service.
func (s *Service) OpenKey(ctx context.Context, req crypto.KeyRequest, sealed []byte) ([]byte, error) {
	p, name, kctx, err := s.target(req)
	if err != nil {
		return nil, err
	}
	id := cacheID(req.KeyID, ctxString(kctx), sealed)
	if s.opened != nil {
		if k, ok := s.opened.Get(id); ok {
			return clone(k), nil
		}
	}
	v, err, _ := s.flight.Do("open:"+id, func() (any, error) {
		var plain []byte
		err := s.call(ctx, "decrypt", req.KeyID, func(ctx context.Context) error {
			var err error
			plain, err = p.Decrypt(ctx, name, sealed, kctx)
			return err
		})
		if err != nil {
			return nil, err
		}
		if len(plain) != crypto.KeySize {
			clear(plain)
			return nil, &Error{Kind: Invalid, Key: req.KeyID, Op: "decrypt", Err: fmt.Errorf("the KMS opened a %d-byte key", len(plain))}
		}
		if s.opened != nil {
			s.opened.Add(id, clone(plain))
		}
		return plain, nil
	})
	if err != nil {
		return nil, err
	}
	return clone(v.([]byte)), nil
}

// Forget drops an opened key from the cache: the wrap it was opened for
// did not authenticate with it (a KMS that answered wrongly once must not
// keep the object unreadable for the cache's lifetime).
func (s *Service) Forget(req crypto.KeyRequest, sealed []byte) {
	if s.opened == nil {
		return
	}
	kctx, err := Context(req)
	if err != nil {
		return
	}
	s.opened.Remove(cacheID(req.KeyID, ctxString(kctx), sealed))
}

// Rewrap seals an envelope's intermediate key anew under its master key's
// current version, inside the service, and returns the new sealed form.
func (s *Service) Rewrap(ctx context.Context, req crypto.KeyRequest, sealed []byte) ([]byte, error) {
	p, name, kctx, err := s.target(req)
	if err != nil {
		return nil, err
	}
	var out []byte
	err = s.call(ctx, "rewrap", req.KeyID, func(ctx context.Context) error {
		var err error
		out, err = p.Rewrap(ctx, name, sealed, kctx)
		return err
	})
	return out, err
}

// Version names the master key version a sealed key was made under, ""
// when the service does not tell.
func (s *Service) Version(keyID string, sealed []byte) string {
	p, name, err := s.provider(keyID)
	if err != nil {
		return ""
	}
	return p.Version(name, sealed)
}

// Probe makes a key under keyID and opens it again (two calls, no
// cache): what every write needs of the key, so a readiness probe tells
// a key that s3seal may describe but not seal with.
func (s *Service) Probe(ctx context.Context, keyID string) error {
	k, _, _, err := s.generate(ctx, crypto.KeyRequest{KeyID: keyID, Name: crypto.Name{Bucket: "s3seal-readyz", Key: "probe"}}, true)
	clear(k)
	return err
}

// Check tells whether the service of keyID answers and the key can be
// used (one call).
func (s *Service) Check(ctx context.Context, keyID string) error {
	p, name, err := s.provider(keyID)
	if err != nil {
		return err
	}
	return s.call(ctx, "check", keyID, func(ctx context.Context) error { return p.Check(ctx, name) })
}

// call runs f with a timeout per try, retrying what the service did not
// answer, and reports each try.
func (s *Service) call(ctx context.Context, op, keyID string, f func(context.Context) error) (err error) {
	if s.calls != nil {
		defer func() {
			outcome := "ok"
			var ke *Error
			if errors.As(err, &ke) {
				outcome = strings.ReplaceAll(ke.Kind.String(), " ", "_")
			} else if err != nil {
				outcome = "error"
			}
			s.calls(ctx, op, keyID, outcome)
		}()
	}
	scheme, _, _ := strings.Cut(keyID, ":")
	s.downMu.Lock()
	until := s.down[scheme]
	s.downMu.Unlock()
	if time.Now().Before(until) {
		s.observe(op, Unavailable, 0)
		return &Error{Kind: Unavailable, Key: keyID, Op: op,
			Err: fmt.Errorf("the KMS did not answer its last call; not asked again before %s", until.UTC().Format(time.TimeOnly))}
	}
	ceiling := s.opt.Backoff
	for attempt := 1; ; attempt++ {
		actx, cancel := context.WithTimeout(ctx, s.opt.Timeout)
		start := time.Now()
		err = f(actx)
		cancel()
		kind := Kind(0)
		if err != nil {
			kind = kindOfProviderError(err)
			if ctx.Err() != nil {
				kind = Unavailable
			}
		}
		s.observe(op, kind, time.Since(start))
		if err == nil {
			return nil
		}
		if kind == Unavailable && attempt >= s.opt.Attempts && ctx.Err() == nil {
			s.downMu.Lock()
			s.down[scheme] = time.Now().Add(s.opt.Timeout)
			s.downMu.Unlock()
		}
		if kind != Unavailable || attempt >= s.opt.Attempts || ctx.Err() != nil {
			return &Error{Kind: kind, Key: keyID, Op: op, Err: err}
		}
		wait := rand.N(ceiling + 1)
		s.opt.Logger.Warn("KMS call failed, retrying", "op", op, "key", keyID, "attempt", attempt, "wait", wait, "error", err)
		select {
		case <-ctx.Done():
			return &Error{Kind: Unavailable, Key: keyID, Op: op, Err: err}
		case <-time.After(wait):
		}
		ceiling *= 2
	}
}

func (s *Service) observe(op string, k Kind, d time.Duration) {
	if s.opt.Observer == nil {
		return
	}
	outcome := "ok"
	if k != 0 {
		outcome = strings.ReplaceAll(k.String(), " ", "_")
	}
	s.opt.Observer.KMSRequest(op, outcome, d)
}

// cacheID names an opened key by everything it was opened for: the
// master key, the context the service bound and the sealed bytes.
func cacheID(keyID, kctx string, sealed ...[]byte) string {
	h := sha256.New()
	for _, p := range append([][]byte{[]byte(keyID), []byte(kctx)}, sealed...) {
		var n [8]byte
		binary.BigEndian.PutUint64(n[:], uint64(len(p)))
		h.Write(n[:])
		h.Write(p)
	}
	return string(h.Sum(nil))
}

// ctxString is a context as canonical JSON (the cache's part of its key).
func ctxString(m map[string]string) string {
	var b strings.Builder
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		fmt.Fprintf(&b, "%d:%s%d:%s", len(k), k, len(m[k]), m[k])
	}
	return b.String()
}

func clone(b []byte) []byte { return append([]byte(nil), b...) }
