package sealstore

import (
	"bytes"
	"errors"
	"io"
	"testing"
)

// TestObjectRecordBoundToContent: a record keeps the content it was
// written for; one that names none (written before records were bound)
// is no record; a record must name some content.
func TestObjectRecordBoundToContent(t *testing.T) {
	f := newFixture(t)
	info := f.put(t, "k", []byte("v1"))
	if err := f.st.PutObjectRecord(f.ctx, bucket, "k", "", Record{For: info.ContentID(), Body: []byte("<acl/>")}); err != nil {
		t.Fatal(err)
	}
	r, ok, err := f.st.ObjectRecord(f.ctx, bucket, "k", "")
	if err != nil || !ok || r.For != info.ContentID() || string(r.Body) != "<acl/>" {
		t.Fatalf("record read back: %+v %v %v", r, ok, err)
	}
	if err := f.st.PutObjectRecord(f.ctx, bucket, "k", "", Record{Body: []byte("<acl/>")}); err == nil {
		t.Errorf("a record bound to no content was kept")
	}
	// A record as s3seal wrote them before they were bound.
	legacy := []byte("<AccessControlPolicy/>")
	if _, err := f.st.put(f.ctx, PutInput{Bucket: bucket, Key: objectRecordKey("k", ""), Body: bytes.NewReader(legacy), Size: int64(len(legacy))}); err != nil {
		t.Fatal(err)
	}
	if r, ok, err := f.st.ObjectRecord(f.ctx, bucket, "k", ""); err != nil || ok {
		t.Errorf("a record bound to no content: %+v %v %v, want none", r, ok, err)
	}
}

// TestContentIDPerWrite: every write is content of its own, and a read,
// a HEAD or a copy asked for one content refuses any other under the
// name (ErrContentChanged), returning nothing of it.
func TestContentIDPerWrite(t *testing.T) {
	f := newFixture(t)
	first := f.put(t, "k", []byte("same bytes"))
	again := f.put(t, "k", []byte("same bytes"))
	if first.ContentID() == "" || first.ContentID() == again.ContentID() {
		t.Fatalf("content ids of two writes of the same bytes: %q and %q", first.ContentID(), again.ContentID())
	}
	head, err := f.st.Head(f.ctx, bucket, "k")
	if err != nil || head.ContentID() != again.ContentID() {
		t.Fatalf("HEAD's content id %q (%v), want the last write's %q", head.ContentID(), err, again.ContentID())
	}
	info, rd, err := f.st.Read(f.ctx, ReadInput{Bucket: bucket, Key: "k", ContentID: again.ContentID()})
	if err != nil {
		t.Fatalf("read of the content asked for: %v", err)
	}
	b, _ := io.ReadAll(rd)
	rd.Close()
	if string(b) != "same bytes" || info.ContentID() != again.ContentID() {
		t.Errorf("read %q of %s", b, info.ContentID())
	}
	if _, rd, err := f.st.Read(f.ctx, ReadInput{Bucket: bucket, Key: "k", ContentID: first.ContentID()}); !errors.Is(err, ErrContentChanged) || rd != nil {
		t.Errorf("read asked for the overwritten content: %v (reader %v), want ErrContentChanged", err, rd)
	}
	if _, _, err := f.st.Read(f.ctx, ReadInput{Bucket: bucket, Key: "k", ContentID: first.ContentID(), Range: &Range{First: 0, Last: 3}}); !errors.Is(err, ErrContentChanged) {
		t.Errorf("ranged read asked for the overwritten content: %v, want ErrContentChanged", err)
	}
	if _, err := f.st.Stat(f.ctx, ReadInput{Bucket: bucket, Key: "k", ContentID: first.ContentID()}); !errors.Is(err, ErrContentChanged) {
		t.Errorf("stat asked for the overwritten content: %v, want ErrContentChanged", err)
	}
	if _, err := f.st.Copy(f.ctx, CopyInput{SrcBucket: bucket, SrcKey: "k", SrcContentID: first.ContentID(), Bucket: bucket, Key: "copy"}); !errors.Is(err, ErrContentChanged) {
		t.Errorf("copy asked for the overwritten content: %v, want ErrContentChanged", err)
	}
	if _, err := f.st.Head(f.ctx, bucket, "copy"); err == nil {
		t.Errorf("the refused copy was written")
	}
	if _, err := f.st.Copy(f.ctx, CopyInput{SrcBucket: bucket, SrcKey: "k", SrcContentID: again.ContentID(), Bucket: bucket, Key: "copy"}); err != nil {
		t.Errorf("copy asked for the current content: %v", err)
	}
}
