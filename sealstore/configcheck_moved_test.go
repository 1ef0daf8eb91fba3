package sealstore

import (
	"errors"
	"strings"
	"testing"

	"github.com/s3seal/s3seal/backend"
)

// Objects copied at the store into a bucket of another name (a replica
// of the bucket at a DR site: S3 replication needs another bucket name;
// a migration with the store's own tools) do not open there: s3seal binds
// every object to its bucket and key. The keyring is the right one, yet
// CheckKeyring, /readyz and a GET say only "another key under the same
// id" (or "altered"): the operator goes looking for another key that does
// not exist. The answer names the copy as a cause.
func TestCheckKeyringNamesObjectsCopiedFromAnotherBucket(t *testing.T) {
	f := newFixture(t)
	if err := f.st.PutBucketDoc(f.ctx, bucket, "policy", []byte(`{"Version":"2012-10-17","Statement":[]}`)); err != nil {
		t.Fatal(err)
	}
	f.put(t, "obj", []byte("hello"))
	if err := f.be.CreateBucket(f.ctx, "replica"); err != nil {
		t.Fatal(err)
	}
	out, err := f.be.ListObjects(f.ctx, backend.ListInput{Bucket: bucket, V2: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range out.Entries {
		if _, err := f.be.CopyObject(f.ctx, backend.CopyInput{SrcBucket: bucket, SrcKey: e.Key, Bucket: "replica", Key: e.Key,
			Meta: f.backendMetaOf(t, e.Key)}); err != nil {
			t.Fatal(err)
		}
		if err := f.be.DeleteObject(f.ctx, bucket, e.Key); err != nil {
			t.Fatal(err)
		}
	}
	err = f.st.CheckKeyring(f.ctx)
	var km *KeyringMismatch
	if !errors.As(err, &km) {
		t.Fatalf("CheckKeyring of a store whose only bucket is a copy: %v", err)
	}
	if !strings.Contains(err.Error(), "copied") {
		t.Errorf("the right keyring over objects copied from another bucket: %q names no copy", err)
	}
	_, _, err = f.st.Get(f.ctx, "replica", "obj", nil)
	var se *Error
	if !errors.As(err, &se) || !strings.Contains(se.Message, "copied") {
		t.Errorf("GET of an object copied at the store from another bucket: %v names no copy", err)
	}
}
