package sealstore

import (
	"errors"
	"testing"

	"github.com/s3seal/s3seal/crypto"
)

// A wrong keyring (another key under the data's id) is named by
// CheckKeyring, until anything creates one bucket through the s3seal that
// serves with it (s3seal serves on while /readyz says 503; a single
// instance or a docker-compose setup has no load balancer to keep clients
// off). That bucket's documents open under the wrong key, and from then
// on the sample is "mixed": a WARN line, and /readyz answers 200 though
// no object from before opens. The documents of one id that open in one
// bucket and fail in every other are two keys used under that id.
//
// Finding of the review of the first-day mistakes; not fixed (what to
// count as a wrong keyring when the sample is mixed is a design choice:
// see the report). Remove the Skip to see it fail.
func TestCheckKeyringNotHiddenByABucketMadeUnderTheWrongKey(t *testing.T) {
	t.Skip("review finding, not fixed: a bucket made under the wrong key hides the wrong keyring from CheckKeyring")
	f := newFixture(t)
	for _, doc := range []string{"policy", "cors"} {
		if err := f.st.PutBucketDoc(f.ctx, bucket, doc, []byte(`{}`)); err != nil {
			t.Fatal(err)
		}
	}
	other, _ := crypto.GenerateKey()
	sameID, _ := crypto.NewKeyring("k1", map[string][]byte{"k1": other})
	wrong := storeWithKeyring(t, f, sameID)
	var km *KeyringMismatch
	if err := wrong.CheckKeyring(f.ctx); !errors.As(err, &km) {
		t.Fatalf("before: %v", err)
	}
	// A client creates a bucket through the replica with the wrong key.
	if err := f.be.CreateBucket(f.ctx, "aaa-new"); err != nil {
		t.Fatal(err)
	}
	if err := wrong.PutBucketDoc(f.ctx, "aaa-new", "policy", []byte(`{}`)); err != nil {
		t.Fatal(err)
	}
	if err := wrong.CheckKeyring(f.ctx); !errors.As(err, &km) {
		t.Errorf("after one bucket made under the wrong key, CheckKeyring = %v: the wrong keyring is hidden", err)
	}
}
