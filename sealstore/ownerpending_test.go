package sealstore

import (
	"testing"
	"time"
)

// A bucket the store made moments ago without an owner document is one
// whose CreateBucket is keeping its owner, in this process or another:
// BucketDocs answers SlowDown rather than a bucket without an owner
// (decided by the credential lists alone), until the owner is kept; what
// a write keeps besides its object still reads its documents. An older
// bucket without an owner is one from before owners.
func TestYoungBucketWithoutOwnerIsPending(t *testing.T) {
	f := newFixtureWith(t, Options{OwnerPendingAge: time.Hour})
	if _, err := f.st.BucketDocs(f.ctx, bucket); !isCode(err, "SlowDown") {
		t.Fatalf("documents of a bucket made a moment ago without an owner: %v, want SlowDown", err)
	}
	if on, err := f.st.HasObjectRecords(f.ctx, bucket); err != nil || on {
		t.Fatalf("HasObjectRecords of the young bucket: %v %v, want false without an error", on, err)
	}
	if err := f.st.CreateBucketDoc(f.ctx, bucket, "owner", []byte(`{"id":"a11ce"}`)); err != nil {
		t.Fatalf("keeping the young bucket's owner: %v", err)
	}
	docs, err := f.st.BucketDocs(f.ctx, bucket)
	if err != nil || string(docs["owner"]) != `{"id":"a11ce"}` {
		t.Fatalf("documents once the owner is kept: %q %v", docs, err)
	}
	old := newFixtureWith(t, Options{OwnerPendingAge: time.Nanosecond})
	if docs, err := old.st.BucketDocs(old.ctx, bucket); err != nil || len(docs) != 0 {
		t.Fatalf("documents of an older bucket without an owner: %q %v, want none", docs, err)
	}
}
