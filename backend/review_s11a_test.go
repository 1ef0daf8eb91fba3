package backend

// Review s11a (hostile client / faults against the embedded store's
// versions, Object Lock and sidecar). The reviewer's proving tests, turned
// into regression tests of the fixes (fix-s11a); the listing-cost one
// measures a documented limit on demand.
// Run: go test ./backend -run TestReviewS11a -v

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"
)

type rawStore struct {
	t   testing.TB
	e   *Embedded
	dir string
}

func startRaw(t testing.TB) *rawStore {
	t.Helper()
	dir := t.TempDir()
	e, err := StartEmbedded(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	return &rawStore{t: t, e: e, dir: dir}
}

// do sends a request straight at the store's handler, with its access key.
func (s *rawStore) do(method, p string, q url.Values, h http.Header, body []byte) (*http.Response, []byte) {
	s.t.Helper()
	u := s.e.Endpoint() + p
	if q != nil {
		u += "?" + strings.ReplaceAll(q.Encode(), "=&", "&")
	}
	req, err := http.NewRequest(method, u, bytes.NewReader(body))
	if err != nil {
		s.t.Fatal(err)
	}
	for k, v := range h {
		req.Header[k] = v
	}
	req.Header.Set("Authorization", "AWS4-HMAC-SHA256 Credential="+s.e.accessKey+"/20260101/us-east-1/s3/aws4_request, SignedHeaders=host, Signature=00")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		s.t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	return resp, b
}

func (s *rawStore) lockBucket(name string) {
	s.t.Helper()
	resp, b := s.do("PUT", "/"+name, nil, http.Header{"X-Amz-Bucket-Object-Lock-Enabled": {"true"}}, nil)
	if resp.StatusCode != 200 {
		s.t.Fatalf("create %s: %d %s", name, resp.StatusCode, b)
	}
}

func (s *rawStore) put(bucket, key string, h http.Header, body string) (int, string, []byte) {
	resp, b := s.do("PUT", "/"+bucket+"/"+key, nil, h, []byte(body))
	return resp.StatusCode, resp.Header.Get("X-Amz-Version-Id"), b
}

func (s *rawStore) versionIDs(bucket string) []string {
	s.t.Helper()
	resp, b := s.do("GET", "/"+bucket, url.Values{"versions": {""}}, nil, nil)
	if resp.StatusCode != 200 {
		s.t.Fatalf("list versions: %d %s", resp.StatusCode, b)
	}
	var out struct {
		V []struct{ Key, VersionId string } `xml:"Version"`
	}
	xml.Unmarshal(b, &out)
	var ids []string
	for _, v := range out.V {
		ids = append(ids, v.Key+"@"+v.VersionId)
	}
	return ids
}

// Regression (was medium): DeleteObjects' per-entry <ETag> (a conditional
// delete, which fixedBackend.serveDeleteObjects honours) was dropped when
// the sidecar rebuilt the request; it is carried now.
func TestReviewS11aDeleteObjectsETagKept(t *testing.T) {
	s := startRaw(t)
	if r, b := s.do("PUT", "/vbk", nil, nil, nil); r.StatusCode != 200 {
		t.Fatalf("%d %s", r.StatusCode, b)
	}
	s.do("PUT", "/vbk", url.Values{"versioning": {""}}, nil,
		[]byte(`<VersioningConfiguration><Status>Enabled</Status></VersioningConfiguration>`))
	st, vid, b := s.put("vbk", "k", nil, "data")
	if st != 200 {
		t.Fatalf("put %d %s", st, b)
	}
	body := `<Delete><Object><Key>k</Key><VersionId>` + vid + `</VersionId><ETag>"00000000000000000000000000000000"</ETag></Object></Delete>`
	resp, rb := s.do("POST", "/vbk", url.Values{"delete": {""}}, nil, []byte(body))
	t.Logf("DeleteObjects with a wrong ETag: %d %s", resp.StatusCode, rb)
	if ids := s.versionIDs("vbk"); len(ids) != 1 {
		t.Errorf("version deleted although its ETag did not match the entry's <ETag>: versions now %v", ids)
	}
	if !bytes.Contains(rb, []byte("PreconditionFailed")) {
		t.Errorf("want a PreconditionFailed error for the entry, got %s", rb)
	}
}

// Regression (was medium): a failure between base writing a version and
// the sidecar recording its lock (simulated: the sidecar's object-record
// directory cannot be written — ENOSPC/EIO, or a crash at that point) left
// the version in the store without its COMPLIANCE retention. The sidecar
// now files the record under the id it chooses before the write: the
// write fails and no version is made.
func TestReviewS11aLockedWriteRecordFirst(t *testing.T) {
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
	resp, ub := s.do("POST", "/lkb/k", url.Values{"uploads": {""}}, lockH, nil)
	var up struct{ UploadId string }
	xml.Unmarshal(ub, &up)
	presp, _ := s.do("PUT", "/lkb/k", url.Values{"uploadId": {up.UploadId}, "partNumber": {"1"}}, nil, []byte("part"))
	exec.Command("chattr", "+i", odir).Run()
	done := `<CompleteMultipartUpload><Part><PartNumber>1</PartNumber><ETag>` + presp.Header.Get("ETag") + `</ETag></Part></CompleteMultipartUpload>`
	resp, db := s.do("POST", "/lkb/k", url.Values{"uploadId": {up.UploadId}}, nil, []byte(done))
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

// Regression (was low): a browser-form POST upload (gofakes3's
// createObjectBrowserUpload) bypassed the sidecar, so its version had no
// default retention. s3seal never sends one: the store refuses it (501).
func TestReviewS11aPostUploadRefused(t *testing.T) {
	s := startRaw(t)
	s.lockBucket("lkb")
	resp, b := s.do("PUT", "/lkb", url.Values{"object-lock": {""}}, nil, []byte(
		`<ObjectLockConfiguration><ObjectLockEnabled>Enabled</ObjectLockEnabled><Rule><DefaultRetention><Mode>COMPLIANCE</Mode><Days>1</Days></DefaultRetention></Rule></ObjectLockConfiguration>`))
	if resp.StatusCode != 200 {
		t.Fatalf("lock config: %d %s", resp.StatusCode, b)
	}
	// Control: a PUT gets the default retention.
	_, pv, _ := s.put("lkb", "put", nil, "x")
	if resp, _ := s.do("DELETE", "/lkb/put", url.Values{"versionId": {pv}}, nil, nil); resp.StatusCode != 403 {
		t.Fatalf("control: delete of a PUT version under default retention: %d", resp.StatusCode)
	}
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	mw.WriteField("key", "posted")
	fw, _ := mw.CreateFormFile("file", "f")
	fw.Write([]byte("backup"))
	mw.Close()
	resp, b = s.do("POST", "/lkb", nil, http.Header{"Content-Type": {mw.FormDataContentType()}}, buf.Bytes())
	vid := resp.Header.Get("X-Amz-Version-Id")
	t.Logf("POST upload: %d vid=%s %s", resp.StatusCode, vid, b)
	if resp.StatusCode != http.StatusNotImplemented {
		t.Errorf("POST upload: %d, want 501", resp.StatusCode)
	}
	if resp.StatusCode/100 != 2 {
		if ids := s.versionIDs("lkb"); len(ids) != 1 {
			t.Errorf("the refused POST made a version: %v", ids)
		}
		return
	}
	resp, _ = s.do("DELETE", "/lkb/posted", url.Values{"versionId": {vid}}, nil, nil)
	if resp.StatusCode == 204 {
		t.Errorf("a POST-uploaded version in a bucket with default COMPLIANCE retention was deleted by id (%d)", resp.StatusCode)
	}
}

// Regression (was medium): archiveLocked moved the body aside first and
// wrote its record second, so a failure between lost the version. Now the
// record goes first: a failed record write (a directory where
// <id>.json.tmp goes) leaves the version current, readable by id.
func TestReviewS11aArchiveFailureKeepsVersion(t *testing.T) {
	s := startRaw(t)
	s.lockBucket("lkb")
	until := time.Now().Add(time.Hour).UTC().Format(time.RFC3339)
	lockH := http.Header{"X-Amz-Object-Lock-Mode": {"COMPLIANCE"}, "X-Amz-Object-Lock-Retain-Until-Date": {until}}
	st, v1, b := s.put("lkb", "k", lockH, "precious")
	if st != 200 || v1 == "" {
		t.Fatalf("put %d %s", st, b)
	}
	kd := filepath.Join(s.dir, "objects", (&fixedBackend{}).keyVersionsDir("lkb", "k"))
	if err := os.MkdirAll(filepath.Join(kd, v1+".json.tmp"), 0o700); err != nil {
		t.Fatal(err)
	}
	st, _, b = s.put("lkb", "k", nil, "newer")
	t.Logf("overwrite while the record cannot be written: %d %s", st, b)
	os.RemoveAll(filepath.Join(kd, v1+".json.tmp")) // the fault passes

	// Restart on the same directory, as after a crash.
	s.e.Close()
	e, err := StartEmbedded(s.dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	s.e = e
	ids := s.versionIDs("lkb")
	resp, gb := s.do("GET", "/lkb/k", url.Values{"versionId": {v1}}, nil, nil)
	t.Logf("after restart: versions %v; GET ?versionId=%s: %d", ids, v1, resp.StatusCode)
	if resp.StatusCode != 200 || string(gb) != "precious" {
		fis, _ := os.ReadDir(kd)
		var names []string
		for _, fi := range fis {
			names = append(names, fi.Name())
		}
		t.Errorf("the COMPLIANCE-locked version %s is lost (GET %d, listed %v) though its body is on disk: %v", v1, resp.StatusCode, ids, names)
	}
}

// Holds (race): concurrent writers, deletes by id of the current version
// and PutObjectRetention on one key of a versioned (lock) bucket; every
// acknowledged version must be listed exactly once, one latest.
func TestReviewS11aRaceWritersDeletes(t *testing.T) {
	s := startRaw(t)
	s.lockBucket("lkb")
	const n = 40
	type res struct {
		st  int
		vid string
	}
	ch := make(chan res, n)
	for i := 0; i < n; i++ {
		go func(i int) {
			st, vid, _ := s.put("lkb", "k", nil, strings.Repeat("x", i))
			ch <- res{st, vid}
		}(i)
	}
	acked := map[string]bool{}
	deleted := map[string]bool{}
	for i := 0; i < n; i++ {
		r := <-ch
		if r.st != 200 {
			t.Errorf("put: %d", r.st)
			continue
		}
		acked[r.vid] = true
		if i%4 == 0 { // delete some by id while others still write
			resp, _ := s.do("DELETE", "/lkb/k", url.Values{"versionId": {r.vid}}, nil, nil)
			if resp.StatusCode == 204 {
				deleted[r.vid] = true
			}
		}
	}
	resp, b := s.do("GET", "/lkb", url.Values{"versions": {""}}, nil, nil)
	var out struct {
		V []struct {
			VersionId string
			IsLatest  bool
		} `xml:"Version"`
	}
	xml.Unmarshal(b, &out)
	seen, latest := map[string]int{}, 0
	for _, v := range out.V {
		seen[v.VersionId]++
		if v.IsLatest {
			latest++
		}
	}
	for v := range acked {
		if !deleted[v] && seen[v] != 1 {
			t.Errorf("acknowledged version %s listed %d times", v, seen[v])
		}
		if deleted[v] && seen[v] != 0 {
			t.Errorf("deleted version %s still listed", v)
		}
	}
	if latest != 1 || resp.StatusCode != 200 {
		t.Errorf("%d versions marked latest (status %d)", latest, resp.StatusCode)
	}
}

// BenchmarkEmbeddedListVersionsPage measures a known limit (documented in
// docs/DESIGN.md, The embedded store, Versions, Limits): every
// ListObjectVersions page reads and parses every version record of the
// prefix, so a page of max-keys=1 costs O(versions kept), and a HEAD
// behind a delete marker reads every record of the key. Compare the
// sub-benchmarks side by side (go test -bench EmbeddedListVersions
// ./backend/): the ratio between 20 and 2000 versions is the cost of the
// limit; a per-key index of version ids in order is the way out.
func BenchmarkEmbeddedListVersionsPage(b *testing.B) {
	for _, n := range []int{20, 2000} {
		b.Run(fmt.Sprintf("versions=%d", n), func(b *testing.B) {
			s := startRaw(b)
			s.do("PUT", "/vbk", nil, nil, nil)
			s.do("PUT", "/vbk", url.Values{"versioning": {""}}, nil,
				[]byte(`<VersioningConfiguration><Status>Enabled</Status></VersioningConfiguration>`))
			for i := 0; i < n; i++ {
				s.put("vbk", "k", nil, "x")
			}
			b.Run("page", func(b *testing.B) {
				for i := 0; i < b.N; i++ {
					s.do("GET", "/vbk", url.Values{"versions": {""}, "max-keys": {"1"}}, nil, nil)
				}
			})
			s.do("DELETE", "/vbk/k", nil, nil, nil)
			b.Run("head-behind-marker", func(b *testing.B) {
				for i := 0; i < b.N; i++ {
					s.do("HEAD", "/vbk/k", nil, nil, nil)
				}
			})
		})
	}
}

// Regression (was high): the sidecar named a bucket's directory by
// replacing "/" and "\" with "_", so creating the bucket `a\bc` wiped
// the records of `a_bc` (its COMPLIANCE-locked version then deleted by
// id). diskName is injective now; the version store keeps the two apart
// as well.
func TestReviewS11aBucketNameAliasKeepsLocks(t *testing.T) {
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

// Compare ListObjectVersions paging (max-keys 1..5, prefixes, delimiter)
// of the embedded store with moto_server's for one sequence of writes and
// deletes. Version ids are replaced by the key's write order. Needs
// moto_server on REVIEW_MOTO (e.g. http://127.0.0.1:50911).
func TestReviewS11aListVersionsPagingVsMoto(t *testing.T) {
	moto := os.Getenv("REVIEW_MOTO")
	if moto == "" {
		t.Skip("REVIEW_MOTO not set")
	}
	s := startRaw(t)
	type target struct {
		name string
		do   func(method, p string, q url.Values, body []byte) (*http.Response, []byte)
	}
	motoDo := func(method, p string, q url.Values, body []byte) (*http.Response, []byte) {
		u := moto + p
		if q != nil {
			u += "?" + strings.ReplaceAll(q.Encode(), "=&", "&")
			u = strings.TrimSuffix(u, "=")
		}
		req, _ := http.NewRequest(method, u, bytes.NewReader(body))
		req.Header.Set("Authorization", "AWS4-HMAC-SHA256 Credential=a/20260101/us-east-1/s3/aws4_request, SignedHeaders=host, Signature=00")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		return resp, b
	}
	embDo := func(method, p string, q url.Values, body []byte) (*http.Response, []byte) {
		return s.do(method, p, q, nil, body)
	}
	bucket := "cmp" + strings.ToLower(strings.ReplaceAll(time.Now().Format("150405.000"), ".", ""))
	ops := []struct{ op, key string }{
		// No key is a prefix of another's "/" path: the embedded store's
		// documented file-tree limit would refuse those writes.
		{"put", "a1"}, {"put", "a1"}, {"put", "a/b"}, {"del", "a1"}, {"put", "a/c"}, {"put", "b"},
		{"put", "a/b"}, {"del", "b"}, {"put", "b"}, {"put", "c/d/e"}, {"del", "c/d/e"}, {"put", "a1"},
		{"put", "a/b"}, {"del", "a/b"}, {"put", "a/c"},
	}
	results := map[string][]string{}
	for _, tg := range []target{{"moto", motoDo}, {"embedded", embDo}} {
		tg.do("PUT", "/"+bucket, nil, nil)
		tg.do("PUT", "/"+bucket, url.Values{"versioning": {""}}, []byte(`<VersioningConfiguration xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><Status>Enabled</Status></VersioningConfiguration>`))
		names := map[string]string{}
		count := map[string]int{}
		for _, o := range ops {
			var resp *http.Response
			if o.op == "put" {
				resp, _ = tg.do("PUT", "/"+bucket+"/"+o.key, nil, []byte("x"))
			} else {
				resp, _ = tg.do("DELETE", "/"+bucket+"/"+o.key, nil, nil)
			}
			count[o.key]++
			names[resp.Header.Get("X-Amz-Version-Id")] = o.key + "#" + itoa(count[o.key])
		}
		var log []string
		for _, prefix := range []string{"", "a", "a/"} {
			for _, delim := range []string{"", "/"} {
				for mk := 1; mk <= 5; mk++ {
					km, vm := "", ""
					var combo []string
					for page := 0; page < 30; page++ {
						q := url.Values{"versions": {""}, "max-keys": {itoa(mk)}}
						if prefix != "" {
							q.Set("prefix", prefix)
						}
						if delim != "" {
							q.Set("delimiter", delim)
						}
						if km != "" {
							q.Set("key-marker", km)
						}
						if vm != "" {
							q.Set("version-id-marker", vm)
						}
						_, b := tg.do("GET", "/"+bucket, q, nil)
						var out struct {
							IsTruncated         bool
							NextKeyMarker       string
							NextVersionIdMarker string
							Items               []struct {
								XMLName   xml.Name
								Key       string
								VersionId string
								IsLatest  bool
							} `xml:",any"`
							CommonPrefixes []struct{ Prefix string }
						}
						xml.Unmarshal(b, &out)
						line := "p=" + prefix + " d=" + delim + " mk=" + itoa(mk) + ":"
						for _, it := range out.Items {
							if it.XMLName.Local == "Version" || it.XMLName.Local == "DeleteMarker" {
								line += " " + it.XMLName.Local[:1] + ":" + names[it.VersionId]
								if it.IsLatest {
									line += "*"
								}
							}
						}
						for _, cp := range out.CommonPrefixes {
							line += " CP:" + cp.Prefix
						}
						combo = append(combo, strings.Fields(strings.SplitN(line, ":", 2)[1])...)
						if !out.IsTruncated {
							break
						}
						km, vm = out.NextKeyMarker, out.NextVersionIdMarker
					}
					sort.Strings(combo)
					log = append(log, "p="+prefix+" d="+delim+" mk="+itoa(mk)+": "+strings.Join(combo, " "))
				}
			}
		}
		results[tg.name] = log
	}
	m, e := results["moto"], results["embedded"]
	for i := 0; i < len(m) || i < len(e); i++ {
		var a, b string
		if i < len(m) {
			a = m[i]
		}
		if i < len(e) {
			b = e[i]
		}
		if a != b {
			t.Errorf("page %d differs:\n moto:     %s\n embedded: %s", i, a, b)
		}
	}
}

// Probe: a DELETE ?versionId with an extra query parameter is routed past
// serveVersions (len(q) != 1) to gofakes3; the sidecar checked the named
// version only.
func TestReviewS11aDeleteVersionExtraParam(t *testing.T) {
	s := startRaw(t)
	s.lockBucket("lkb")
	until := time.Now().Add(time.Hour).UTC().Format(time.RFC3339)
	lockH := http.Header{"X-Amz-Object-Lock-Mode": {"COMPLIANCE"}, "X-Amz-Object-Lock-Retain-Until-Date": {until}}
	_, v1, _ := s.put("lkb", "k", nil, "old")
	_, v2, _ := s.put("lkb", "k", lockH, "locked")
	for _, extra := range []string{"foo", "partNumber", "response-content-type"} {
		q := url.Values{"versionId": {v1}, extra: {"1"}}
		resp, b := s.do("DELETE", "/lkb/k", q, nil, nil)
		t.Logf("DELETE ?versionId=v1&%s=1: %d %s %v", extra, resp.StatusCode, b, resp.Header)
		if resp.StatusCode != http.StatusNotImplemented {
			t.Errorf("DELETE ?versionId=v1&%s=1: %d, want 501", extra, resp.StatusCode)
		}
	}
	ids := s.versionIDs("lkb")
	t.Logf("versions now %v (v1=%s v2=%s)", ids, v1, v2)
	found := false
	for _, id := range ids {
		found = found || id == "k@"+v2
	}
	if !found {
		t.Errorf("the COMPLIANCE-locked version v2 is gone")
	}
	resp, b := s.do("GET", "/lkb/k", nil, nil, nil)
	if string(b) != "locked" {
		t.Errorf("GET k: %d %q, want the locked version", resp.StatusCode, b)
	}
}

// Regression (was high): a DELETE with an extra query parameter (any
// name) used to skip serveVersions (len(q)==0) and reach gofakes3's
// deleteObject, which removed the COMPLIANCE-locked current version for
// good. The store now refuses a parameter it does not know (501).
func TestReviewS11aDeleteExtraParamRefused(t *testing.T) {
	s := startRaw(t)
	s.lockBucket("lkb")
	until := time.Now().Add(time.Hour).UTC().Format(time.RFC3339)
	lockH := http.Header{"X-Amz-Object-Lock-Mode": {"COMPLIANCE"}, "X-Amz-Object-Lock-Retain-Until-Date": {until}}
	_, v1, _ := s.put("lkb", "k", lockH, "locked")
	resp, b := s.do("DELETE", "/lkb/k", url.Values{"foo": {"1"}}, nil, nil)
	t.Logf("DELETE /lkb/k?foo=1: %d %s delete-marker=%q vid=%q", resp.StatusCode, b,
		resp.Header.Get("X-Amz-Delete-Marker"), resp.Header.Get("X-Amz-Version-Id"))
	if resp.StatusCode != http.StatusNotImplemented || !bytes.Contains(b, []byte("foo")) {
		t.Errorf("DELETE ?foo=1: %d %s, want 501 naming foo", resp.StatusCode, b)
	}
	ids := s.versionIDs("lkb")
	resp, gb := s.do("GET", "/lkb/k", url.Values{"versionId": {v1}}, nil, nil)
	t.Logf("versions now %v; GET ?versionId=%s: %d", ids, v1, resp.StatusCode)
	if resp.StatusCode != 200 || string(gb) != "locked" {
		t.Errorf("the COMPLIANCE-locked version %s was destroyed by DELETE ?foo=1 (GET by id: %d, versions listed: %v)", v1, resp.StatusCode, ids)
	}
}

// Probe: a copy onto a locked current version with an extra query
// parameter (serveVersions takes copies only with len(q)==0).
func TestReviewS11aCopyExtraParamOntoLocked(t *testing.T) {
	s := startRaw(t)
	s.lockBucket("lkb")
	until := time.Now().Add(time.Hour).UTC().Format(time.RFC3339)
	lockH := http.Header{"X-Amz-Object-Lock-Mode": {"COMPLIANCE"}, "X-Amz-Object-Lock-Retain-Until-Date": {until}}
	_, v1, _ := s.put("lkb", "k", lockH, "locked")
	s.put("lkb", "src", nil, "evil")
	resp, b := s.do("PUT", "/lkb/k", url.Values{"foo": {"1"}}, http.Header{"X-Amz-Copy-Source": {"/lkb/src"}}, nil)
	t.Logf("copy ?foo=1 onto k: %d %s vid=%q", resp.StatusCode, b, resp.Header.Get("X-Amz-Version-Id"))
	resp, gb := s.do("GET", "/lkb/k", url.Values{"versionId": {v1}}, nil, nil)
	t.Logf("versions %v; GET ?versionId=%s: %d %q", s.versionIDs("lkb"), v1, resp.StatusCode, gb)
	if resp.StatusCode != 200 || string(gb) != "locked" {
		t.Errorf("the COMPLIANCE-locked version %s is gone or changed after a copy with ?foo=1 (GET by id %d %q)", v1, resp.StatusCode, gb)
	}
}

// Regression (was medium): a copy with an extra query parameter used to
// be answered by gofakes3's copyObject (the SOURCE's version id), so the
// lock was filed under the wrong id. It is refused now (501), and makes
// no version.
func TestReviewS11aCopyExtraParamRefused(t *testing.T) {
	s := startRaw(t)
	s.lockBucket("lkb")
	until := time.Now().Add(time.Hour).UTC().Format(time.RFC3339)
	s.put("lkb", "src", nil, "data")
	resp, b := s.do("PUT", "/lkb/dst", url.Values{"foo": {"1"}}, http.Header{"X-Amz-Copy-Source": {"/lkb/src"},
		"X-Amz-Object-Lock-Mode": {"COMPLIANCE"}, "X-Amz-Object-Lock-Retain-Until-Date": {until}}, nil)
	answered := resp.Header.Get("X-Amz-Version-Id")
	t.Logf("copy ?foo=1 with COMPLIANCE: %d vid=%q %s", resp.StatusCode, answered, b)
	if resp.StatusCode != http.StatusNotImplemented {
		t.Errorf("copy ?foo=1: %d, want 501", resp.StatusCode)
	}
	for _, id := range s.versionIDs("lkb") {
		k, v, _ := strings.Cut(id, "@")
		if k != "dst" {
			continue
		}
		t.Errorf("the refused copy made version %q", v)
		if v != answered {
			t.Errorf("the copy answered version id %q, but made version %q", answered, v)
		}
		if resp, _ := s.do("DELETE", "/lkb/dst", url.Values{"versionId": {v}}, nil, nil); resp.StatusCode == 204 {
			t.Errorf("the copy asked for COMPLIANCE, yet its version %s was deleted by id", v)
		}
	}
}

// Every request is decided by the store: unknown parameters, parameters
// of another operation and sub-resources with a method they lack are
// refused; what s3seal sends goes through.
func TestReviewS11aQueryWhitelist(t *testing.T) {
	s := startRaw(t)
	s.lockBucket("lkb")
	s.put("lkb", "k", nil, "x")
	for _, c := range []struct {
		method, path string
		q            url.Values
		want         int
	}{
		{"DELETE", "/lkb/k", url.Values{"partNumber": {"1"}}, 501},
		{"GET", "/lkb/k", url.Values{"attributes": {""}}, 501},
		{"PUT", "/lkb/k", url.Values{"prefix": {"a"}}, 501},
		{"GET", "/lkb", url.Values{"logging": {""}}, 501},
		{"DELETE", "/lkb", url.Values{"prefix": {"a"}}, 501},
		{"PUT", "/lkb", url.Values{"versions": {""}}, 405},
		{"GET", "/lkb/k", url.Values{"tagging": {""}, "acl": {""}}, 501},
		{"GET", "/lkb/k", url.Values{"x-id": {"GetObject"}}, 200},
		{"GET", "/lkb", url.Values{"list-type": {"2"}, "prefix": {"k"}, "max-keys": {"5"}}, 200},
		{"GET", "/lkb", url.Values{"versions": {""}, "key-marker": {"k"}}, 200},
	} {
		resp, b := s.do(c.method, c.path, c.q, nil, nil)
		if resp.StatusCode != c.want {
			t.Errorf("%s %s?%s: %d %s, want %d", c.method, c.path, c.q.Encode(), resp.StatusCode, b, c.want)
		}
	}
	if ids := s.versionIDs("lkb"); len(ids) != 1 {
		t.Errorf("versions after refused requests: %v", ids)
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

// A crash after archiveLocked wrote the record but before it moved the
// body leaves a record whose id is the current object's: after a restart
// the version is listed once, read by id, and deleting it by id removes
// it without reviving the leftover.
func TestReviewS11aArchiveLeftoverRecordIgnored(t *testing.T) {
	s := startRaw(t)
	s.lockBucket("lkb")
	_, v0, _ := s.put("lkb", "k", nil, "older")
	_, v1, _ := s.put("lkb", "k", nil, "current")
	kd := filepath.Join(s.dir, "objects", (&fixedBackend{}).keyVersionsDir("lkb", "k"))
	rec := `{"Key":"k","VersionID":"` + v1 + `","Seq":1,"ModTime":"2026-01-01T00:00:00Z","Size":7}`
	if err := os.WriteFile(filepath.Join(kd, v1+".json"), []byte(rec), 0o600); err != nil {
		t.Fatal(err)
	}
	s.e.Close()
	e, err := StartEmbedded(s.dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	s.e = e
	if ids := s.versionIDs("lkb"); len(ids) != 2 || ids[0] != "k@"+v1 || ids[1] != "k@"+v0 {
		t.Errorf("versions with a leftover record: %v, want [k@%s k@%s]", ids, v1, v0)
	}
	if resp, b := s.do("GET", "/lkb/k", url.Values{"versionId": {v1}}, nil, nil); resp.StatusCode != 200 || string(b) != "current" {
		t.Errorf("GET by id: %d %q", resp.StatusCode, b)
	}
	if resp, b := s.do("DELETE", "/lkb/k", url.Values{"versionId": {v1}}, nil, nil); resp.StatusCode != 204 {
		t.Fatalf("DELETE by id: %d %s", resp.StatusCode, b)
	}
	if ids := s.versionIDs("lkb"); len(ids) != 1 || ids[0] != "k@"+v0 {
		t.Errorf("versions after deleting the current one: %v", ids)
	}
	if resp, b := s.do("GET", "/lkb/k", nil, nil, nil); string(b) != "older" {
		t.Errorf("GET after delete: %d %q, want the older version promoted", resp.StatusCode, b)
	}
}

// The version id the sidecar chose is the one the write gets (for a PUT, a
// copy and a completion), and a client cannot choose it: the private
// header is stripped from incoming requests.
func TestReviewS11aChosenVersionID(t *testing.T) {
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
