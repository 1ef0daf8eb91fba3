package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/s3seal/s3seal/backend"
	"github.com/s3seal/s3seal/crypto"
	"github.com/s3seal/s3seal/kms"
	"github.com/s3seal/s3seal/sealstore"
)

// readiness answers /readyz: can s3seal serve? It asks the backend for its
// buckets (an authenticated request, so credentials, clock skew and
// reachability are all checked) and round-trips a data key through the
// primary master key. The answer is kept for ttl, so that probes cost the
// backend at most one request per ttl.
//
// /readyz is unauthenticated, so check answers with a reason that names
// only what failed (the keyring, the object store); the error itself,
// which may name endpoints, addresses or the store's message, goes to the
// log each time the state changes.
type readiness struct {
	be backend.Store // without retries: a probe must answer quickly
	kr *crypto.Keyring
	// kms, when set, is the key service of the master keys held outside
	// s3seal; kmsKeys are the keys a probe checks, one cheap call each:
	// one key of each service s3seal uses (kmsProbeKeys).
	kms     *kms.Service
	kmsKeys []string
	// kmsDefault is the default KMS key: like an external primary, any
	// refusal of it makes s3seal not ready. Of the other keys (a
	// tenant's) only an unreachable KMS does: one tenant's disabled key
	// is that tenant's crypto-shred, not every tenant's outage.
	kmsDefault string
	// kafka, when set, checks the LFS Kafka listener's brokers: a
	// replica whose Kafka clients would find no broker is not ready.
	kafka func(context.Context) error
	// audit, when set, is the audit trail's failure (audit.Writer.Err):
	// while it cannot be written every request is refused.
	audit func() error
	// store, when set, is asked whether the keyring opens the store's
	// objects (sealstore.Store.CheckKeyring) whenever a request failed to
	// open a data key since the last check (KeyFailures moved). Only then
	// can the verdict make s3seal not ready: the sample may be of another
	// deployment's buckets on the same store account, sealed under its
	// own key, which this one never serves. The check at start only logs.
	store      keyChecker
	keysAt     uint64 // KeyFailures when the keyring was last checked
	keysErr    error  // what that check found
	keysFailed bool   // a request failed to open a data key since start
	log        *slog.Logger
	ttl        time.Duration
	timeout    time.Duration

	// stopping is set on SIGTERM: /readyz answers 503 from then on, so
	// that load balancers stop sending before the listener closes.
	stopping atomic.Bool

	mu     sync.Mutex
	at     time.Time
	err    error  // public reason, nil when ready
	detail string // the last error logged
}

func newReadiness(be backend.Store, kr *crypto.Keyring, log *slog.Logger) *readiness {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &readiness{be: be, kr: kr, log: log, ttl: 5 * time.Second, timeout: 5 * time.Second}
}

// Public reasons /readyz gives.
var (
	errNotReadyKeyring = errors.New("keyring: cannot wrap a data key under the primary master key (see the log)")
	errNotReadyStore   = errors.New("object store: unreachable or refusing s3seal's requests (see the log)")
	errNotReadyKafka   = errors.New("kafka: no broker of the LFS Kafka listener answers (see the log)")
	errNotReadyKMS     = errors.New("kms: the KMS or HSM holding the master key cannot be reached or refuses the key (see the log)")
	errNotReadyCreds   = errors.New("object store: it refuses s3seal's backend credentials (--backend-access-key, --backend-secret-key-file; see the log)")
	errNotReadyVHost   = errors.New("object store: a bucket's virtual-hosted name (bucket.host) does not resolve: set --backend-path-style if the store serves buckets by path (see the log)")
	errShuttingDown    = errors.New("shutting down")
	errNotReadyAudit   = errors.New("audit trail: it cannot be written, and every request is refused until SIGHUP reopens it (see the log)")
)

// shutdown makes every later check answer "shutting down", at once and
// without a probe.
func (r *readiness) shutdown() { r.stopping.Store(true) }

// check returns nil when ready, else a reason fit to show anyone.
// Concurrent callers share one probe.
func (r *readiness) check(ctx context.Context) error {
	if r.stopping.Load() {
		return errShuttingDown
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.at.IsZero() && time.Since(r.at) < r.ttl {
		return r.err
	}
	// A probe cut short by its own client says nothing about s3seal.
	pctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), r.timeout)
	defer cancel()
	public, err := r.probe(pctx)
	r.at = time.Now()
	detail := ""
	if err != nil {
		detail = err.Error()
	}
	if detail != r.detail {
		if err != nil {
			r.log.Warn("not ready", "reason", public.Error(), "err", err)
		} else {
			r.log.Info("ready again")
		}
		r.detail = detail
	}
	r.err = public
	return r.err
}

