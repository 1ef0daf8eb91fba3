package sealstore

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/s3seal/s3seal/crypto"
)

// storeWithKeyring is a second Store over f's backend whose keyring is kr.
func storeWithKeyring(t *testing.T, f *fixture, kr *crypto.Keyring) *Store {
	t.Helper()
	st, err := New(Direct(f.be), kr, Options{SpoolDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// A keyring that opens none of the store's sealed objects is told apart
// from corruption: CheckKeyring names the ids the objects were sealed
// under and those it has, and a read names the master key. The right
// keyring, or a store with nothing sealed, passes.
func TestCheckKeyringNamesAWrongKeyring(t *testing.T) {
	f := newFixture(t)
	k1, _ := crypto.GenerateKey()
	right, _ := crypto.NewKeyring("k1", map[string][]byte{"k1": k1})
	f.st = storeWithKeyring(t, f, right)
	if err := f.st.CheckKeyring(f.ctx); err != nil {
		t.Fatalf("nothing sealed yet: %v", err)
	}
	if err := f.st.PutBucketDoc(f.ctx, bucket, "policy", []byte(`{"Version":"2012-10-17","Statement":[]}`)); err != nil {
		t.Fatal(err)
	}
	f.put(t, "obj", []byte("hello"))
	if err := f.st.CheckKeyring(f.ctx); err != nil {
		t.Fatalf("the right keyring: %v", err)
	}

	other, _ := crypto.GenerateKey()
	sameID, _ := crypto.NewKeyring("k1", map[string][]byte{"k1": other})
	st := storeWithKeyring(t, f, sameID)
	var km *KeyringMismatch
	err := st.CheckKeyring(f.ctx)
	if !errors.As(err, &km) || !slices.Equal(km.Expected, []string{"k1"}) || !slices.Equal(km.Has, []string{"k1"}) ||
		!strings.Contains(err.Error(), "another key under the same id") {
		t.Fatalf("another key under the same id: %v", err)
	}
	_, _, err = st.Get(f.ctx, bucket, "obj", nil)
	var se *Error
	if !errors.As(err, &se) || !strings.Contains(se.Message, `master key "k1"`) || !errors.Is(err, ErrIntegrity) {
		t.Fatalf("GET under another key of the same id: %v", err)
	}
	if st.KeyFailures() == 0 {
		t.Fatal("the failed unwrap was not counted")
	}

	otherID, _ := crypto.NewKeyring("k2026", map[string][]byte{"k2026": other})
	err = storeWithKeyring(t, f, otherID).CheckKeyring(f.ctx)
	if !errors.As(err, &km) || !slices.Equal(km.Expected, []string{"k1"}) || !slices.Equal(km.Has, []string{"k2026"}) {
		t.Fatalf("a keyring without the id: %v", err)
	}

	// A keyring that holds the right key beside the wrong one opens the
	// documents: not a wrong keyring.
	both, _ := crypto.NewKeyring("k2026", map[string][]byte{"k2026": other, "k1": k1})
	if err := storeWithKeyring(t, f, both).CheckKeyring(f.ctx); err != nil {
		t.Fatalf("a keyring that has the right key too: %v", err)
	}
}
