package sealstore

import (
	"testing"
	"time"
)

// TestConditionalDeleteMissingOnMoto: AWS documents that a delete with
// x-amz-if-match-size or x-amz-if-match-last-modified-time of an object
// that does not exist is 204; If-Match on it stays NoSuchKey; a missing
// bucket stays NoSuchBucket; a delete marker has no size or time to
// match, so such a condition on it fails.
func TestConditionalDeleteMissingOnMoto(t *testing.T) {
	f := motoFixture(t)
	size := &DeleteCondition{Size: 9999}
	when := &DeleteCondition{Size: -1, LastModified: time.Date(2015, 1, 1, 0, 0, 0, 0, time.UTC)}
	for name, c := range map[string]*DeleteCondition{"size": size, "time": when} {
		if _, err := f.st.DeleteVersion(f.ctx, DeleteInput{Bucket: bucket, Key: "never", Cond: c}); err != nil {
			t.Errorf("%s condition on a missing key: %v, want success", name, err)
		}
	}
	if _, err := f.st.DeleteVersion(f.ctx, DeleteInput{Bucket: bucket, Key: "never", Cond: &DeleteCondition{IfMatch: []string{"*"}, Size: -1}}); errorCode(err) != "NoSuchKey" {
		t.Errorf("If-Match on a missing key: %v, want NoSuchKey", err)
	}
	if _, err := f.st.DeleteVersion(f.ctx, DeleteInput{Bucket: "no-such-bucket-e3", Key: "k", Cond: size}); errorCode(err) != "NoSuchBucket" {
		t.Errorf("missing bucket: %v, want NoSuchBucket", err)
	}

	f.enableVersioning(t)
	info := f.put(t, "k", []byte("data"))
	in := DeleteInput{Bucket: bucket, Key: "k", VersionID: info.VersionID, Cond: &DeleteCondition{Size: 4}}
	if _, err := f.st.DeleteVersion(f.ctx, in); err != nil {
		t.Fatalf("matching size by version: %v", err)
	}
	in.Cond = size
	if out, err := f.st.DeleteVersion(f.ctx, in); err != nil || out.VersionID != info.VersionID {
		t.Errorf("size condition on a deleted version: %+v, %v, want success naming it", out, err)
	}
	f.put(t, "k", []byte("data"))
	if _, err := f.st.DeleteVersion(f.ctx, DeleteInput{Bucket: bucket, Key: "k", Cond: &DeleteCondition{Size: 4}}); err != nil {
		t.Fatalf("matching size: %v", err)
	}
	if _, err := f.st.DeleteVersion(f.ctx, DeleteInput{Bucket: bucket, Key: "k", Cond: size}); errorCode(err) != "PreconditionFailed" {
		t.Errorf("size condition on a delete marker: %v, want PreconditionFailed", err)
	}
}
