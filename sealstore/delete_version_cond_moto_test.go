package sealstore

import (
	"testing"
	"time"
)

// TestConditionalDeleteOfOlderVersionOnMoto: a conditional delete
// (x-amz-if-match-size, -last-modified-time, If-Match) of a version by id
// that is not the current one deletes it when the condition holds on that
// version, and fails PreconditionFailed when not, whatever the current
// version is. moto checks an If-Match sent with a version id against the
// current object, so the store must not be asked to check one there: a
// version with an id of its own never changes.
func TestConditionalDeleteOfOlderVersionOnMoto(t *testing.T) {
	f := motoFixture(t)
	f.enableVersioning(t)
	older := f.put(t, "k", []byte("older"))
	current := f.put(t, "k", []byte("the current version"))
	info, err := f.st.HeadVersion(f.ctx, bucket, "k", older.VersionID)
	if err != nil {
		t.Fatal(err)
	}
	del := func(c DeleteCondition) error {
		_, err := f.st.DeleteVersion(f.ctx, DeleteInput{Bucket: bucket, Key: "k", VersionID: older.VersionID, Cond: &c})
		return err
	}
	if err := del(DeleteCondition{Size: -1, LastModified: time.Date(2015, 1, 1, 0, 0, 0, 0, time.UTC)}); errorCode(err) != "PreconditionFailed" {
		t.Fatalf("a time that does not match: %v, want PreconditionFailed", err)
	}
	// Each condition is made from the older version the iteration deletes:
	// a map's order is random, and a version put again has a time of its
	// own (the same second, most of the time).
	for name, cond := range map[string]func() DeleteCondition{
		"time":     func() DeleteCondition { return DeleteCondition{Size: -1, LastModified: info.LastModified} },
		"size":     func() DeleteCondition { return DeleteCondition{Size: 5} },
		"If-Match": func() DeleteCondition { return DeleteCondition{IfMatch: []string{older.ETag}, Size: -1} },
	} {
		if err := del(cond()); err != nil {
			t.Fatalf("%s matching the older version: %v, want it deleted", name, err)
		}
		if _, err := f.st.HeadVersion(f.ctx, bucket, "k", older.VersionID); errorCode(err) != "NoSuchVersion" && errorCode(err) != "NotFound" {
			t.Fatalf("%s: the older version after its delete: %v, want it gone", name, err)
		}
		older = f.put(t, "k", []byte("older"))
		if info, err = f.st.HeadVersion(f.ctx, bucket, "k", older.VersionID); err != nil {
			t.Fatal(err)
		}
		if current = f.put(t, "k", []byte("the current version")); current.VersionID == "" {
			t.Fatal("no version id")
		}
	}
	if _, got, err := f.get(t, "k", nil); err != nil || string(got) != "the current version" {
		t.Fatalf("the current version: %q, %v", got, err)
	}
}
