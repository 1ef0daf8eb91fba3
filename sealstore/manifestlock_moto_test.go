package sealstore

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/s3seal/s3seal/backend"
)

// TestManifestLockedWithUploadMoto: the lock asked for at
// CreateMultipartUpload (here COMPLIANCE and a legal hold, in a bucket with
// Object Lock) is on the completed object's manifest too, recorded in the
// upload state for whichever process completes it: the backend account
// cannot delete the manifest version, so the object stays readable as
// long as it is locked.
func TestManifestLockedWithUploadMoto(t *testing.T) {
	f := motoFixture(t)
	s3be := f.be.Store.(*backend.S3)
	const lb = "worm"
	if _, err := s3be.Forward(f.ctx, backend.RawRequest{Method: http.MethodPut, Bucket: lb,
		Header: http.Header{"X-Amz-Bucket-Object-Lock-Enabled": {"true"}}}); err != nil {
		t.Fatal(err)
	}
	until := time.Now().Add(time.Hour).UTC().Truncate(time.Second)
	id, err := f.st.CreateMultipart(f.ctx, CreateMultipartInput{Bucket: lb, Key: "backup",
		Protect: backend.Protection{LockMode: "COMPLIANCE", RetainUntil: until, LegalHold: "ON"}})
	if err != nil {
		t.Fatal(err)
	}
	// Another process (no cached upload) completes it.
	st2, _ := New(f.be, f.kr, Options{SpoolDir: t.TempDir()})
	pi, err := st2.UploadPart(f.ctx, UploadPartInput{Bucket: lb, Key: "backup", UploadID: id, PartNumber: 1,
		Body: strings.NewReader("data"), Size: 4})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st2.CompleteMultipart(f.ctx, CompleteInput{ExpectSize: -1, Bucket: lb, Key: "backup", UploadID: id,
		Parts: completeParts([]int{1}, []string{pi.ETag})}); err != nil {
		t.Fatal(err)
	}
	mkey, _, err := f.st.ManifestOf(f.ctx, lb, "backup", "")
	if err != nil || mkey == "" {
		t.Fatalf("ManifestOf = %q, %v", mkey, err)
	}
	mi, err := f.be.HeadObject(f.ctx, lb, mkey)
	if err != nil {
		t.Fatal(err)
	}
	if mi.Lock.LockMode != "COMPLIANCE" || mi.Lock.RetainUntil.Before(until) || mi.Lock.LegalHold != "ON" {
		t.Fatalf("manifest lock %+v, want COMPLIANCE until %v with a legal hold", mi.Lock, until)
	}
	if _, err := f.be.DeleteObjectVersion(f.ctx, backend.DeleteInput{Bucket: lb, Key: mkey, VersionID: mi.VersionID}); err == nil {
		t.Fatal("the locked object's manifest version was deleted")
	}
}
