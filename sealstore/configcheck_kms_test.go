package sealstore

import (
	"context"
	"errors"
	"strings"
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

// downKMS is generateLiar that, while down, does not answer.
type downKMS struct {
	*generateLiar
	down bool
}

func (d *downKMS) Decrypt(ctx context.Context, key string, sealed []byte, ec map[string]string) ([]byte, error) {
	if d.down {
		return nil, &kms.ProviderError{Kind: kms.Unavailable, Err: errors.New("connection refused")}
	}
	return d.generateLiar.Decrypt(ctx, key, sealed, ec)
}

// A KMS that does not answer while s3seal starts (or while /readyz asks)
// says nothing about the keyring: CheckKeyring finds no wrong keyring,
// however many documents it could not open.
func TestCheckKeyringKMSDownIsNoWrongKeyring(t *testing.T) {
	f := newFixture(t)
	d := &downKMS{generateLiar: &generateLiar{keys: map[string][]byte{}}}
	svc, err := kms.NewService(kms.Options{}, d)
	if err != nil {
		t.Fatal(err)
	}
	kr, err := f.kr.WithService(svc, "liar:master", nil)
	if err != nil {
		t.Fatal(err)
	}
	st, err := New(Direct(f.be), kr, Options{SpoolDir: t.TempDir(), KMS: svc})
	if err != nil {
		t.Fatal(err)
	}
	if err := st.PutBucketDoc(f.ctx, bucket, "policy", []byte(`{"Version":"2012-10-17","Statement":[]}`)); err != nil {
		t.Fatal(err)
	}
	d.down = true
	// A new process: nothing cached.
	svc2, _ := kms.NewService(kms.Options{}, d)
	kr2, _ := f.kr.WithService(svc2, "liar:master", nil)
	st2, err := New(Direct(f.be), kr2, Options{SpoolDir: t.TempDir(), KMS: svc2})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := st2.Read(f.ctx, ReadInput{Bucket: bucket, Key: BucketDocPrefix + "policy", own: true}); !IsKMSUnavailable(err) {
		t.Fatalf("the document read with the KMS down: %v", err)
	}
	if err := st2.CheckKeyring(f.ctx); err != nil {
		t.Fatalf("the KMS down: CheckKeyring = %v", err)
	}
	if n := st2.KeyFailures(); n != 0 {
		t.Errorf("the KMS down counted %d key failures", n)
	}
}

// A keyring whose keys a KMS holds alone, over documents sealed under a
// local key it lacks: the finding says what the keyring has, not
// "the keyring has ;" with nothing named.
func TestKeyringMismatchOfAKMSOnlyKeyringSaysWhatItHas(t *testing.T) {
	f := newFixture(t)
	if err := f.st.PutBucketDoc(f.ctx, bucket, "policy", []byte(`{"Version":"2012-10-17","Statement":[]}`)); err != nil {
		t.Fatal(err)
	}
	svc, err := kms.NewService(kms.Options{}, &generateLiar{keys: map[string][]byte{}})
	if err != nil {
		t.Fatal(err)
	}
	var none *crypto.Keyring
	kmsOnly, err := none.WithService(svc, "liar:master", nil)
	if err != nil {
		t.Fatal(err)
	}
	st, err := New(Direct(f.be), kmsOnly, Options{SpoolDir: t.TempDir(), KMS: svc})
	if err != nil {
		t.Fatal(err)
	}
	err = st.CheckKeyring(f.ctx)
	var km *KeyringMismatch
	if !errors.As(err, &km) {
		t.Fatalf("documents under a local key a KMS-only keyring lacks: %v", err)
	}
	if msg := err.Error(); strings.Contains(msg, "the keyring has ;") || strings.Contains(msg, "the keyring has  ") || !strings.Contains(msg, "KMS") {
		t.Errorf("the finding names nothing the keyring has: %q", msg)
	}
}
