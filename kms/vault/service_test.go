package vault

import (
	"context"
	"crypto/md5"
	"errors"
	"log/slog"
	"testing"
	"time"

	"github.com/s3seal/s3seal/crypto"
	"github.com/s3seal/s3seal/kms"
)

// quietOptions are a Service's options for tests: no cache unless asked,
// short bounds, no log.
func quietOptions(cacheTTL time.Duration) kms.Options {
	return kms.Options{CacheTTL: cacheTTL, Timeout: 5 * time.Second, Attempts: 2, Backoff: 10 * time.Millisecond,
		Logger: slog.New(slog.DiscardHandler)}
}

// sealObject wraps a fresh data key under keyID for the object at name
// with meta sealed by it, as s3seal does for a PUT.
func sealObject(t *testing.T, ctx context.Context, kr *crypto.Keyring, keyID string, name crypto.Name, b crypto.Binding) crypto.Envelope {
	t.Helper()
	dk, err := crypto.NewDataKey()
	if err != nil {
		t.Fatal(err)
	}
	b.PlainSize, b.PlainMD5 = 5, md5.Sum([]byte("hello"))
	env, err := kr.Wrap(ctx, dk, keyID, name, b)
	if err != nil {
		t.Fatal(err)
	}
	if env.SealedMeta, err = crypto.SealObjectMeta(dk, crypto.ObjectMeta{ContentType: "text/x-" + name.Key}); err != nil {
		t.Fatal(err)
	}
	return env
}

// openObject unwraps env for the object at name and checks that the data
// key is the one that sealed its meta.
func openObject(ctx context.Context, kr *crypto.Keyring, env crypto.Envelope, name crypto.Name) error {
	dk, _, err := kr.Unwrap(ctx, env, name)
	if err != nil {
		return err
	}
	om, err := crypto.OpenObjectMeta(dk, env.SealedMeta)
	if err != nil {
		return err
	}
	if om.ContentType != "text/x-"+name.Key {
		return errors.New("the object's meta came back as " + om.ContentType)
	}
	return nil
}

