package sealstore

// What a completion takes for its success when the store's answer does not
// say (completedDespiteStoreAnswer): only the object of its own upload,
// made of its own parts.

import (
	"bytes"
	"context"
	"io"
	"testing"

	"github.com/s3seal/s3seal/backend"
)

// refusingStore answers the completion of one upload id with a set error
// (before the store sees it); everything else goes to the store below.
type refusingStore struct {
	*nmStore
	uploadID string
	err      error
}

func (s *refusingStore) CompleteMultipartUpload(ctx context.Context, in backend.CompleteMultipartInput) (backend.CompleteMultipartOutput, error) {
	if in.UploadID == s.uploadID {
		return backend.CompleteMultipartOutput{}, s.err
	}
	return s.nmStore.CompleteMultipartUpload(ctx, in)
}

// On a store whose ETags are not S3's, a completion whose store answer is
// NoSuchUpload, or lost (a 500), while another upload's object of the same
// size sits at the key is not told success: NoSuchUpload, or the store's
// error. That object carries another object id, so it is not this
// completion's, though this upload has no other manifest that could tell
// it apart by its parts.
func TestCompletionRefusedIsNotAnotherUploadsObject(t *testing.T) {
	for _, storeErr := range []*backend.Error{
		{Op: "CompleteMultipartUpload", Code: "NoSuchUpload", StatusCode: 404, Message: "The specified upload does not exist."},
		{Op: "CompleteMultipartUpload", Code: "InternalError", StatusCode: 500, Message: "We encountered an internal error. Please try again."},
	} {
		name := storeErr.Code
		t.Run(name, func(t *testing.T) {
			f := newFixture(t)
			w := &refusingStore{nmStore: &nmStore{Store: f.be}, err: storeErr}
			st, err := New(Direct(w), f.kr, Options{SpoolDir: t.TempDir(), BackendChecksum: true})
			if err != nil {
				t.Fatal(err)
			}
			f.st = st
			mine, other := f.create(t, "obj"), f.create(t, "obj")
			w.uploadID = mine
			m1, m2 := f.part(t, st, "obj", mine, 1, randBytes(5*mib, 1)), f.part(t, st, "obj", mine, 2, randBytes(1000, 2))
			o1data, o2data := randBytes(5*mib, 3), randBytes(1000, 4)
			o1, o2 := f.part(t, st, "obj", other, 1, o1data), f.part(t, st, "obj", other, 2, o2data)
			otherInfo, err := st.CompleteMultipart(f.ctx, CompleteInput{ExpectSize: -1, Bucket: bucket, Key: "obj", UploadID: other,
				Parts: completeParts([]int{1, 2}, []string{o1.ETag, o2.ETag})})
			if err != nil {
				t.Fatalf("the other upload's completion: %v", err)
			}
			info, err := st.CompleteMultipart(f.ctx, CompleteInput{ExpectSize: -1, Bucket: bucket, Key: "obj", UploadID: mine,
				Parts: completeParts([]int{1, 2}, []string{m1.ETag, m2.ETag})})
			if want := storeErr.Code; !isCode(err, want) && backend.ErrorCode(err) != want {
				t.Fatalf("completion: ETag %q, %v; want %s (the object at the key, ETag %s, is the other upload's)", info.ETag, err, want, otherInfo.ETag)
			}
			fresh, _ := New(Direct(w), f.kr, Options{SpoolDir: t.TempDir()})
			if _, got, err := f.getWith(fresh, "obj"); err != nil || !bytes.Equal(got, append(o1data, o2data...)) {
				t.Fatalf("the other upload's object no longer reads: %v", errStr(err))
			}
		})
	}
}

// On a store with S3's ETags, completedDespiteStoreAnswer refuses the
// object of this very upload (its object id, its size) when its ETag is
// not the one these parts give: a completion with parts 1,2 does not take
// the object made of parts 1,3 (part 3 the size of part 2) for its own.
func TestCompletedDespiteStoreAnswerRefusesOtherPartsETag(t *testing.T) {
	f := newFixture(t)
	id := f.create(t, "obj")
	e1, e2, e3 := f.part(t, f.st, "obj", id, 1, randBytes(5*mib, 1)), f.part(t, f.st, "obj", id, 2, randBytes(1000, 2)), f.part(t, f.st, "obj", id, 3, randBytes(1000, 3))
	u, err := f.st.loadUpload(f.ctx, bucket, "obj", id)
	if err != nil {
		t.Fatal(err)
	}
	cur, _, _, err := f.st.currentParts(f.ctx, u, []uint32{1, 2, 3})
	if err != nil {
		t.Fatal(err)
	}
	p12, p13 := completeParts([]int{1, 2}, []string{e1.ETag, e2.ETag}), completeParts([]int{1, 3}, []string{e1.ETag, e3.ETag})
	m12, b12, err := buildManifest(p12, cur, f.st.opt.minPartSize)
	if err != nil {
		t.Fatal(err)
	}
	m13, b13, err := buildManifest(p13, cur, f.st.opt.minPartSize)
	if err != nil {
		t.Fatal(err)
	}
	if m12.CipherSize() != m13.CipherSize() {
		t.Fatalf("set-up: the two part lists make objects of sizes %d and %d", m12.CipherSize(), m13.CipherSize())
	}
	name12, name13 := manifestName(b12), manifestName(b13)
	if !standardETag(name12) || !standardETag(name13) || name12 == name13 {
		t.Fatalf("set-up: names %q and %q", name12, name13)
	}
	if _, err := f.st.CompleteMultipart(f.ctx, CompleteInput{ExpectSize: -1, Bucket: bucket, Key: "obj", UploadID: id, Parts: p13}); err != nil {
		t.Fatal(err)
	}
	if out, ok, err := f.st.completedDespiteStoreAnswer(f.ctx, u, m13, name13); err != nil || !ok || out.ETag != name13 {
		t.Fatalf("parts 1,3 (the object's own): %+v, %v, %v; want the object, ETag %s", out, ok, err, name13)
	}
	if out, ok, err := f.st.completedDespiteStoreAnswer(f.ctx, u, m12, name12); err != nil || ok {
		t.Fatalf("parts 1,2: %+v, %v, %v; want not this completion's object (its ETag is %s, these parts give %s)", out, ok, err, name13, name12)
	}
}

