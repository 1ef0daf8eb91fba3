package crypto

import (
	"context"
	"errors"
	"testing"
)

// A wrapped key that does not open under the keyring's key of the id it
// names is ErrKeyMismatch (and still ErrAuth and ErrCorrupt), naming the
// id; an id the keyring lacks is ErrUnknownKey, naming it; a malformed
// envelope is neither.
func TestUnwrapNamesTheMasterKey(t *testing.T) {
	ctx := context.Background()
	k1, _ := GenerateKey()
	k2, _ := GenerateKey()
	right, err := NewKeyring("default", map[string][]byte{"default": k1})
	if err != nil {
		t.Fatal(err)
	}
	wrong, _ := NewKeyring("default", map[string][]byte{"default": k2})
	other, _ := NewKeyring("k2026", map[string][]byte{"k2026": k2})
	name := Name{Bucket: "b", Key: "k"}
	env, err := right.Wrap(ctx, testDataKey(t, "mismatch"), "", name, Binding{PlainSize: 3})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := right.Unwrap(ctx, env, name); err != nil {
		t.Fatalf("the right key: %v", err)
	}

	_, _, err = wrong.Unwrap(ctx, env, name)
	if !errors.Is(err, ErrKeyMismatch) || !errors.Is(err, ErrAuth) || !errors.Is(err, ErrCorrupt) || KeyIDOf(err) != "default" {
		t.Fatalf("another key under the same id: %v (key id %q), want ErrKeyMismatch naming \"default\"", err, KeyIDOf(err))
	}
	_, _, err = other.Unwrap(ctx, env, name)
	if !errors.Is(err, ErrUnknownKey) || errors.Is(err, ErrKeyMismatch) || KeyIDOf(err) != "default" {
		t.Fatalf("a keyring without the id: %v (key id %q), want ErrUnknownKey naming \"default\"", err, KeyIDOf(err))
	}
	bad := env
	bad.Wrapped = bad.Wrapped[:5]
	_, _, err = right.Unwrap(ctx, bad, name)
	if !errors.Is(err, ErrCorrupt) || errors.Is(err, ErrKeyMismatch) || KeyIDOf(err) != "" {
		t.Fatalf("a malformed envelope: %v, want ErrCorrupt only", err)
	}
}