// probe returns the public reason and the error behind it.
func (r *readiness) probe(ctx context.Context) (public, err error) {
	if r.audit != nil {
		if err := r.audit(); err != nil {
			return errNotReadyAudit, err
		}
	}
	primary := ""
	if r.kr != nil {
		primary, _ = r.kr.External(r.kr.Primary())
	}
	for _, key := range r.kmsKeys {
		// The keys every write may need are made and opened (what a write
		// needs: a key that may be described but not sealed with is not
		// enough); a tenant's only tells the KMS answers.
		required := key == primary || key == r.kmsDefault
		var err error
		if required {
			err = r.kms.Probe(ctx, key)
		} else {
			err = r.kms.Check(ctx, key)
		}
		if err != nil && (required || kms.KindOf(err) == kms.Unavailable) {
			return errNotReadyKMS, fmt.Errorf("kms: %w", err)
		}
	}
	if external := r.kr != nil && r.kms != nil && len(r.kmsKeys) > 0 && isExternal(r.kr); !external {
		if err := r.checkKeyring(); err != nil {
			return errNotReadyKeyring, fmt.Errorf("keyring: %w", err)
		}
	}
	buckets, err := r.be.ListBuckets(ctx)
	if code := backend.CredentialRefusal(err); code != "" {
		return errNotReadyCreds, fmt.Errorf("object store: it refuses s3seal's backend credentials (%s): %w", code, err)
	}
	if err != nil {
		return errNotReadyStore, fmt.Errorf("object store: %w", err)
	}
	if len(buckets) > 0 {
		// The endpoint answered; a bucket is addressed by another name
		// unless path-style.
		if err := r.be.HeadBucket(ctx, buckets[0].Name); backend.IsVirtualHostFailure(err) {
			return errNotReadyVHost, fmt.Errorf("object store: %w", err)
		}
	}
	if public, err := r.checkStoreKeys(ctx); err != nil {
		return public, err
	}
	if r.kafka != nil {
		if err := r.kafka(ctx); err != nil {
			return errNotReadyKafka, err
		}
	}
	return nil, nil
}

func (r *readiness) checkKeyring() error {
	if r.kr == nil || !r.kr.Has(r.kr.Primary()) {
		return fmt.Errorf("no primary master key")
	}
	dk, err := crypto.NewDataKey()
	if err != nil {
		return err
	}
	name := crypto.Name{Bucket: "readyz", Key: "probe"}
	env, err := r.kr.Wrap(context.TODO(), dk, "", name, crypto.Binding{})
	if err != nil {
		return err
	}
	_, _, err = r.kr.Unwrap(context.TODO(), env, name)
	return err
}

// isExternal reports whether the keyring's primary key is held outside
// s3seal (then a probe checks it through the KMS, not by a local wrap).
func isExternal(kr *crypto.Keyring) bool {
	_, ok := kr.External(kr.Primary())
	return ok
}

// keyChecker is what readiness asks of the object layer about the
// keyring (sealstore.Store).
type keyChecker interface {
	CheckKeyring(context.Context) error
	KeyFailures() uint64
}

// checkStoreKeys is the keyring check against the store's objects, run
// again only when a request failed to open a data key since the last; it
// makes s3seal not ready only after such a failure. Its public
// reason names the key ids, which the store holds in the clear, never
// the buckets sampled.
func (r *readiness) checkStoreKeys(ctx context.Context) (public, err error) {
	if r.store == nil {
		return nil, nil
	}
	if n := r.store.KeyFailures(); n != r.keysAt {
		r.keysErr = r.store.CheckKeyring(ctx)
		r.keysAt, r.keysFailed = r.store.KeyFailures(), true
	}
	var km *sealstore.KeyringMismatch
	if !r.keysFailed || !errors.As(r.keysErr, &km) {
		return nil, nil
	}
	shown := *km
	shown.Buckets = nil
	return errors.New("keyring: " + shown.Error() + " (see the log)"), fmt.Errorf("keyring: %w", r.keysErr)
}
