package kms_test

import (
	"context"
	"crypto/rand"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/s3seal/s3seal/crypto"
	"github.com/s3seal/s3seal/kms"
)

// fakeProvider keeps sealed keys in memory by an opaque handle and counts
// calls; fail makes every call fail with that kind.
type fakeProvider struct {
	mu       sync.Mutex
	calls    map[string]int
	keys     map[string][]byte // handle -> key
	ctxs     map[string]map[string]string
	fail     kms.Kind
	lastKCtx map[string]string
}

func newFake() *fakeProvider {
	return &fakeProvider{calls: map[string]int{}, keys: map[string][]byte{}, ctxs: map[string]map[string]string{}}
}

func (f *fakeProvider) Scheme() string { return "fake" }

func (f *fakeProvider) count(op string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls[op]++
	if f.fail != 0 {
		return kms.Errorf(f.fail, "fake %s", f.fail)
	}
	return nil
}

func (f *fakeProvider) n(op string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.calls[op]
}

func (f *fakeProvider) GenerateKey(_ context.Context, name string, kctx map[string]string) ([]byte, []byte, string, error) {
	if err := f.count("generate"); err != nil {
		return nil, nil, "", err
	}
	k := make([]byte, 32)
	rand.Read(k)
	h := make([]byte, 16)
	rand.Read(h)
	f.mu.Lock()
	f.keys[string(h)], f.ctxs[string(h)], f.lastKCtx = append([]byte{}, k...), kctx, kctx
	f.mu.Unlock()
	return k, h, "canonical-" + name, nil
}

func (f *fakeProvider) Decrypt(_ context.Context, _ string, sealed []byte, kctx map[string]string) ([]byte, error) {
	if err := f.count("decrypt"); err != nil {
		return nil, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	k, ok := f.keys[string(sealed)]
	if !ok || fmt.Sprint(f.ctxs[string(sealed)]) != fmt.Sprint(kctx) {
		return nil, kms.Errorf(kms.Invalid, "not ours")
	}
	return append([]byte{}, k...), nil
}

func (f *fakeProvider) Rewrap(_ context.Context, _ string, sealed []byte, _ map[string]string) ([]byte, error) {
	return sealed, f.count("rewrap")
}
func (f *fakeProvider) Version(string, []byte) string       { return "" }
func (f *fakeProvider) Check(context.Context, string) error { return f.count("check") }
func req(bucket, key string, bk bool) crypto.KeyRequest {
	return crypto.KeyRequest{KeyID: "fake:k", Name: crypto.Name{Bucket: bucket, Key: key}, BucketKey: bk}
}

func TestOpenedKeysAreCached(t *testing.T) {
	f := newFake()
	s, _ := kms.NewService(kms.Options{}, f)
	ctx := context.Background()
	k, sealed, id, err := s.NewKey(ctx, req("b", "k", false))
	if err != nil || id != "fake:canonical-k" {
		t.Fatalf("%v %q", err, id)
	}
	opened := req("b", "k", false)
	opened.KeyID = id // an envelope names the canonical key
	for range 3 {
		got, err := s.OpenKey(ctx, opened, sealed)
		if err != nil || string(got) != string(k) {
			t.Fatalf("open: %v", err)
		}
	}
	if f.n("generate") != 1 || f.n("decrypt") != 1 {
		t.Fatalf("calls %v: one generate, the decrypt that checks it, opens from the cache", f.calls)
	}
	// Another name is another context: not the cached key.
	opened.Name.Key = "other"
	if _, err := s.OpenKey(ctx, opened, sealed); kms.KindOf(err) != kms.Invalid {
		t.Fatalf("opened for another object: %v", err)
	}
	if f.lastKCtx[kms.ARNContextKey] != "arn:aws:s3:::b/k" {
		t.Fatalf("context %v", f.lastKCtx)
	}
}

// TestTrustGenerateMakesOneCallPerObject: with TrustGenerate a write
// costs one call, and the read after it none.
func TestTrustGenerateMakesOneCallPerObject(t *testing.T) {
	f := newFake()
	s, _ := kms.NewService(kms.Options{TrustGenerate: true}, f)
	ctx := context.Background()
	_, sealed, id, _ := s.NewKey(ctx, req("b", "k", false))
	r := req("b", "k", false)
	r.KeyID = id
	if _, err := s.OpenKey(ctx, r, sealed); err != nil {
		t.Fatal(err)
	}
	if f.n("generate") != 1 || f.n("decrypt") != 0 {
		t.Fatalf("calls %v, want one generate", f.calls)
	}
}

func TestNoCacheOpensEveryTime(t *testing.T) {
	f := newFake()
	s, _ := kms.NewService(kms.Options{CacheTTL: -1, TrustGenerate: true}, f)
	ctx := context.Background()
	_, sealed, _, _ := s.NewKey(ctx, req("b", "k", false))
	s.OpenKey(ctx, req("b", "k", false), sealed)
	s.OpenKey(ctx, req("b", "k", false), sealed)
	if f.n("decrypt") != 2 {
		t.Fatalf("decrypts %d, want 2 without a cache", f.n("decrypt"))
	}
}

func TestCacheExpires(t *testing.T) {
	f := newFake()
	s, _ := kms.NewService(kms.Options{CacheTTL: 50 * time.Millisecond, TrustGenerate: true}, f)
	ctx := context.Background()
	_, sealed, _, _ := s.NewKey(ctx, req("b", "k", false))
	time.Sleep(150 * time.Millisecond)
	if _, err := s.OpenKey(ctx, req("b", "k", false), sealed); err != nil {
		t.Fatal(err)
	}
	if f.n("decrypt") != 1 {
		t.Fatalf("decrypts %d after the TTL, want 1", f.n("decrypt"))
	}
}

func TestBucketKeysAreShared(t *testing.T) {
	f := newFake()
	s, _ := kms.NewService(kms.Options{}, f)
	ctx := context.Background()
	var wg sync.WaitGroup
	sealedOf := make([][]byte, 50)
	for i := range sealedOf {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, sealed, _, err := s.NewKey(ctx, req("b", fmt.Sprint("k", i), true))
			if err != nil {
				t.Error(err)
			}
			sealedOf[i] = sealed
		}()
	}
	wg.Wait()
	if f.n("generate") != 1 {
		t.Fatalf("generates %d for 50 objects of one bucket key, want 1", f.n("generate"))
	}
	if f.lastKCtx[kms.ARNContextKey] != "arn:aws:s3:::b" {
		t.Fatalf("a bucket key's context: %v", f.lastKCtx)
	}
	s.NewKey(ctx, req("other", "k", true))
	r := req("b", "k", true)
	r.Context = `{"a":"1"}`
	s.NewKey(ctx, r)
	if f.n("generate") != 3 {
		t.Fatalf("generates %d: another bucket and another context each need their own key", f.n("generate"))
	}
}

