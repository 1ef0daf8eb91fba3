package sealstore

import (
	"testing"
)

// S3 answers a CompleteMultipartUpload repeated after its success (a
// client that lost the first answer, s3-tests' test_multipart_upload) with
// the same object, not NoSuchUpload. Only the same upload id with the same
// parts is that repeat: other parts, another upload id, or a key since
// overwritten are NoSuchUpload.
func TestCompleteRepeatedAfterSuccess(t *testing.T) {
	testCompleteRepeated(t, newFixture(t))
}

// The same over moto, a store with S3's own multipart state.
func TestCompleteRepeatedAfterSuccessMoto(t *testing.T) {
	testCompleteRepeated(t, motoFixture(t))
}

func testCompleteRepeated(t *testing.T, f *fixture) {
	p1, p2 := randBytes(5*mib, 11), randBytes(7, 12)
	id := f.create(t, "again")
	e1, e2 := f.part(t, f.st, "again", id, 1, p1), f.part(t, f.st, "again", id, 2, p2)
	parts := completeParts([]int{1, 2}, []string{e1.ETag, e2.ETag})
	in := CompleteInput{ExpectSize: -1, Bucket: bucket, Key: "again", UploadID: id, Parts: parts}
	first, err := f.st.CompleteMultipart(f.ctx, in)
	if err != nil {
		t.Fatal(err)
	}
	// The same process, and another one (a restart) with nothing cached.
	fresh, err := New(Direct(f.be), f.kr, Options{SpoolDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	for i, st := range []*Store{f.st, fresh} {
		again, err := st.CompleteMultipart(f.ctx, in)
		if err != nil || again.ETag != first.ETag || again.Size != first.Size {
			t.Fatalf("store %d: repeat: %+v, %v; want ETag %s size %d", i, again, err, first.ETag, first.Size)
		}
	}
	if keys := f.reservedKeys(t, uploadsPrefix); len(keys) != 0 {
		t.Fatalf("upload state came back: %v", keys)
	}

	for name, c := range map[string]CompleteInput{
		"fewer parts":  {ExpectSize: -1, Bucket: bucket, Key: "again", UploadID: id, Parts: parts[:1]},
		"other etag":   {ExpectSize: -1, Bucket: bucket, Key: "again", UploadID: id, Parts: completeParts([]int{1, 2}, []string{e1.ETag, e1.ETag})},
		"other upload": {ExpectSize: -1, Bucket: bucket, Key: "again", UploadID: id + "x", Parts: parts},
		"other key":    {ExpectSize: -1, Bucket: bucket, Key: "again2", UploadID: id, Parts: parts},
	} {
		if _, err := fresh.CompleteMultipart(f.ctx, c); !isCode(err, "NoSuchUpload") {
			t.Errorf("%s: %v, want NoSuchUpload", name, err)
		}
	}

	// Once another upload has completed at the key, the old id is over.
	id2 := f.create(t, "again")
	f2 := f.part(t, f.st, "again", id2, 1, p2)
	if _, err := f.st.CompleteMultipart(f.ctx, CompleteInput{ExpectSize: -1, Bucket: bucket, Key: "again", UploadID: id2,
		Parts: completeParts([]int{1}, []string{f2.ETag})}); err != nil {
		t.Fatal(err)
	}
	if _, err := fresh.CompleteMultipart(f.ctx, in); !isCode(err, "NoSuchUpload") {
		t.Errorf("after another upload: %v, want NoSuchUpload", err)
	}
}
