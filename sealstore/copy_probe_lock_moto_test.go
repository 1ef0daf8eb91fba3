package sealstore

import (
	"bytes"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/s3seal/s3seal/backend"
)

// The copy-condition probe runs at the first client copy of every s3seal
// process, in the copy's bucket. In a bucket with an Object Lock default
// retention its scratch object takes that retention: each process start
// leaves a version no one can delete until it expires (gc reports a
// failure on it every run), beside the client's data.
func TestMotoCopyProbeLeavesNoLockedScratchObject(t *testing.T) {
	be := motoS3(t)
	ctx := t.Context()
	createLockBucket(ctx, t, be, bucket)
	conf := `<ObjectLockConfiguration><ObjectLockEnabled>Enabled</ObjectLockEnabled><Rule><DefaultRetention>` +
		`<Mode>COMPLIANCE</Mode><Days>30</Days></DefaultRetention></Rule></ObjectLockConfiguration>`
	if _, err := be.Forward(ctx, backend.RawRequest{Method: http.MethodPut, Bucket: bucket, Query: url.Values{"object-lock": {""}},
		Body: []byte(conf)}); err != nil {
		t.Fatal(err)
	}
	kr := rotationKeyring(t)
	data := randBytes(1000, 1)
	for range 3 { // three s3seal processes, one client copy each
		st, err := New(Direct(be), kr, Options{SpoolDir: t.TempDir()})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := st.Put(ctx, PutInput{Bucket: bucket, Key: "src", Body: bytes.NewReader(data), Size: int64(len(data))}); err != nil {
			t.Fatal(err)
		}
		if _, err := st.Copy(ctx, CopyInput{SrcBucket: bucket, SrcKey: "src", Bucket: bucket, Key: "dst"}); err != nil {
			t.Fatal(err)
		}
	}
	out, err := be.ListObjectVersions(ctx, backend.ListVersionsInput{Bucket: bucket, Prefix: probePrefix})
	if err != nil {
		t.Fatal(err)
	}
	locked := 0
	for _, v := range out.Entries {
		if v.DeleteMarker {
			continue
		}
		_, err := be.DeleteObjectVersion(ctx, backend.DeleteInput{Bucket: bucket, Key: v.Key, VersionID: v.VersionID})
		t.Logf("probe version %s %s: delete: %v", strings.TrimPrefix(v.Key, probePrefix), v.VersionID, err)
		if err != nil {
			locked++
		}
	}
	if locked > 0 {
		t.Errorf("3 processes' first copies left %d probe scratch versions locked for 30 days", locked)
	}
}
