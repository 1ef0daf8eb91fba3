package sealstore

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/s3seal/s3seal/backend"
	"github.com/s3seal/s3seal/crypto"
	"github.com/s3seal/s3seal/internal/faultproxy"
)

// TestGCKeepsLiveUploadOfKeyWithCR: s3seal gc looks up each backend
// upload's state under a hash of the key as ListMultipartUploads returns
// it. A key holding a carriage return came back from moto (raw in the XML)
// as "\n" (XML end-of-line normalisation), so gc took the live upload for
// one without state and its abort failed the whole run. The backend client
// now asks for url-encoded listings, which carry every byte.
func TestGCKeepsLiveUploadOfKeyWithCR(t *testing.T) {
	f := motoFixture(t)
	be := f.be
	k := "logs/line1\rline2.txt"
	id := f.create(t, k)
	data := randBytes(1000, 3)
	e := f.part(t, f.st, k, id, 1, data)
	ups, err := be.ListMultipartUploads(f.ctx, backend.ListUploadsInput{Bucket: bucket})
	if err != nil {
		t.Fatal(err)
	}
	for _, u := range ups.Uploads {
		t.Logf("backend lists upload key %q", u.Key)
	}
	// gc as run a day and a half later, the upload still in progress.
	later := func() time.Time { return time.Now().Add(36 * time.Hour) }
	found, gcErr := f.st.GC(f.ctx, bucket, GCOptions{MinAge: 24 * time.Hour, Delete: true, Now: later})
	for _, g := range found {
		t.Logf("gc: %+v", g)
		if g.Kind == "upload" && g.UploadID == id {
			t.Errorf("gc takes the live upload %q for one without state and tries to abort it", g.Key)
		}
	}
	if gcErr != nil {
		t.Errorf("gc --delete fails for the whole bucket: %v", gcErr)
	}
	_, err = f.st.CompleteMultipart(f.ctx, CompleteInput{ExpectSize: -1, Bucket: bucket, Key: k, UploadID: id,
		Parts: completeParts([]int{1}, []string{e.ETag})})
	if err != nil {
		t.Errorf("gc aborted a live upload: completion: %v", err)
		return
	}
	if _, got, err := f.get(t, k, nil); err != nil || !bytes.Equal(got, data) {
		t.Fatalf("get: %v", err)
	}
}

// replacingVersionsStore lists versions as a store that cannot carry a
// carriage return in XML and puts U+FFFD in its place: the listed key
// sorts after the real one.
type replacingVersionsStore struct{ backend.Store }

func (s replacingVersionsStore) ListObjectVersions(ctx context.Context, in backend.ListVersionsInput) (backend.ListVersionsOutput, error) {
	out, err := s.Store.ListObjectVersions(ctx, in)
	for i := range out.Entries {
		out.Entries[i].Key = strings.ReplaceAll(out.Entries[i].Key, "\r", "\uFFFD")
	}
	return out, err
}