func TestRetriesAreBoundedAndOnlyForUnavailable(t *testing.T) {
	var obs observer
	f := newFake()
	f.fail = kms.Unavailable
	s, _ := kms.NewService(kms.Options{Attempts: 3, Backoff: time.Millisecond, Timeout: 50 * time.Millisecond, Observer: &obs}, f)
	_, _, _, err := s.NewKey(context.Background(), req("b", "k", false))
	if kms.KindOf(err) != kms.Unavailable || kms.KeyOf(err) != "fake:k" || f.n("generate") != 3 {
		t.Fatalf("%v (kind %v), %d tries; want Unavailable naming the key after 3", err, kms.KindOf(err), f.n("generate"))
	}
	if obs.get("generate unavailable") != 3 {
		t.Fatalf("observed %v", obs.m)
	}
	// Until its timeout has passed, a KMS that did not answer a whole
	// call is not asked again: the next call fails at once.
	if _, _, _, err := s.NewKey(context.Background(), req("b", "k", false)); kms.KindOf(err) != kms.Unavailable || f.n("generate") != 3 {
		t.Fatalf("right after: %v, %d tries; want Unavailable without a call", err, f.n("generate"))
	}
	time.Sleep(60 * time.Millisecond)
	f.fail = kms.Disabled
	_, _, _, err = s.NewKey(context.Background(), req("b", "k", false))
	if kms.KindOf(err) != kms.Disabled || f.n("generate") != 4 {
		t.Fatalf("a disabled key: %v, %d tries; want one", err, f.n("generate"))
	}
}

func TestCallsAreBoundedByTimeout(t *testing.T) {
	s, _ := kms.NewService(kms.Options{Timeout: 50 * time.Millisecond, Attempts: 2, Backoff: time.Millisecond}, &stall{})
	start := time.Now()
	_, _, _, err := s.NewKey(context.Background(), crypto.KeyRequest{KeyID: "stall:k", Name: crypto.Name{Bucket: "b", Key: "k"}})
	if kms.KindOf(err) != kms.Unavailable || time.Since(start) > 2*time.Second {
		t.Fatalf("a stalled KMS: %v after %v", err, time.Since(start))
	}
}

type stall struct{ fakeProvider }

func (*stall) Scheme() string { return "stall" }
func (*stall) GenerateKey(ctx context.Context, _ string, _ map[string]string) ([]byte, []byte, string, error) {
	<-ctx.Done()
	return nil, nil, "", ctx.Err()
}

func TestResolve(t *testing.T) {
	s, _ := kms.NewService(kms.Options{}, newFake())
	for in, want := range map[string]string{"k1": "fake:k1", "fake:k2": "fake:k2"} {
		if got, ok := s.Resolve(in); !ok || got != want {
			t.Errorf("Resolve(%q) = %q %v, want %q", in, got, ok, want)
		}
	}
	if !s.Handles("fake:x") || s.Handles("aws-kms:x") {
		t.Error("Handles")
	}
}

type observer struct {
	mu sync.Mutex
	m  map[string]int
}

func (o *observer) KMSRequest(op, outcome string, _ time.Duration) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.m == nil {
		o.m = map[string]int{}
	}
	o.m[op+" "+outcome]++
}

func (o *observer) get(k string) int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.m[k]
}
