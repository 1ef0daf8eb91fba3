package crypto

import (
	"bytes"
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"errors"
	"strings"
	"testing"
)

// fakeService is a KeyService over in-memory master keys: a sealed key is
// nonce || AES-GCM(master, key, AAD = key id || name || context ||
// bucket key), so it opens only for the request it was made for. It
// counts calls.
type fakeService struct {
	// bindsNothing makes the service bind nothing but the master key to
	// a sealed key (as Vault Transit without derived keys): the wrap's
	// own associated data must then hold every binding.
	bindsNothing bool
	masters      map[string][]byte
	newKeys      int
	opens        int
	failWith     error
}

func newFakeService(ids ...string) *fakeService {
	s := &fakeService{masters: map[string][]byte{}}
	for _, id := range ids {
		k := make([]byte, 32)
		rand.Read(k)
		s.masters[id] = k
	}
	return s
}

func (s *fakeService) Handles(id string) bool { return strings.HasPrefix(id, "fake:") }

func (s *fakeService) aad(req KeyRequest) []byte {
	if s.bindsNothing {
		return []byte(req.KeyID)
	}
	bk := "0"
	if req.BucketKey {
		bk = "1"
	}
	return []byte(req.KeyID + "\x00" + req.Name.Bucket + "\x00" + req.Name.Key + "\x00" + req.Context + "\x00" + bk)
}

func (s *fakeService) gcm(id string) (cipher.AEAD, error) {
	m, ok := s.masters[id]
	if !ok {
		return nil, errors.New("no such master key " + id)
	}
	b, _ := aes.NewCipher(m)
	return cipher.NewGCM(b)
}

func (s *fakeService) NewKey(_ context.Context, req KeyRequest) ([]byte, []byte, string, error) {
	s.newKeys++
	if s.failWith != nil {
		return nil, nil, "", s.failWith
	}
	g, err := s.gcm(req.KeyID)
	if err != nil {
		return nil, nil, "", err
	}
	key := make([]byte, KeySize)
	rand.Read(key)
	nonce := make([]byte, 12)
	rand.Read(nonce)
	return key, g.Seal(nonce, nonce, key, s.aad(req)), req.KeyID, nil
}

func (s *fakeService) Forget(KeyRequest, []byte) {}

func (s *fakeService) OpenKey(_ context.Context, req KeyRequest, sealed []byte) ([]byte, error) {
	s.opens++
	if s.failWith != nil {
		return nil, s.failWith
	}
	g, err := s.gcm(req.KeyID)
	if err != nil {
		return nil, err
	}
	if len(sealed) < 12 {
		return nil, errors.New("short")
	}
	return g.Open(nil, sealed[:12], sealed[12:], s.aad(req))
}

func externalRing(t *testing.T, svc KeyService, primary string) *Keyring {
	t.Helper()
	local, err := NewKeyring("local", map[string][]byte{"local": bytes.Repeat([]byte{7}, 32)})
	if err != nil {
		t.Fatal(err)
	}
	kr, err := local.WithService(svc, primary, map[string]string{"tenant-a": "fake:a"})
	if err != nil {
		t.Fatal(err)
	}
	return kr
}

func TestExternalWrapRoundTripAndMetadata(t *testing.T) {
	svc := newFakeService("fake:a", "fake:b")
	kr := externalRing(t, svc, "tenant-a")
	ctx := context.Background()
	name := Name{Bucket: "b", Key: "k"}
	dk, _ := NewDataKey()
	b := Binding{PlainSize: 5, PlainMD5: [16]byte{1}, KMSContext: `{"dept":"x"}`, BucketKey: true}
	env, err := kr.Wrap(ctx, dk, "", name, b)
	if err != nil {
		t.Fatal(err)
	}
	if env.KeyID != "fake:a" || !env.External() || env.KMSContext != b.KMSContext || !env.BucketKey || len(env.SealedKey) == 0 {
		t.Fatalf("envelope %+v", env)
	}
	parsed, enc, err := ParseMetadata(env.Metadata())
	if err != nil || !enc {
		t.Fatalf("parse: %v %v", enc, err)
	}
	dk2, b2, err := kr.Unwrap(ctx, parsed, name)
	if err != nil {
		t.Fatal(err)
	}
	if dk2.OID() != dk.OID() || b2.KMSContext != b.KMSContext || !b2.BucketKey || b2.PlainMD5 != b.PlainMD5 {
		t.Fatalf("binding %+v", b2)
	}
}

// TestExternalBindingSwaps: what the envelope states in the clear about
// its KMS key is bound; a store that changes or swaps any of it is
// refused, never read under another key or context.
func TestExternalBindingSwaps(t *testing.T) {
	for _, bindsNothing := range []bool{false, true} {
		svc := newFakeService("fake:a", "fake:b")
		svc.bindsNothing = bindsNothing
		t.Run(map[bool]string{false: "service binds", true: "service binds nothing"}[bindsNothing], func(t *testing.T) {
			testBindingSwaps(t, externalRing(t, svc, "fake:a"))
		})
	}
}

