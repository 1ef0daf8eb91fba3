package sealstore

import (
	"context"
	"testing"

	"github.com/s3seal/s3seal/backend"
)

// racingDeleteStore lets another writer overwrite the key between
// s3seal's HEAD (condition checked) and its backend delete.
type racingDeleteStore struct {
	backend.Store
	before func()
}

func (s *racingDeleteStore) DeleteObjectVersion(ctx context.Context, in backend.DeleteInput) (backend.DeleteOutput, error) {
	if s.before != nil {
		s.before()
		s.before = nil
	}
	return s.Store.(backend.Versions).DeleteObjectVersion(ctx, in)
}

// TestConditionalDeleteRacedByOverwrite: a conditional delete whose
// condition held at its HEAD, raced by an overwrite, fails 412 and leaves
// the new object, in an unversioned and a versioned bucket (moto).
func TestConditionalDeleteRacedByOverwrite(t *testing.T) {
	for _, versioned := range []bool{false, true} {
		f := motoFixture(t)
		if versioned {
			f.enableVersioning(t)
		}
		old := f.put(t, "k", []byte("old"))
		rs := &racingDeleteStore{Store: f.be}
		st, err := New(Direct(rs), f.kr, Options{SpoolDir: t.TempDir()})
		if err != nil {
			t.Fatal(err)
		}
		rs.before = func() { f.put(t, "k", []byte("new, written meanwhile")) }
		_, err = st.DeleteVersion(f.ctx, DeleteInput{Bucket: bucket, Key: "k", Cond: &DeleteCondition{IfMatch: []string{old.ETag}, Size: -1}})
		if se, ok := err.(*Error); !ok || se.Code != "PreconditionFailed" {
			t.Errorf("versioned=%v: conditional delete raced by an overwrite: %v, want PreconditionFailed", versioned, err)
		}
		if _, got, err := f.get(t, "k", nil); err != nil || string(got) != "new, written meanwhile" {
			t.Errorf("versioned=%v: the new object after the raced delete: %q %v", versioned, got, err)
		}
	}
}
