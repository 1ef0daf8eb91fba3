package sealstore

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/s3seal/s3seal/backend"
	"github.com/s3seal/s3seal/crypto"
)

// Checks of s3seal's own configuration against the store: are the
// credentials s3seal signs with the store's, and is the keyring the one
// the store's objects were sealed with? A wrong setting answers every
// request alike, so each is told apart from what it would otherwise look
// like (a bucket taken by someone else, objects that are corrupt) and
// named.

// CredentialRefusal is the store's code when err is its refusal of the
// credentials s3seal signs with (backend.CredentialRefusal), else "".
func CredentialRefusal(err error) string { return backend.CredentialRefusal(err) }

// IsVirtualHostFailure reports a bucket's virtual-hosted name that does
// not resolve (backend.VirtualHostError).
func IsVirtualHostFailure(err error) bool { return backend.IsVirtualHostFailure(err) }

// credentialTTL is how long a check of the credentials is trusted.
const credentialTTL = 5 * time.Second

type credentialCheck struct {
	mu  sync.Mutex
	at  time.Time
	err error
}

// CheckCredentials returns the store's refusal of s3seal's credentials
// (an error CredentialRefusal names), or nil when the store takes them or
// failed otherwise. It asks the store for its buckets, a signed request
// whose refusal names its code, at most once per credentialTTL. A 403
// without a code (a HEAD's) is either a resource s3seal's credentials may
// not reach or credentials the store does not know: this tells which.
func (s *Store) CheckCredentials(ctx context.Context) error {
	c := &s.creds
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.at.IsZero() && time.Since(c.at) < credentialTTL {
		return c.err
	}
	_, err := s.be.ListBuckets(ctx)
	if CredentialRefusal(err) == "" {
		err = nil
	}
	c.at, c.err = time.Now(), err
	return err
}

// KeyFailures counts the objects whose data key the keyring did not open
// because it lacks their master key or holds another under its id.
func (s *Store) KeyFailures() uint64 { return s.keyFailures.Load() }

// KeyringMismatch is CheckKeyring's finding: the store holds sealed
// objects, and the keyring opens none of those it sampled.
type KeyringMismatch struct {
	// Expected are the master key ids the sampled objects were sealed
	// under; Has are the keyring's. An id in both is a key of that id
	// other than the one the objects were sealed with.
	Expected, Has []string
	// Buckets are the buckets whose objects were sampled.
	Buckets []string
}

func (e *KeyringMismatch) Error() string {
	var same []string
	for _, id := range e.Expected {
		if slices.Contains(e.Has, id) {
			same = append(same, id)
		}
	}
	has := strings.Join(e.Has, ", ")
	if has == "" {
		// Its keys are held by a KMS, whose ids (ARNs and the like) are
		// not for /readyz's unauthenticated answer.
		has = "no local key, only keys a KMS holds"
	}
	msg := fmt.Sprintf("this keyring is not the one the store's objects were sealed with: they were sealed under master key(s) %s; the keyring has %s",
		strings.Join(e.Expected, ", "), has)
	if len(same) > 0 {
		msg += fmt.Sprintf(" (its key %s is another key under the same id, or the objects were copied at the store from another bucket: "+
			"s3seal binds each object to its bucket and key, so a replica or a copy made with the store's own tools does not open)", strings.Join(same, ", "))
	}
	if len(e.Buckets) > 0 {
		msg += "; sampled bucket(s): " + strings.Join(e.Buckets, ", ")
	}
	return msg
}

// Bounds of CheckKeyring's sample.
const (
	keyCheckBuckets = 16
	keyCheckDocs    = 4
)

// CheckKeyring samples the documents s3seal keeps in the store's buckets
// (up to keyCheckBuckets buckets, keyCheckDocs documents each: sealed
// objects every bucket s3seal made has) and opens their data keys. It
// returns a *KeyringMismatch when some were sealed under a master key and
// none opens: the keyring is wrong, not the objects corrupt (a store
// that corrupts every sealed object it holds at once is not the likely
// cause; one that does it on purpose denies service, which it always
// can). nil when one opens, when there is nothing sealed to sample, or
// when the store fails (reachability is /readyz's other check).
// Documents that some keys open and others do not are logged: a key
// retired too early, or an object altered.
func (s *Store) CheckKeyring(ctx context.Context) error {
	bs, err := s.be.ListBuckets(ctx)
	if err != nil {
		return nil
	}
	bs = bs[:min(len(bs), keyCheckBuckets)]
	var mu sync.Mutex
	opened, failed := map[string]int{}, map[string]int{}
	var sampled []string
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(4)
	for _, b := range bs {
		g.Go(func() error {
			o, f := s.sampleKeys(gctx, b.Name)
			mu.Lock()
			defer mu.Unlock()
			for id, n := range o {
				opened[id] += n
			}
			for id, n := range f {
				failed[id] += n
			}
			if len(o)+len(f) > 0 {
				sampled = append(sampled, b.Name)
			}
			return nil
		})
	}
	g.Wait()
	if len(failed) == 0 {
		return nil
	}
	slices.Sort(sampled)
	if len(opened) > 0 {
		s.log.Warn("some of s3seal's own objects in the store do not open with the keyring, others do",
			"opened_by_key", opened, "failed_by_key", failed, "buckets", sampled)
		return nil
	}
	expected := make([]string, 0, len(failed))
	for id := range failed {
		expected = append(expected, id)
	}
	slices.Sort(expected)
	return &KeyringMismatch{Expected: expected, Has: s.kr.IDs(), Buckets: sampled}
}

// sampleKeys opens up to keyCheckDocs of bucket's documents and counts,
// by master key id, those whose data key opened and those the keyring
// lacks or holds another key for. Other failures count for neither.
func (s *Store) sampleKeys(ctx context.Context, bucket string) (opened, failed map[string]int) {
	opened, failed = map[string]int{}, map[string]int{}
	out, err := s.be.ListObjects(ctx, backend.ListInput{Bucket: bucket, V2: true, Prefix: BucketDocPrefix, Delimiter: "/", MaxKeys: keyCheckDocs})
	if err != nil {
		return
	}
	for _, e := range out.Entries {
		info, rd, err := s.Read(ctx, ReadInput{Bucket: bucket, Key: e.Key, own: true})
		switch {
		case err == nil:
			rd.Close()
			// A document a KMS key opened counts as one a local key
			// opened: either says the keyring is the store's.
			if info.Encrypted {
				opened[info.env.KeyID]++
			}
		case errors.Is(err, crypto.ErrUnknownKey), errors.Is(err, crypto.ErrKeyMismatch):
			failed[crypto.KeyIDOf(err)]++
		}
	}
	return
}