func testBindingSwaps(t *testing.T, kr *Keyring) {
	ctx := context.Background()
	name := Name{Bucket: "b", Key: "k"}
	wrap := func(keyID, kctx string, bk bool, n Name) Envelope {
		dk, _ := NewDataKey()
		env, err := kr.Wrap(ctx, dk, keyID, n, Binding{Multipart: true, KMSContext: kctx, BucketKey: bk})
		if err != nil {
			t.Fatal(err)
		}
		return env
	}
	env := wrap("fake:a", `{"t":"1"}`, false, name)
	other := wrap("fake:b", `{"t":"1"}`, false, name)
	sibling := wrap("fake:a", `{"t":"1"}`, false, Name{Bucket: "b", Key: "other"})
	cases := map[string]func(e *Envelope){
		"context changed":        func(e *Envelope) { e.KMSContext = `{"t":"2"}` },
		"context dropped":        func(e *Envelope) { e.KMSContext = "" },
		"bucket key set":         func(e *Envelope) { e.BucketKey = true },
		"key id swapped":         func(e *Envelope) { e.KeyID = "fake:b" },
		"sealed key of tenant b": func(e *Envelope) { e.KeyID, e.SealedKey = other.KeyID, other.SealedKey },
		"sealed key of a sibling": func(e *Envelope) {
			e.SealedKey = sibling.SealedKey
		},
		"whole wrap of a sibling": func(e *Envelope) { e.Wrapped, e.SealedKey, e.OID = sibling.Wrapped, sibling.SealedKey, sibling.OID },
		"relabelled local":        func(e *Envelope) { e.KeyID = "local" },
		"sealed key flipped":      func(e *Envelope) { e.SealedKey = append([]byte{}, e.SealedKey...); e.SealedKey[20] ^= 1 },
	}
	for what, change := range cases {
		e := env
		change(&e)
		if _, _, err := kr.Unwrap(ctx, e, name); err == nil {
			t.Errorf("%s: unwrapped", what)
		}
	}
	if _, _, err := kr.Unwrap(ctx, env, Name{Bucket: "b", Key: "moved"}); err == nil {
		t.Error("unwrapped under another name")
	}
}

func TestExternalKeyFailuresAreNotHidden(t *testing.T) {
	svc := newFakeService("fake:a")
	kr := externalRing(t, svc, "fake:a")
	ctx := context.Background()
	name := Name{Bucket: "b", Key: "k"}
	dk, _ := NewDataKey()
	env, err := kr.Wrap(ctx, dk, "", name, Binding{Multipart: true})
	if err != nil {
		t.Fatal(err)
	}
	down := errors.New("kms down")
	svc.failWith = down
	if _, err := kr.Wrap(ctx, dk, "", name, Binding{Multipart: true}); !errors.Is(err, down) {
		t.Fatalf("wrap with the service down: %v", err)
	}
	if _, _, err := kr.Unwrap(ctx, env, name); !errors.Is(err, down) {
		t.Fatalf("unwrap with the service down: %v", err)
	}
	// A local key never takes a context or bucket key, and a keyring
	// without the service does not read an external envelope.
	if _, err := kr.Wrap(ctx, dk, "local", name, Binding{Multipart: true, BucketKey: true}); !errors.Is(err, ErrKeyring) {
		t.Fatalf("bucket key on a local key: %v", err)
	}
	local, _ := NewKeyring("local", map[string][]byte{"local": bytes.Repeat([]byte{7}, 32)})
	if _, _, err := local.Unwrap(ctx, env, name); !errors.Is(err, ErrUnknownKey) {
		t.Fatalf("no service: %v", err)
	}
}

func TestExternalMetadataRules(t *testing.T) {
	svc := newFakeService("fake:a")
	kr := externalRing(t, svc, "fake:a")
	dk, _ := NewDataKey()
	env, err := kr.Wrap(context.Background(), dk, "", Name{Bucket: "b", Key: "k"}, Binding{Multipart: true})
	if err != nil {
		t.Fatal(err)
	}
	m := env.Metadata()
	without := func(k string) map[string]string {
		c := map[string]string{}
		for kk, v := range m {
			if kk != k {
				c[kk] = v
			}
		}
		return c
	}
	if _, _, err := ParseMetadata(without(MetaSealedKey)); !errors.Is(err, ErrCorrupt) {
		t.Errorf("external key without %s: %v", MetaSealedKey, err)
	}
	bad := without("")
	bad[MetaBucketKey] = "yes"
	if _, _, err := ParseMetadata(bad); !errors.Is(err, ErrCorrupt) {
		t.Errorf("%s = yes: %v", MetaBucketKey, err)
	}
	localEnv, _ := kr.Wrap(context.Background(), dk, "local", Name{Bucket: "b", Key: "k"}, Binding{Multipart: true})
	lm := localEnv.Metadata()
	lm[MetaSealedKey] = m[MetaSealedKey]
	if _, _, err := ParseMetadata(lm); !errors.Is(err, ErrCorrupt) {
		t.Errorf("local key with a sealed key: %v", err)
	}
}

func TestCanonicalKMSContext(t *testing.T) {
	for in, want := range map[string]string{
		`{"b":"2","a":"1"}`: `{"a":"1","b":"2"}`,
		` {} `:              "",
	} {
		got, err := CanonicalKMSContext([]byte(in))
		if err != nil || got != want {
			t.Errorf("%s: %q %v, want %q", in, got, err, want)
		}
	}
	for _, in := range []string{`[]`, `{"a":1}`, `{"a":"1"} {}`, `null`, `"x"`, `{"a":"` + strings.Repeat("x", MaxKMSContext) + `"}`} {
		if _, err := CanonicalKMSContext([]byte(in)); err == nil {
			t.Errorf("%s: accepted", in)
		}
	}
}
