package sealstore

import (
	"bytes"
	"strings"
	"testing"
)

// A write's record is written by the write itself, bound to the content
// it made: a PUT or copy with a record leaves it for exactly that
// content; one without drops the key's record; an upload's record waits
// until its completion gives it to the object it made, or its abort
// drops it.

func recordOf(t *testing.T, f *fixture, key string) (Record, bool) {
	t.Helper()
	r, ok, err := f.st.ObjectRecord(f.ctx, bucket, key, "")
	if err != nil {
		t.Fatal(err)
	}
	return r, ok
}

func TestWriteKeepsItsRecordForItsContent(t *testing.T) {
	f := newFixture(t)
	if on, err := f.st.HasObjectRecords(f.ctx, bucket); err != nil || on {
		t.Fatalf("a new bucket has records: %v %v", on, err)
	}
	info, err := f.st.Put(f.ctx, PutInput{Bucket: bucket, Key: "k", Body: strings.NewReader("one"), Size: 3,
		Record: &RecordWrite{Body: []byte("acl one")}})
	if err != nil {
		t.Fatal(err)
	}
	r, ok := recordOf(t, f, "k")
	if !ok || r.For != info.ContentID() || string(r.Body) != "acl one" {
		t.Fatalf("record after the PUT: %+v %v, want acl one for %s", r, ok, info.ContentID())
	}
	if on, err := f.st.HasObjectRecords(f.ctx, bucket); err != nil || !on {
		t.Fatalf("the bucket is not flagged after its first record: %v %v", on, err)
	}
	copied, err := f.st.Copy(f.ctx, CopyInput{SrcBucket: bucket, SrcKey: "k", Bucket: bucket, Key: "c",
		Record: &RecordWrite{Body: []byte("acl of the copy")}})
	if err != nil {
		t.Fatal(err)
	}
	if r, ok := recordOf(t, f, "c"); !ok || r.For != copied.ContentID() || string(r.Body) != "acl of the copy" {
		t.Fatalf("record after the copy: %+v %v", r, ok)
	}
	if _, err := f.st.Put(f.ctx, PutInput{Bucket: bucket, Key: "k", Body: strings.NewReader("two"), Size: 3, Record: &RecordWrite{}}); err != nil {
		t.Fatal(err)
	}
	if r, ok := recordOf(t, f, "k"); ok {
		t.Fatalf("an overwrite with the default ACL left the record %+v", r)
	}
	// A write that says nothing of records (a tool's) leaves them be.
	if _, err := f.st.Put(f.ctx, PutInput{Bucket: bucket, Key: "c", Body: strings.NewReader("x"), Size: 1}); err != nil {
		t.Fatal(err)
	}
	if _, ok := recordOf(t, f, "c"); !ok {
		t.Fatalf("a write without a RecordWrite dropped the record")
	}
}