// TestGCKeepsOldVersionManifestOfMangledKey: gc asks whether a version of
// the key still has a manifest's ETag by listing versions; a listing that
// mangles the key (to sort before or after the real one) must never make
// it delete the manifest an older multipart version needs, while a
// manifest no version needs still goes.
func TestGCKeepsOldVersionManifestOfMangledKey(t *testing.T) {
	f := motoFixture(t)
	f.enableVersioning(t)
	st, err := New(Direct(replacingVersionsStore{f.be}), f.kr, Options{SpoolDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	const key = "a\rb"
	data := randBytes(1000, 11)
	f.completeSmall(t, key, data)
	old, err := f.st.Head(f.ctx, bucket, key)
	if err != nil {
		t.Fatal(err)
	}
	f.put(t, key, []byte("a newer version"))
	f.completeSmall(t, key+"x", randBytes(1000, 12)) // a longer key, listed after
	gone := f.put(t, "c\rd", []byte("plain"))        // and a manifest of no version:
	f.completeSmall(t, "c\rd", randBytes(1000, 13))
	cur, err := f.st.Head(f.ctx, bucket, "c\rd")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.st.DeleteVersion(f.ctx, DeleteInput{Bucket: bucket, Key: "c\rd", VersionID: cur.VersionID}); err != nil {
		t.Fatal(err)
	}
	found, err := st.GC(f.ctx, bucket, GCOptions{Delete: true})
	if err != nil {
		t.Fatalf("gc: %v", err)
	}
	manifests := 0
	for _, g := range found {
		t.Logf("gc: %s %q (%s) removed=%v", g.Kind, g.Key, g.Reason, g.Removed)
		if g.Kind == "manifest" {
			manifests++
		}
	}
	if manifests != 1 {
		t.Errorf("gc removed %d manifests, want 1 (that of the deleted version of %q)", manifests, "c\rd")
	}
	st2, err := New(Direct(f.be), f.kr, Options{SpoolDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	_, rd, err := st2.GetVersion(f.ctx, bucket, key, old.VersionID, nil)
	if err != nil {
		t.Fatalf("old multipart version of %q after gc: %v", key, err)
	}
	got, err := io.ReadAll(rd)
	rd.Close()
	if err != nil || !bytes.Equal(got, data) {
		t.Errorf("old multipart version of %q after gc: %v", key, err)
	}
	if _, got, err := f.get(t, "c\rd", nil); err != nil || string(got) != "plain" {
		t.Errorf("%q after gc: %q %v (version %s)", "c\rd", got, err, gone.VersionID)
	}
}

// TestGCErrorInBodyListingKeepsOldVersionManifest: a store that answers
// gc's ListObjectVersions with 200 and an <Error> body does not make gc
// take "no version has its ETag" for certain: the SDK refuses the body and
// retries, and the manifest an older multipart version needs stays.
func TestGCErrorInBodyListingKeepsOldVersionManifest(t *testing.T) {
	ep := startMotoLoopback(t)
	px, err := faultproxy.Start(ep)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { px.Close() })
	be, err := backend.NewS3(backend.S3Config{Endpoint: px.URL(), AccessKey: "a", SecretKey: "b", PathStyle: true, HTTPClient: http.DefaultClient})
	if err != nil {
		t.Fatal(err)
	}
	f := &fixture{be: &countingStore{Store: be}, ctx: t.Context()}
	key, _ := crypto.GenerateKey()
	f.kr, _ = crypto.NewKeyring("k1", map[string][]byte{"k1": key})
	if f.st, err = New(Direct(f.be), f.kr, Options{SpoolDir: t.TempDir()}); err != nil {
		t.Fatal(err)
	}
	if err := be.CreateBucket(f.ctx, bucket); err != nil {
		t.Fatal(err)
	}
	f.enableVersioning(t)
	data := randBytes(1000, 7)
	f.completeSmall(t, "k", data)
	old, err := f.st.Head(f.ctx, bucket, "k")
	if err != nil {
		t.Fatal(err)
	}
	if err := f.st.Delete(f.ctx, bucket, "k"); err != nil { // a delete marker; the version stays
		t.Fatal(err)
	}
	if got, err := f.readVersion(t, "k", old.VersionID); err != nil || !bytes.Equal(got, data) {
		t.Fatalf("old version before gc: %v", err)
	}
	// Listings: #1 the completion's clean-up of its upload state, then gc's: #2 the manifests, #3 the versions of "k".
	px.Inject(faultproxy.Rule{Op: faultproxy.ListObjects, Attempt: 3, Fault: faultproxy.ErrorInBody})
	found, err := f.st.GC(f.ctx, bucket, GCOptions{Delete: true})
	t.Logf("gc: %+v, %v", found, err)
	px.Reset()
	if got, err := f.readVersion(t, "k", old.VersionID); err != nil || !bytes.Equal(got, data) {
		t.Errorf("old multipart version after gc met a 200 <Error> listing: %v (its manifest was removed)", err)
	}
}

// TestGCKeepsOldVersionManifestOfKeyWithCR: gc keeps a manifest while a
// version of its key has its ETag, found by ListObjectVersions and compared
// by key. moto lists versions without url-encoding (no EncodingType in its
// answer), so a key with a carriage return comes back "\n" (XML
// end-of-line normalisation); the key's older multipart version still
// reads after gc.
func TestGCKeepsOldVersionManifestOfKeyWithCR(t *testing.T) {
	f := motoFixture(t)
	f.enableVersioning(t)
	const key = "cr\rkey"
	data := randBytes(1000, 9)
	f.completeSmall(t, key, data)
	old, err := f.st.Head(f.ctx, bucket, key)
	if err != nil {
		t.Fatal(err)
	}
	f.put(t, key, []byte("a newer version")) // the multipart version is now noncurrent
	if got, err := f.readVersion(t, key, old.VersionID); err != nil || !bytes.Equal(got, data) {
		t.Fatalf("old version before gc: %v", err)
	}
	found, err := f.st.GC(f.ctx, bucket, GCOptions{Delete: true})
	for _, g := range found {
		t.Logf("gc: %s %q (%s) removed=%v", g.Kind, g.Key, g.Reason, g.Removed)
	}
	if err != nil {
		t.Logf("gc error: %v", err)
	}
	// A fresh s3seal (another process, or after a restart): no cached manifest.
	st2, err := New(Direct(f.be), f.kr, Options{SpoolDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	_, rd, err := st2.GetVersion(f.ctx, bucket, key, old.VersionID, nil)
	if err == nil {
		got, rerr := io.ReadAll(rd)
		rd.Close()
		if rerr == nil && bytes.Equal(got, data) {
			return
		}
		err = rerr
	}
	t.Errorf("old multipart version of %q after gc, read by a fresh s3seal: %v", key, err)
}
