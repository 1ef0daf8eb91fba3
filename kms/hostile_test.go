package kms_test

import (
	"context"
	"crypto/rand"
	"errors"
	"sync/atomic"
	"testing"

	"github.com/s3seal/s3seal/crypto"
	"github.com/s3seal/s3seal/kms"
)

// lyingProvider is fakeProvider with a KMS that answers wrongly on
// demand: GenerateKey's plaintext that is not what its sealed form holds,
// or Decrypt's plaintext of another key, the next badDecrypts times.
type lyingProvider struct {
	*fakeProvider
	lieOnGenerate atomic.Bool
	badDecrypts   atomic.Int32
}

func (l *lyingProvider) GenerateKey(ctx context.Context, name string, kctx map[string]string) ([]byte, []byte, string, error) {
	plain, sealed, canonical, err := l.fakeProvider.GenerateKey(ctx, name, kctx)
	if err == nil && l.lieOnGenerate.Load() {
		plain = make([]byte, 32)
		rand.Read(plain) // not the key sealed holds
	}
	return plain, sealed, canonical, err
}

func (l *lyingProvider) Decrypt(ctx context.Context, name string, sealed []byte, kctx map[string]string) ([]byte, error) {
	k, err := l.fakeProvider.Decrypt(ctx, name, sealed, kctx)
	if err == nil && l.badDecrypts.Add(-1) >= 0 {
		k = make([]byte, 32)
		rand.Read(k)
	}
	return k, err
}

func lyingKeyring(t *testing.T, opt kms.Options) (*lyingProvider, *kms.Service, *crypto.Keyring) {
	t.Helper()
	l := &lyingProvider{fakeProvider: newFake()}
	svc, err := kms.NewService(opt, l)
	if err != nil {
		t.Fatal(err)
	}
	kr, err := (*crypto.Keyring)(nil).WithService(svc, "fake:k", nil)
	if err != nil {
		t.Fatal(err)
	}
	return l, svc, kr
}

// TestGeneratedKeyThatDoesNotOpenIsRefused: a KMS whose GenerateDataKey
// answers a plaintext that its CiphertextBlob does not hold must not let
// a write succeed: the object would read back while the key is in the
// cache (seeded by the generate) and never again after. Today the wrap
// succeeds and only a cold reader finds out.
func TestGeneratedKeyThatDoesNotOpenIsRefused(t *testing.T) {
	l, _, kr := lyingKeyring(t, kms.Options{})
	l.lieOnGenerate.Store(true)
	ctx := context.Background()
	name := crypto.Name{Bucket: "b", Key: "k"}
	dk, err := crypto.NewDataKey()
	if err != nil {
		t.Fatal(err)
	}
	env, err := kr.Wrap(ctx, dk, "", name, crypto.Binding{Multipart: true})
	if err != nil {
		return // refused: what should happen
	}
	_, _, warm := kr.Unwrap(ctx, env, name)
	// A reader with a cold cache (a restart, another replica, 5 minutes on).
	cold, _ := kms.NewService(kms.Options{}, l)
	ckr, _ := (*crypto.Keyring)(nil).WithService(cold, "fake:k", nil)
	_, _, coldErr := ckr.Unwrap(ctx, env, name)
	t.Fatalf("a data key wrapped under a key the KMS's sealed form does not hold was accepted: "+
		"warm read error %v, cold read error %v (the object is lost once the cache forgets it)", warm, coldErr)
}

// TestKeyThatFailsTheWrapIsNotCached: one wrong Decrypt answer (a KMS
// glitch, the wrong key's plaintext) must not keep the object unreadable
// for the cache's lifetime once the KMS answers right again. Today the
// wrong key is cached and every read fails for --kms-cache-ttl.
func TestKeyThatFailsTheWrapIsNotCached(t *testing.T) {
	l, _, kr := lyingKeyring(t, kms.Options{})
	ctx := context.Background()
	name := crypto.Name{Bucket: "b", Key: "k"}
	dk, _ := crypto.NewDataKey()
	env, err := kr.Wrap(ctx, dk, "", name, crypto.Binding{Multipart: true})
	if err != nil {
		t.Fatal(err)
	}
	// A cold reader meets one wrong answer, then a healthy KMS.
	cold, _ := kms.NewService(kms.Options{}, l)
	ckr, _ := (*crypto.Keyring)(nil).WithService(cold, "fake:k", nil)
	l.badDecrypts.Store(1)
	if _, _, err := ckr.Unwrap(ctx, env, name); !errors.Is(err, crypto.ErrAuth) {
		t.Fatalf("the wrong key: %v, want an authentication failure", err)
	}
	if _, _, err := ckr.Unwrap(ctx, env, name); err != nil {
		t.Fatalf("the KMS answers right again, but the read still fails: %v (decrypt calls: %d)", err, l.n("decrypt"))
	}
}

// TestNoCacheMeansABucketKeyIsNotReused: DESIGN says --kms-cache-ttl -1s
// makes a disabled key take effect at once; a bucket key still seals new
// objects for --kms-bucket-key-ttl after the KMS refuses the key (and
// those objects cannot be read until it is enabled again).
func TestNoCacheMeansABucketKeyIsNotReused(t *testing.T) {
	l, _, kr := lyingKeyring(t, kms.Options{CacheTTL: -1})
	ctx := context.Background()
	name := crypto.Name{Bucket: "b", Key: "k"}
	if _, err := kr.NewWrapKey(ctx, "", name, "", true); err != nil {
		t.Fatal(err)
	}
	l.mu.Lock()
	l.fail = kms.Disabled
	l.mu.Unlock()
	if _, err := kr.NewWrapKey(ctx, "", crypto.Name{Bucket: "b", Key: "k2"}, "", true); err == nil {
		t.Fatal("the key is disabled and the cache is off, yet a bucket key sealed a new object")
	}
}