// A completion that finds no records of its parts (InvalidPart) and its
// upload gone at the store is told success only for its own upload's
// object: here the upload was aborted between its listings and another
// upload completed the key with the very same part (same number, same
// plaintext ETag). That object carries another object id: not this
// completion's.
func TestCompletionWithoutRecordsIsNotAnotherUploadsObject(t *testing.T) {
	f := newFixture(t)
	data := randBytes(1000, 41)
	mine, other := f.create(t, "obj"), f.create(t, "obj")
	e := f.part(t, f.st, "obj", mine, 1, data)
	o := f.part(t, f.st, "obj", other, 1, data)
	if e.ETag != o.ETag {
		t.Fatalf("set-up: the same part has ETags %s and %s", e.ETag, o.ETag)
	}
	var hookErr error
	hb := &hookList{Store: f.be, hook: func() {
		if hookErr = f.st.AbortMultipart(f.ctx, bucket, "obj", mine); hookErr != nil {
			return
		}
		_, hookErr = f.st.CompleteMultipart(f.ctx, CompleteInput{ExpectSize: -1, Bucket: bucket, Key: "obj", UploadID: other,
			Parts: completeParts([]int{1}, []string{o.ETag})})
	}}
	pb, _ := New(Direct(hb), f.kr, Options{SpoolDir: t.TempDir()})
	info, err := pb.CompleteMultipart(f.ctx, CompleteInput{ExpectSize: -1, Bucket: bucket, Key: "obj", UploadID: mine,
		Parts: completeParts([]int{1}, []string{e.ETag})})
	if hookErr != nil {
		t.Fatalf("abort, then the other upload's completion: %v", hookErr)
	}
	if !isCode(err, "InvalidPart") || info.CompletedElsewhere {
		t.Fatalf("completion of the aborted upload: ETag %q, %v; want InvalidPart (its part records are gone; the object at the key is the other upload's)", info.ETag, err)
	}
}

// completionAnswerLost completes uploads, then answers the completion with a
// set error, as when the store's answer is lost after it did the work.
type completionAnswerLost struct {
	backend.Store
	err error
}

func (s *completionAnswerLost) CompleteMultipartUpload(ctx context.Context, in backend.CompleteMultipartInput) (backend.CompleteMultipartOutput, error) {
	if _, err := s.Store.CompleteMultipartUpload(ctx, in); err != nil {
		return backend.CompleteMultipartOutput{}, err
	}
	return backend.CompleteMultipartOutput{}, s.err
}

// A completion the store performed but answered with a 500, or whose
// answer never came, is the completion's success: the object at the key
// is this upload's, made of its parts.
func TestCompletionWithLostAnswerSucceeds(t *testing.T) {
	for name, lost := range map[string]error{
		"500":       &backend.Error{Op: "CompleteMultipartUpload", Code: "InternalError", StatusCode: 500, Message: "We encountered an internal error. Please try again."},
		"no answer": io.ErrUnexpectedEOF,
	} {
		t.Run(name, func(t *testing.T) {
			f := newFixture(t)
			st, err := New(Direct(&completionAnswerLost{Store: f.be, err: lost}), f.kr, Options{SpoolDir: t.TempDir(), BackendChecksum: true})
			if err != nil {
				t.Fatal(err)
			}
			f.st = st
			p1, p2 := randBytes(5*mib, 1), randBytes(1000, 2)
			id := f.create(t, "obj")
			e1, e2 := f.part(t, st, "obj", id, 1, p1), f.part(t, st, "obj", id, 2, p2)
			info, err := st.CompleteMultipart(f.ctx, CompleteInput{ExpectSize: -1, Bucket: bucket, Key: "obj", UploadID: id,
				Parts: completeParts([]int{1, 2}, []string{e1.ETag, e2.ETag})})
			if err != nil || info.ETag != mpETag(p1, p2) {
				t.Fatalf("completion: ETag %q, %v; want %s (the store completed the upload)", info.ETag, err, mpETag(p1, p2))
			}
			fresh, _ := New(Direct(f.be), f.kr, Options{SpoolDir: t.TempDir()})
			if _, got, err := f.getWith(fresh, "obj"); err != nil || !bytes.Equal(got, append(p1, p2...)) {
				t.Fatalf("the object does not read back: %v", errStr(err))
			}
		})
	}
}
