package sealstore

// The upload state as listings cache it, and the states a store may put in
// place of an upload's: another upload's, another bucket's, an earlier
// release's.

import (
	"context"
	"strings"
	"testing"

	"github.com/s3seal/s3seal/backend"
)

// reusingIDs is a hostile store that answers every CreateMultipartUpload
// with the same upload id (an upload id reused after an abort), and takes
// the abort of that id.
type reusingIDs struct {
	backend.Store
	real []string
}

const reusedID = "reused-upload-id"

func (s *reusingIDs) CreateMultipartUpload(ctx context.Context, in backend.CreateMultipartInput) (string, error) {
	id, err := s.Store.CreateMultipartUpload(ctx, in)
	if err != nil {
		return "", err
	}
	s.real = append(s.real, id)
	return reusedID, nil
}

func (s *reusingIDs) AbortMultipartUpload(ctx context.Context, b, k, id string) error {
	if id == reusedID && len(s.real) > 0 {
		id = s.real[len(s.real)-1]
	}
	return s.Store.AbortMultipartUpload(ctx, b, k, id)
}

// TestUploadStateListingCacheReusedUploadID: an upload created with CRC32
// is listed (its settings go to the listing's own cache), aborted, and the
// store hands the same upload id to a new upload of the same key created
// without an algorithm. The process that aborted and created lists the new
// upload's (none): an ended or new upload leaves both its caches.
func TestUploadStateListingCacheReusedUploadID(t *testing.T) {
	f := newFixture(t)
	be := &reusingIDs{Store: f.be}
	st, err := New(Direct(be), f.kr, Options{SpoolDir: t.TempDir(), BackendChecksum: true})
	if err != nil {
		t.Fatal(err)
	}
	other, err := New(Direct(be), f.kr, Options{SpoolDir: t.TempDir(), BackendChecksum: true})
	if err != nil {
		t.Fatal(err)
	}
	const key = "victim"
	id1, err := st.CreateMultipart(f.ctx, CreateMultipartInput{Bucket: bucket, Key: key, ChecksumAlgorithm: "crc32", ChecksumType: "COMPOSITE"})
	if err != nil {
		t.Fatal(err)
	}
	ups := []backend.Upload{{Key: key, UploadID: id1}}
	sums, err := st.UploadChecksums(f.ctx, bucket, ups)
	if err != nil || sums[0] != (UploadChecksum{"crc32", "COMPOSITE"}) {
		t.Fatalf("first listing: %+v %v", sums, err)
	}
	if _, err := other.loadUpload(f.ctx, bucket, key, id1); err != nil { // a part sent through the other process
		t.Fatal(err)
	}
	if err := st.AbortMultipart(f.ctx, bucket, key, id1); err != nil {
		t.Fatal(err)
	}
	id2, err := st.CreateMultipart(f.ctx, CreateMultipartInput{Bucket: bucket, Key: key})
	if err != nil {
		t.Fatal(err)
	}
	if id2 != id1 {
		t.Fatalf("store did not reuse the id: %s %s", id1, id2)
	}
	u, err := st.readUpload(f.ctx, bucket, key, id2)
	if err != nil {
		t.Fatal(err)
	}
	if u.checksumAlg != "" {
		t.Fatalf("new upload's sealed state names %q", u.checksumAlg)
	}
	fresh, _ := New(Direct(be), f.kr, Options{SpoolDir: t.TempDir()})
	if s, _ := fresh.UploadChecksums(f.ctx, bucket, ups); s[0] != (UploadChecksum{}) {
		t.Fatalf("fresh process lists %+v", s[0])
	}
	if s, _ := st.UploadChecksums(f.ctx, bucket, ups); s[0] != (UploadChecksum{}) {
		t.Errorf("the process that aborted and re-created lists the new upload (sealed: no algorithm) with %+v from its listing cache", s[0])
	}
	// A process that did not see the abort keeps the ended upload cached
	// (s3seal takes upload ids as never reused, as S3 makes them): a
	// store that reuses one fails that upload's completion or its reads,
	// which it could do anyway, and never shows one upload's data as
	// another's (FORMAT.md, "Upload state").
	_ = other
}