// Through kms.Service and a keyring, as s3seal uses the provider: wrap
// and unwrap, the context and the name bound by s3seal, rotation and
// Rewrap, a retired version, and a deleted key.
func TestThroughService(t *testing.T) {
	d := needDev(t)
	ctx := testCtx(t)
	name := keyName(t)
	d.createKey(t, "transit", name, nil)
	p := d.open(t, "transit", name, rootToken)
	svc, err := kms.NewService(quietOptions(-1), p)
	if err != nil {
		t.Fatal(err)
	}
	kr, err := (*crypto.Keyring)(nil).WithService(svc, "tenant", map[string]string{"tenant": "hcvault:" + name})
	if err != nil {
		t.Fatal(err)
	}
	if err := svc.Check(ctx, "hcvault:"+name); err != nil {
		t.Fatal(err)
	}

	obj := crypto.Name{Bucket: "photos", Key: "cat"}
	kctx := `{"department":"x"}`
	env := sealObject(t, ctx, kr, "", obj, crypto.Binding{KMSContext: kctx})
	if env.KeyID != "hcvault:"+name || svc.Version(env.KeyID, env.SealedKey) != "v1" {
		t.Fatalf("envelope of key %q, version %q", env.KeyID, svc.Version(env.KeyID, env.SealedKey))
	}
	if err := openObject(ctx, kr, env, obj); err != nil {
		t.Fatal(err)
	}
	// s3seal binds the name and the context: Transit does not.
	if err := openObject(ctx, kr, env, crypto.Name{Bucket: "photos", Key: "dog"}); !errors.Is(err, crypto.ErrAuth) {
		t.Errorf("unwrap under another name: %v, want ErrAuth", err)
	}
	other := env
	other.KMSContext = `{"department":"y"}`
	if err := openObject(ctx, kr, other, obj); !errors.Is(err, crypto.ErrAuth) {
		t.Errorf("unwrap with another context: %v, want ErrAuth", err)
	}
	bucketEnv := sealObject(t, ctx, kr, "hcvault:"+name, obj, crypto.Binding{BucketKey: true})
	if err := openObject(ctx, kr, bucketEnv, obj); err != nil {
		t.Fatalf("a bucket key's object: %v", err)
	}

	// Rotation: new objects get v2; Rewrap moves the old one there.
	if _, err := d.root.Logical().Write("transit/keys/"+name+"/rotate", nil); err != nil {
		t.Fatal(err)
	}
	env2 := sealObject(t, ctx, kr, "", crypto.Name{Bucket: "photos", Key: "owl"}, crypto.Binding{})
	if v := svc.Version(env2.KeyID, env2.SealedKey); v != "v2" {
		t.Fatalf("after rotation a new object's key is of %q, want v2", v)
	}
	req := env.KeyRequest(obj)
	rewrapped, err := svc.Rewrap(ctx, req, env.SealedKey)
	if err != nil {
		t.Fatal(err)
	}
	moved := env
	moved.SealedKey = rewrapped
	if v := svc.Version(moved.KeyID, moved.SealedKey); v != "v2" {
		t.Fatalf("rewrapped to %q, want v2", v)
	}

	// Retiring v1: the old envelope is refused as Disabled, the rewrapped
	// one opens.
	if _, err := d.root.Logical().Write("transit/keys/"+name+"/config", map[string]any{"min_decryption_version": 2}); err != nil {
		t.Fatal(err)
	}
	err = openObject(ctx, kr, env, obj)
	if kms.KindOf(err) != kms.Disabled || kms.KeyOf(err) != "hcvault:"+name {
		t.Errorf("unwrap of a retired version: %v, want Disabled naming the key", err)
	}
	if err := openObject(ctx, kr, moved, obj); err != nil {
		t.Errorf("unwrap of the rewrapped envelope: %v", err)
	}

	// Deleting the key shreds every object.
	if _, err := d.root.Logical().Write("transit/keys/"+name+"/config", map[string]any{"deletion_allowed": true}); err != nil {
		t.Fatal(err)
	}
	if _, err := d.root.Logical().Delete("transit/keys/" + name); err != nil {
		t.Fatal(err)
	}
	if err := openObject(ctx, kr, env2, crypto.Name{Bucket: "photos", Key: "owl"}); kms.KindOf(err) != kms.NotFound {
		t.Errorf("unwrap after the key was deleted: %v, want NotFound", err)
	}
}

// With the cache, a read of a recent object makes no call: it opens
// while Vault refuses everything, until the cache is dropped.
func TestThroughServiceCached(t *testing.T) {
	d := needDev(t)
	ctx := testCtx(t)
	name := keyName(t)
	d.createKey(t, "transit", name, nil)
	p := d.open(t, "transit", name, rootToken)
	svc, err := kms.NewService(quietOptions(time.Minute), p)
	if err != nil {
		t.Fatal(err)
	}
	kr, err := (*crypto.Keyring)(nil).WithService(svc, "hcvault:"+name, nil)
	if err != nil {
		t.Fatal(err)
	}
	obj := crypto.Name{Bucket: "b", Key: "k"}
	env := sealObject(t, ctx, kr, "", obj, crypto.Binding{})
	if _, err := d.root.Logical().Write("transit/keys/"+name+"/rotate", nil); err != nil {
		t.Fatal(err)
	}
	if _, err := d.root.Logical().Write("transit/keys/"+name+"/config", map[string]any{"min_decryption_version": 2}); err != nil {
		t.Fatal(err)
	}
	if err := openObject(ctx, kr, env, obj); err != nil {
		t.Fatalf("a cached key: %v", err)
	}
	fresh, err := kms.NewService(quietOptions(time.Minute), p)
	if err != nil {
		t.Fatal(err)
	}
	kr2, err := (*crypto.Keyring)(nil).WithService(fresh, "hcvault:"+name, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := openObject(ctx, kr2, env, obj); kms.KindOf(err) != kms.Disabled {
		t.Fatalf("without the cache: %v, want Disabled", err)
	}
}
