//go:build pkcs11 && cgo

package pkcs11

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"testing"

	"github.com/s3seal/s3seal/crypto"
	"github.com/s3seal/s3seal/kms"
)

// TestKeyService: the provider behind kms.Service is the crypto.KeyService
// of a keyring whose primary key is in the token. An object sealed under
// it opens through another Service (no cache), under its name only.
func TestKeyService(t *testing.T) {
	h := needHSM(t)
	newService := func() *kms.Service {
		p, name, err := kms.Open(testURI(h, "tenant-a"), os.Getenv)
		if err != nil || name != "tenant-a" {
			t.Fatalf("kms.Open: %q, %v", name, err)
		}
		t.Cleanup(func() { p.(*Provider).Close() })
		svc, err := kms.NewService(kms.Options{CacheTTL: -1}, p)
		if err != nil {
			t.Fatal(err)
		}
		return svc
	}
	svc := newService()
	ext, ok := svc.Resolve("tenant-a")
	if !ok || ext != "pkcs11:tenant-a" {
		t.Fatalf("Resolve = %q, %t", ext, ok)
	}
	kr, err := (*crypto.Keyring)(nil).WithService(svc, ext, map[string]string{"tenant": ext})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := svc.Check(ctx, ext); err != nil {
		t.Fatal(err)
	}

	for _, b := range []crypto.Binding{{}, {KMSContext: `{"team":"red"}`}, {KMSContext: `{"team":"red"}`, BucketKey: true}} {
		plain := []byte("sealed under a key in the HSM")
		b.PlainSize = int64(len(plain))
		name := crypto.Name{Bucket: "b", Key: "k"}
		dk, err := crypto.NewDataKey()
		if err != nil {
			t.Fatal(err)
		}
		var stored bytes.Buffer
		w := crypto.NewWriter(&stored, dk, crypto.Stream{})
		w.Write(plain)
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		env, err := kr.Wrap(ctx, dk, "tenant", name, b)
		if err != nil {
			t.Fatal(err)
		}
		if env.KeyID != "pkcs11:tenant-a" || !env.External() || svc.Version(env.KeyID, env.SealedKey) != "01" {
			t.Errorf("envelope of key %q, version %q", env.KeyID, svc.Version(env.KeyID, env.SealedKey))
		}

		env2, _, err := crypto.ParseMetadata(env.Metadata())
		if err != nil {
			t.Fatal(err)
		}
		kr2, err := (*crypto.Keyring)(nil).WithService(newService(), ext, nil)
		if err != nil {
			t.Fatal(err)
		}
		dk2, got, err := kr2.Unwrap(ctx, env2, name)
		if err != nil {
			t.Fatalf("Unwrap (%+v): %v", b, err)
		}
		if got.KMSContext != b.KMSContext || got.BucketKey != b.BucketKey || got.PlainSize != b.PlainSize {
			t.Errorf("Unwrap's binding %+v, want %+v", got, b)
		}
		r, err := crypto.NewReader(bytes.NewReader(stored.Bytes()), dk2, crypto.Stream{}, b.PlainSize, 0, b.PlainSize)
		if err != nil {
			t.Fatal(err)
		}
		if read, err := io.ReadAll(r); err != nil || !bytes.Equal(read, plain) {
			t.Errorf("read back %q, %v", read, err)
		}

		// Moved to another key of the bucket (or, for a bucket key,
		// another bucket), the sealed key is bound to the old name.
		moved := crypto.Name{Bucket: "b2", Key: "k"}
		_, _, err = kr2.Unwrap(ctx, env2, moved)
		if kms.KindOf(err) != kms.Invalid || kms.KeyOf(err) != "pkcs11:tenant-a" {
			t.Errorf("Unwrap under another name: %v (kind %s), want invalid ciphertext naming the key", err, kms.KindOf(err))
		}

		rewrapped, err := svc.Rewrap(ctx, crypto.KeyRequest{KeyID: env.KeyID, Name: name, Context: b.KMSContext, BucketKey: b.BucketKey}, env.SealedKey)
		if err != nil {
			t.Fatal(err)
		}
		env2.SealedKey = rewrapped
		if _, _, err := kr2.Unwrap(ctx, env2, name); err != nil {
			t.Errorf("Unwrap after Rewrap: %v", err)
		}
	}

	_, err = kr.Wrap(ctx, mustDataKey(t), "pkcs11:no-such-key", crypto.Name{Bucket: "b", Key: "k"}, crypto.Binding{})
	var e *kms.Error
	if !errors.As(err, &e) || e.Kind != kms.NotFound || e.Key != "pkcs11:no-such-key" || e.Op != "generate" {
		t.Errorf("Wrap under an unknown key: %v", err)
	}
}

func mustDataKey(t *testing.T) *crypto.DataKey {
	dk, err := crypto.NewDataKey()
	if err != nil {
		t.Fatal(err)
	}
	return dk
}
