package sealstore

import (
	"testing"

	"github.com/s3seal/s3seal/crypto"
	"github.com/s3seal/s3seal/kms"
)

// A deployment whose master key moved into a KMS: every bucket but one
// was rewrapped to the KMS key, and the local key "k1" retired too early.
// The KMS key opens the documents of the rewrapped buckets; only the one
// left behind fails. That is the documents' problem (rewrap the bucket,
// or give k1 back), as it is when the keys are both local: CheckKeyring
// must not call the keyring wrong, which makes /readyz answer 503 on every
// replica and takes the whole service out of its load balancers for one
// bucket. The documents a KMS key opened count as opened.
func TestCheckKeyringCountsDocumentsAKMSKeyOpens(t *testing.T) {
	f := newFixture(t)
	liar := &generateLiar{keys: map[string][]byte{}}
	svc, err := kms.NewService(kms.Options{}, liar)
	if err != nil {
		t.Fatal(err)
	}
	// Before: a bucket sealed under the local k1.
	if err := f.be.CreateBucket(f.ctx, "left-behind"); err != nil {
		t.Fatal(err)
	}
	if err := f.st.PutBucketDoc(f.ctx, "left-behind", "policy", []byte(`{"Version":"2012-10-17","Statement":[]}`)); err != nil {
		t.Fatal(err)
	}
	// After: the KMS key is primary; the fixture's bucket is under it.
	withKMS, err := f.kr.WithService(svc, "liar:master", nil)
	if err != nil {
		t.Fatal(err)
	}
	st, err := New(Direct(f.be), withKMS, Options{SpoolDir: t.TempDir(), KMS: svc})
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range []string{bucket, "moved"} {
		if b != bucket {
			if err := f.be.CreateBucket(f.ctx, b); err != nil {
				t.Fatal(err)
			}
		}
		if err := st.PutBucketDoc(f.ctx, b, "policy", []byte(`{"Version":"2012-10-17","Statement":[]}`)); err != nil {
			t.Fatal(err)
		}
	}
	// k1 retired: the keyring holds the KMS key alone.
	var none *crypto.Keyring
	kmsOnly, err := none.WithService(svc, "liar:master", nil)
	if err != nil {
		t.Fatal(err)
	}
	st, err = New(Direct(f.be), kmsOnly, Options{SpoolDir: t.TempDir(), KMS: svc})
	if err != nil {
		t.Fatal(err)
	}
	if err := st.CheckKeyring(f.ctx); err != nil {
		t.Errorf("the KMS key opens two buckets' documents, k1's bucket alone fails: CheckKeyring calls the keyring wrong: %v", err)
	}

}
