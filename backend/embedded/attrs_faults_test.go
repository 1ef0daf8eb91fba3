package embedded

import (
	"bytes"
	"encoding/xml"
	"net/http"
	"net/url"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// A failure between base writing a version and
// the sidecar recording its lock (simulated: the sidecar's object-record
// directory cannot be written — ENOSPC/EIO, or a crash at that point) left
// the version in the store without its COMPLIANCE retention. The sidecar
// now files the record under the id it chooses before the write: the
// write fails and no version is made.
func TestEmbeddedLockedWriteRecordFirst(t *testing.T) {
	s := startRaw(t)
	s.lockBucket("lkb")
	// A first write creates attrs/lkb/o; then make it read-only (chattr +i:
	// root ignores permission bits), as a full or failing disk would.
	until := time.Now().Add(time.Hour).UTC().Format(time.RFC3339)
	lockH := http.Header{"X-Amz-Object-Lock-Mode": {"COMPLIANCE"}, "X-Amz-Object-Lock-Retain-Until-Date": {until}}
	if st, _, b := s.put("lkb", "first", lockH, "x"); st != 200 {
		t.Fatalf("put %d %s", st, b)
	}
	odir := filepath.Join(s.dir, "attrs", "lkb", "o")
	if out, err := exec.Command("chattr", "+i", odir).CombinedOutput(); err != nil {
		t.Skipf("chattr: %v %s", err, out)
	}
	st, _, b := s.put("lkb", "k", lockH, "backup")
	t.Logf("PUT with COMPLIANCE while the record cannot be written: %d %s", st, b)
	// A copy and a multipart completion as well.
	s.put("lkb", "src", nil, "s")
	resp, cb := s.do("PUT", "/lkb/k", nil, http.Header{"X-Amz-Copy-Source": {"/lkb/src"},
		"X-Amz-Object-Lock-Mode": {"COMPLIANCE"}, "X-Amz-Object-Lock-Retain-Until-Date": {until}}, nil)
	t.Logf("copy: %d %s", resp.StatusCode, cb)
	exec.Command("chattr", "-i", odir).Run()
	_, ub := s.do("POST", "/lkb/k", url.Values{"uploads": {""}}, lockH, nil)
	var up struct {
		UploadID string `xml:"UploadId"`
	}
	xml.Unmarshal(ub, &up)
	presp, _ := s.do("PUT", "/lkb/k", url.Values{"uploadId": {up.UploadID}, "partNumber": {"1"}}, nil, []byte("part"))
	exec.Command("chattr", "+i", odir).Run()
	done := `<CompleteMultipartUpload><Part><PartNumber>1</PartNumber><ETag>` + presp.Header.Get("ETag") + `</ETag></Part></CompleteMultipartUpload>`
	resp, db := s.do("POST", "/lkb/k", url.Values{"uploadId": {up.UploadID}}, nil, []byte(done))
	t.Logf("complete: %d %s", resp.StatusCode, db)
	if resp.StatusCode == 200 && !bytes.Contains(db, []byte("<Error>")) {
		t.Errorf("the completion succeeded although its record could not be written")
	}
	exec.Command("chattr", "-i", odir).Run() // the fault passes
	ids := s.versionIDs("lkb")
	t.Logf("versions after the failed write: %v", ids)
	for _, id := range ids {
		k, v, _ := strings.Cut(id, "@")
		if k != "k" {
			continue
		}
		resp, _ := s.do("DELETE", "/lkb/k", url.Values{"versionId": {v}}, nil, nil)
		if resp.StatusCode == 204 {
			t.Errorf("the write answered %d, yet left version %s in the store, unlocked: a plain DELETE ?versionId removed it (want either no version, or a COMPLIANCE one)", st, v)
		}
	}
}

// The sidecar named a bucket's directory by
// replacing "/" and "\" with "_", so creating the bucket `a\bc` wiped
// the records of `a_bc` (its COMPLIANCE-locked version then deleted by
// id). diskName is injective now; the version store keeps the two apart
// as well.
func TestEmbeddedBucketNameAliasKeepsLocks(t *testing.T) {
	s := startRaw(t)
	s.lockBucket("a_bc")
	until := time.Now().Add(time.Hour).UTC().Format(time.RFC3339)
	lockH := http.Header{"X-Amz-Object-Lock-Mode": {"COMPLIANCE"}, "X-Amz-Object-Lock-Retain-Until-Date": {until}}
	st, vid, b := s.put("a_bc", "k", lockH, "backup")
	if st != 200 {
		t.Fatalf("put %d %s", st, b)
	}
	if resp, _ := s.do("DELETE", "/a_bc/k", url.Values{"versionId": {vid}}, nil, nil); resp.StatusCode != 403 {
		t.Fatalf("control: delete of the locked version answered %d", resp.StatusCode)
	}
	resp, b := s.do("PUT", "/a%5Cbc", nil, nil, nil)
	t.Logf(`create bucket "a\bc": %d %s`, resp.StatusCode, b)
	if resp.StatusCode != 200 {
		t.Fatalf(`create "a\bc": %d`, resp.StatusCode)
	}
	s.do("PUT", "/a%5Cbc", url.Values{"versioning": {""}}, nil,
		[]byte(`<VersioningConfiguration><Status>Enabled</Status></VersioningConfiguration>`))
	s.put("a%5Cbc", "k", nil, "other")
	if ids := s.versionIDs("a_bc"); len(ids) != 1 || ids[0] != "k@"+vid {
		t.Errorf("versions of a_bc after writing to a\\bc: %v", ids)
	}
	if resp, _ := s.do("DELETE", "/a%5Cbc", nil, nil, nil); resp.StatusCode/100 == 2 {
		t.Errorf("a bucket keeping a version was deleted")
	}
	resp, _ = s.do("DELETE", "/a_bc/k", url.Values{"versionId": {vid}}, nil, nil)
	if resp.StatusCode != 403 {
		t.Errorf(`after creating the bucket "a\bc", the COMPLIANCE-locked version %s of "a_bc" was deleted (%d)`, vid, resp.StatusCode)
	}
}

// The version id the sidecar chose is the one the write gets (for a PUT, a
// copy and a completion), and a client cannot choose it: the private
// header is stripped from incoming requests.
func TestEmbeddedChosenVersionID(t *testing.T) {
	s := startRaw(t)
	s.lockBucket("lkb")
	want := strings.Repeat("ab", 16)
	_, vid, _ := s.put("lkb", "k", http.Header{wantVersionKey: {want}}, "x")
	if vid == want || vid == "" {
		t.Errorf("a client chose the version id %q", vid)
	}
	fb, err := newFixedBackend(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	fb.CreateBucket("b")
	fb.setVersioning("b", "Enabled")
	res, err := fb.PutObject("b", "k", map[string]string{wantVersionKey: want}, strings.NewReader("x"), 1, nil)
	if err != nil || string(res.VersionID) != want {
		t.Errorf("putObject with a chosen id: %q %v", res.VersionID, err)
	}
}

func TestDiskNameInjective(t *testing.T) {
	seen := map[string]string{}
	for _, n := range []string{"a_bc", "a\\bc", "a/bc", "a%5Cbc", "a%5Fbc", "ABC", "abc", "...", ".ab", "%2Eab", "my.bucket-1"} {
		d := diskName(n)
		if o, dup := seen[d]; dup {
			t.Errorf("%q and %q share %q", o, n, d)
		}
		seen[d] = n
		if d == "." || d == ".." || strings.ContainsAny(d, "/\\") || d[0] == '.' {
			t.Errorf("diskName(%q) = %q", n, d)
		}
	}
	if diskName("my.bucket-1") != "my.bucket-1" || diskName("a_bc") != "a_bc" {
		t.Errorf("S3 names must keep their earlier directory")
	}
}
