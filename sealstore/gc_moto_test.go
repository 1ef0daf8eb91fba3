package sealstore

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/s3seal/s3seal/backend"
)

// startMotoLoopback starts moto_server on a free loopback port.
func startMotoLoopback(t *testing.T) string {
	t.Helper()
	bin, err := exec.LookPath("moto_server")
	if err != nil {
		t.Skip("moto_server not installed")
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	cmd := exec.Command(bin, "-H", "127.0.0.1", "-p", fmt.Sprint(port))
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	ep := fmt.Sprintf("http://127.0.0.1:%d", port)
	for i := 0; i < 300; i++ {
		if resp, err := http.Get(ep + "/"); err == nil {
			resp.Body.Close()
			return ep
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatal("moto_server did not start")
	return ""
}

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
	if err := f.be.PutBucketVersioning(f.ctx, bucket, "Enabled"); err != nil {
		t.Fatal(err)
	}
	st, err := New(replacingVersionsStore{f.be}, f.kr, Options{SpoolDir: t.TempDir()})
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
	st2, err := New(f.be, f.kr, Options{SpoolDir: t.TempDir()})
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