// TestUploadStateStrippedStateOfAnotherUpload: the store copies upload B's
// state (same key, created without an algorithm) over upload A's (created
// with SHA-256), dropping B's sealed settings so that it reads as an
// earlier release's: its plain upload id is B's, so it is refused.
func TestUploadStateStrippedStateOfAnotherUpload(t *testing.T) {
	f := newFixture(t)
	const key = "k"
	idA, err := f.st.CreateMultipart(f.ctx, CreateMultipartInput{Bucket: bucket, Key: key, ChecksumAlgorithm: "sha256", ChecksumType: "COMPOSITE"})
	if err != nil {
		t.Fatal(err)
	}
	idB, err := f.st.CreateMultipart(f.ctx, CreateMultipartInput{Bucket: bucket, Key: key})
	if err != nil {
		t.Fatal(err)
	}
	bi, err := f.be.HeadObject(f.ctx, bucket, uploadPrefix(bucket, key, idB)+infoName)
	if err != nil {
		t.Fatal(err)
	}
	meta := map[string]string{}
	for k, v := range bi.Meta {
		if k != metaSettings {
			meta[k] = v
		}
	}
	if _, err := f.be.PutObject(f.ctx, backend.PutInput{Bucket: bucket, Key: uploadPrefix(bucket, key, idA) + infoName,
		Body: strings.NewReader(""), Meta: meta}); err != nil {
		t.Fatal(err)
	}
	fresh, err := New(Direct(f.be), f.kr, Options{SpoolDir: t.TempDir(), BackendChecksum: true})
	if err != nil {
		t.Fatal(err)
	}
	ua, err := fresh.readUpload(f.ctx, bucket, key, idA)
	if err != nil {
		return // refused: held
	}
	ub, err := fresh.readUpload(f.ctx, bucket, key, idB)
	if err != nil {
		t.Fatal(err)
	}
	same := ua.env.Metadata()
	for k, v := range ub.env.Metadata() {
		if same[k] != v {
			same = nil
			break
		}
	}
	t.Errorf("upload A (created with sha256) read with B's stripped state: algorithm %q, B's envelope: %v", ua.checksumAlg, same != nil)
}

// TestUploadStateStateOfOtherBucket (held up): the state of an upload with
// the same key and upload id in another bucket, copied whole (sealed
// settings included) or stripped, does not stand for this bucket's.
func TestUploadStateStateOfOtherBucket(t *testing.T) {
	f := newFixture(t)
	const other, key = "otherbucket", "k"
	if err := f.be.CreateBucket(f.ctx, other); err != nil {
		t.Fatal(err)
	}
	be := &reusingIDs{Store: f.be}
	st, err := New(Direct(be), f.kr, Options{SpoolDir: t.TempDir(), BackendChecksum: true})
	if err != nil {
		t.Fatal(err)
	}
	id, err := st.CreateMultipart(f.ctx, CreateMultipartInput{Bucket: bucket, Key: key, ChecksumAlgorithm: "sha256", ChecksumType: "COMPOSITE"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.CreateMultipart(f.ctx, CreateMultipartInput{Bucket: other, Key: key}); err != nil {
		t.Fatal(err)
	}
	bi, err := f.be.HeadObject(f.ctx, other, uploadPrefix(other, key, id)+infoName)
	if err != nil {
		t.Fatal(err)
	}
	for _, strip := range []bool{false, true} {
		meta := map[string]string{}
		for k, v := range bi.Meta {
			if !strip || k != metaSettings {
				meta[k] = v
			}
		}
		if _, err := f.be.PutObject(f.ctx, backend.PutInput{Bucket: bucket, Key: uploadPrefix(bucket, key, id) + infoName,
			Body: strings.NewReader(""), Meta: meta}); err != nil {
			t.Fatal(err)
		}
		if u, err := st.readUpload(f.ctx, bucket, key, id); err == nil {
			t.Errorf("strip=%v: the other bucket's state read for this bucket's upload: algorithm %q", strip, u.checksumAlg)
		}
	}
}

// TestUploadStateOldStateListedEachTime: an upload created by the previous
// release with an algorithm (a state with plain entries only, as 0d2a41e
// writes it) is listed with its algorithm, as S3 lists it, and read once
// for three listings.
func TestUploadStateOldStateListedEachTime(t *testing.T) {
	f := newFixture(t)
	id, err := f.st.CreateMultipart(f.ctx, CreateMultipartInput{Bucket: bucket, Key: "old", ChecksumAlgorithm: "crc32", ChecksumType: "COMPOSITE"})
	if err != nil {
		t.Fatal(err)
	}
	info := uploadPrefix(bucket, "old", id) + infoName
	bi, err := f.be.HeadObject(f.ctx, bucket, info)
	if err != nil {
		t.Fatal(err)
	}
	delete(bi.Meta, metaSettings) // what the previous release wrote
	if _, err := f.be.PutObject(f.ctx, backend.PutInput{Bucket: bucket, Key: info, Body: strings.NewReader(""), Meta: bi.Meta}); err != nil {
		t.Fatal(err)
	}
	st, _ := New(Direct(f.be), f.kr, Options{SpoolDir: t.TempDir()})
	ups := []backend.Upload{{Key: "old", UploadID: id}}
	before := f.be.heads.Load()
	for range 3 {
		s, err := st.UploadChecksums(f.ctx, bucket, ups)
		if err != nil {
			t.Fatal(err)
		}
		if s[0] != (UploadChecksum{"crc32", "COMPOSITE"}) {
			t.Errorf("listed with %+v, want crc32 COMPOSITE", s[0])
		}
	}
	if h := f.be.heads.Load() - before; h != 1 {
		t.Errorf("three listings of one previous-release upload issued %d state HEADs", h)
	}
}