func TestUploadRecordMovesToItsObject(t *testing.T) {
	f := newFixture(t)
	upload := func(rec *RecordWrite) string {
		id, err := f.st.CreateMultipart(f.ctx, CreateMultipartInput{Bucket: bucket, Key: "mp", Record: rec})
		if err != nil {
			t.Fatal(err)
		}
		return id
	}
	var partETag string
	complete := func(id string) ObjectInfo {
		data := bytes.Repeat([]byte("p"), 10)
		pi, err := f.st.UploadPart(f.ctx, UploadPartInput{Bucket: bucket, Key: "mp", UploadID: id, PartNumber: 1, Body: bytes.NewReader(data), Size: int64(len(data))})
		if err != nil {
			t.Fatal(err)
		}
		partETag = pi.ETag
		info, err := f.st.CompleteMultipart(f.ctx, CompleteInput{Bucket: bucket, Key: "mp", UploadID: id, ExpectSize: -1,
			Parts: []CompletePart{{PartNumber: 1, ETag: pi.ETag}}})
		if err != nil {
			t.Fatal(err)
		}
		return info
	}
	id := upload(&RecordWrite{Body: []byte("initiator's acl")})
	if r, ok := recordOf(t, f, UploadRecordKey(id)); !ok || string(r.Body) != "initiator's acl" {
		t.Fatalf("pending record: %+v %v", r, ok)
	}
	info := complete(id)
	if r, ok := recordOf(t, f, "mp"); !ok || r.For != info.ContentID() || string(r.Body) != "initiator's acl" {
		t.Fatalf("record of the completed object: %+v %v, want the initiator's for %s", r, ok, info.ContentID())
	}
	if r, ok := recordOf(t, f, UploadRecordKey(id)); ok {
		t.Fatalf("the pending record outlived its completion: %+v", r)
	}
	// A completion repeated (a client's retry on another replica) keeps
	// the record the first gave this content.
	again, err := f.st.CompleteMultipart(f.ctx, CompleteInput{Bucket: bucket, Key: "mp", UploadID: id, ExpectSize: -1,
		Parts: []CompletePart{{PartNumber: 1, ETag: partETag}}})
	if err != nil {
		t.Fatalf("a repeated completion: %v", err)
	}
	if r, ok := recordOf(t, f, "mp"); !ok || r.For != again.ContentID() || again.ContentID() != info.ContentID() {
		t.Fatalf("a repeated completion dropped the record: %+v %v", r, ok)
	}
	// An upload with the default ACL gives its object none.
	complete(upload(&RecordWrite{}))
	if r, ok := recordOf(t, f, "mp"); ok {
		t.Fatalf("an upload with the default ACL completed with the record %+v", r)
	}
	// An abort drops the pending record.
	id = upload(&RecordWrite{Body: []byte("never")})
	if err := f.st.AbortMultipart(f.ctx, bucket, "mp", id); err != nil {
		t.Fatal(err)
	}
	if r, ok := recordOf(t, f, UploadRecordKey(id)); ok {
		t.Fatalf("the pending record outlived its abort: %+v", r)
	}
}

// A pending record left under an upload id by another upload (a store
// that gave the id again after aborting the first upload around s3seal)
// never reaches the object a later upload of that id makes: a new upload
// without a record drops it, and a completion takes only a record bound
// to the content it made.
func TestPendingRecordOfAnotherUploadIsNotTaken(t *testing.T) {
	f := newFixture(t)
	if err := f.st.PutObjectRecord(f.ctx, bucket, "flag", "", Record{For: "x", Body: []byte("y")}); err != nil {
		t.Fatal(err)
	}
	id, err := f.st.CreateMultipart(f.ctx, CreateMultipartInput{Bucket: bucket, Key: "mp", Record: &RecordWrite{}})
	if err != nil {
		t.Fatal(err)
	}
	// Another upload's record under this id, bound to that upload's
	// content, as the store-side abort left it; and one in the form
	// records had when they were bound to the upload id.
	for _, stale := range []string{uploadContent("0123456789abcdef0123456789abcdef"), "upload:" + id} {
		if err := f.st.PutObjectRecord(f.ctx, bucket, UploadRecordKey(id), "", Record{For: stale, Body: []byte("bob's public-read")}); err != nil {
			t.Fatal(err)
		}
		data := bytes.Repeat([]byte("p"), 10)
		pi, err := f.st.UploadPart(f.ctx, UploadPartInput{Bucket: bucket, Key: "mp", UploadID: id, PartNumber: 1, Body: bytes.NewReader(data), Size: int64(len(data))})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.st.CompleteMultipart(f.ctx, CompleteInput{Bucket: bucket, Key: "mp", UploadID: id, ExpectSize: -1,
			Parts: []CompletePart{{PartNumber: 1, ETag: pi.ETag}}}); err != nil {
			t.Fatal(err)
		}
		if r, ok := recordOf(t, f, "mp"); ok {
			t.Fatalf("the completion took another upload's record (bound to %q): %+v", stale, r)
		}
		if id, err = f.st.CreateMultipart(f.ctx, CreateMultipartInput{Bucket: bucket, Key: "mp", Record: &RecordWrite{}}); err != nil {
			t.Fatal(err)
		}
	}
	// A new upload without a record drops what an earlier one left.
	if err := f.st.PutObjectRecord(f.ctx, bucket, UploadRecordKey("reused"), "", Record{For: uploadContent("00"), Body: []byte("old")}); err != nil {
		t.Fatal(err)
	}
	if err := f.st.keepPendingRecord(f.ctx, bucket, "reused", "11", true, &RecordWrite{}); err != nil {
		t.Fatal(err)
	}
	if r, ok := recordOf(t, f, UploadRecordKey("reused")); ok {
		t.Fatalf("a new upload without a record kept an earlier upload's: %+v", r)
	}
}
