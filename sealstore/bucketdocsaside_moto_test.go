package sealstore

import (
	"bytes"
	"net/http"
	"net/url"
	"testing"

	"github.com/s3seal/s3seal/backend"
)

// TestBucketDocsSetAsideForLockConfigOnMoto: moto refuses an Object Lock
// configuration on a bucket holding any object, s3seal's owner document
// included. WithoutBucketDocs runs the change with the documents out
// (another process meanwhile waits: SlowDown) and puts them back, readable and not locked by the default retention the
// change set (DeleteBucket still removes them); with a client object in
// the bucket it does not run the change, and takes nothing out.
func TestBucketDocsSetAsideForLockConfigOnMoto(t *testing.T) {
	f := motoFixture(t)
	s3c := f.be.Store.(*backend.S3)
	owner := []byte(`{"id":"someone"}`)
	if err := f.st.PutBucketDoc(f.ctx, bucket, "owner", owner); err != nil {
		t.Fatal(err)
	}
	f.enableVersioning(t)
	lockConf := backend.RawRequest{Method: http.MethodPut, Bucket: bucket, Query: url.Values{"object-lock": {""}},
		Body: []byte(`<ObjectLockConfiguration xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><ObjectLockEnabled>Enabled</ObjectLockEnabled>` +
			`<Rule><DefaultRetention><Mode>COMPLIANCE</Mode><Days>1</Days></DefaultRetention></Rule></ObjectLockConfiguration>`)}
	if _, err := s3c.Forward(f.ctx, lockConf); backend.ErrorCode(err) != "InvalidBucket" {
		t.Fatalf("moto took a lock configuration on a bucket holding the owner document (%v): the test proves nothing", err)
	}
	seen := -1
	// Another process in front of moto, which stamps every upload with
	// one date of 2010: it finds the marker fresh and waits.
	other, _ := New(Direct(f.be), f.kr, Options{SpoolDir: t.TempDir()})
	var otherErr error
	ran, err := f.st.WithoutBucketDocs(f.ctx, bucket, func() error {
		seen = len(f.reservedVersions(t, ""))
		_, otherErr = other.BucketDocs(f.ctx, bucket)
		_, err := s3c.Forward(f.ctx, lockConf)
		return err
	})
	if code := isCode(otherErr, "SlowDown"); !code {
		t.Errorf("another process reading the documents while they were out: %v, want SlowDown", otherErr)
	}
	if !ran || err != nil || seen != 0 {
		t.Fatalf("WithoutBucketDocs: ran %v, %v; the change saw %d versions, want 0", ran, err, seen)
	}
	fresh, _ := New(Direct(f.be), f.kr, Options{SpoolDir: t.TempDir()})
	if d, ok, err := fresh.BucketDoc(f.ctx, bucket, "owner"); !ok || err != nil || !bytes.Equal(d, owner) {
		t.Fatalf("owner document after: %q %v %v", d, ok, err)
	}
	// An object record (an ACL s3seal keeps for an object) is no bucket
	// document, and would not be put back: the change is not run.
	if err := f.st.PutObjectRecord(f.ctx, bucket, "k", "", Record{For: "c1", Body: []byte("<AccessControlPolicy/>")}); err != nil {
		t.Fatal(err)
	}
	ran, err = f.st.WithoutBucketDocs(f.ctx, bucket, func() error { t.Error("the change ran in a bucket with an object record"); return nil })
	if ran || err != nil {
		t.Fatalf("with an object record: ran %v, %v", ran, err)
	}
	if _, ok, err := f.st.ObjectRecord(f.ctx, bucket, "k", ""); !ok || err != nil {
		t.Fatalf("object record after a change not run: %v %v", ok, err)
	}
	if err := f.st.DeleteObjectRecord(f.ctx, bucket, "k", ""); err != nil {
		t.Fatal(err)
	}
	// A client object: the change is not run, the documents stay.
	f.put(t, "client", []byte("x"))
	ran, err = f.st.WithoutBucketDocs(f.ctx, bucket, func() error { t.Error("the change ran in a bucket with a client object"); return nil })
	if ran || err != nil {
		t.Fatalf("with a client object: ran %v, %v", ran, err)
	}
	if _, ok, err := fresh.BucketDoc(f.ctx, bucket, "owner"); !ok || err != nil {
		t.Fatalf("owner document after a change not run: %v %v", ok, err)
	}
	// Not locked by the COMPLIANCE default: s3seal can remove it.
	if err := f.st.DeleteBucketDoc(f.ctx, bucket, "owner"); err != nil {
		t.Fatal(err)
	}
	vs, err := f.st.keyVersions(f.ctx, bucket, BucketDocPrefix+"owner")
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range vs {
		if _, err := f.be.DeleteObjectVersion(f.ctx, backend.DeleteInput{Bucket: bucket, Key: v.Key, VersionID: v.VersionID}); err != nil {
			t.Fatalf("removing the put-back document's version %s: %v", v.VersionID, err)
		}
	}
}
