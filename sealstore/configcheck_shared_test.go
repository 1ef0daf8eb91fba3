package sealstore

import (
	"fmt"
	"testing"

	"github.com/s3seal/s3seal/crypto"
)

// Two s3seal deployments with keyrings of their own in front of one store
// account, each with its own buckets (a staging and a production, two
// teams): the store lists every bucket to both. CheckKeyring samples the
// first 16 by name and opens none of the other deployment's documents,
// so the newer deployment, before it made a bucket, or whenever 16 of
// the other's buckets sort before its own, is told its keyring is wrong:
// /readyz 503 on every replica, for good (a key failure it never has
// does not ask again), though every object of its own opens. A keyring
// is wrong for the buckets it serves, not for buckets sealed by another
// deployment.
//
// Finding of the review of the first-day mistakes; not fixed (see the
// report). Remove the Skip to see it fail.
func TestCheckKeyringBesideAnotherDeploymentOnTheSameStore(t *testing.T) {
	t.Skip("review finding, not fixed: another deployment's buckets on the same store make CheckKeyring call a right keyring wrong")
	f := newFixture(t)
	// Deployment A: 16 buckets with documents.
	for i := range 16 {
		b := fmt.Sprintf("a-team-%02d", i)
		if err := f.be.CreateBucket(f.ctx, b); err != nil {
			t.Fatal(err)
		}
		if err := f.st.PutBucketDoc(f.ctx, b, "policy", []byte(`{"Version":"2012-10-17","Statement":[]}`)); err != nil {
			t.Fatal(err)
		}
	}
	// Deployment B: a keyring of its own, nothing made yet.
	kb, _ := crypto.GenerateKey()
	krB, _ := crypto.NewKeyring("team-b", map[string][]byte{"team-b": kb})
	b := storeWithKeyring(t, f, krB)
	if err := b.CheckKeyring(f.ctx); err != nil {
		t.Errorf("deployment B before its first bucket: %v", err)
	}
	// B makes its bucket; A's 16 sort before it.
	if err := f.be.CreateBucket(f.ctx, "b-team"); err != nil {
		t.Fatal(err)
	}
	if err := b.PutBucketDoc(f.ctx, "b-team", "policy", []byte(`{"Version":"2012-10-17","Statement":[]}`)); err != nil {
		t.Fatal(err)
	}
	if err := b.CheckKeyring(f.ctx); err != nil {
		t.Errorf("deployment B with its own bucket, which opens: %v", err)
	}
}
