package sealstore

import (
	"testing"
)

// TestConditionalDeleteOfGoneVersion: a conditional delete of a version
// that no longer exists succeeds with nothing deleted, as S3 answers it
// (s3-tests test_delete_object_version_if_match_size); a condition that
// fails on an existing version is still 412 and deletes nothing.
func TestConditionalDeleteOfGoneVersion(t *testing.T) {
	f := newFixture(t)
	f.enableVersioning(t)
	v := f.put(t, "k", []byte("data"))
	bad := &DeleteCondition{Size: 9999}
	if _, err := f.st.DeleteVersion(f.ctx, DeleteInput{Bucket: bucket, Key: "k", VersionID: v.VersionID, Cond: bad}); errorCode(err) != "PreconditionFailed" {
		t.Fatalf("wrong size: %v", err)
	}
	out, err := f.st.DeleteVersion(f.ctx, DeleteInput{Bucket: bucket, Key: "k", VersionID: v.VersionID, Cond: &DeleteCondition{Size: 4}})
	if err != nil || out.DeleteMarker || out.VersionID != v.VersionID {
		t.Fatalf("matching size: %+v, %v", out, err)
	}
	out, err = f.st.DeleteVersion(f.ctx, DeleteInput{Bucket: bucket, Key: "k", VersionID: v.VersionID, Cond: bad})
	if err != nil || out.VersionID != v.VersionID {
		t.Fatalf("gone version: %+v, %v; want success", out, err)
	}
}
