package embedded

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/s3seal/s3seal/internal/moto"
)

// DeleteObjects' per-entry <ETag> (a conditional
// delete, which fixedBackend.serveDeleteObjects honours) was dropped when
// the sidecar rebuilt the request; it is carried now.
func TestEmbeddedDeleteObjectsETagKept(t *testing.T) {
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

// ArchiveLocked moved the body aside first and
// wrote its record second, so a failure between lost the version. Now the
// record goes first: a failed record write (a directory where
// <id>.json.tmp goes) leaves the version current, readable by id.
func TestEmbeddedArchiveFailureKeepsVersion(t *testing.T) {
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
	e, err := Start(s.dir)
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

// A crash after archiveLocked wrote the record but before it moved the
// body leaves a record whose id is the current object's: after a restart
// the version is listed once, read by id, and deleting it by id removes
// it without reviving the leftover.
func TestEmbeddedArchiveLeftoverRecordIgnored(t *testing.T) {
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
	e, err := Start(s.dir)
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

// Concurrent writers, deletes by id of the current version
// and PutObjectRetention on one key of a versioned (lock) bucket; every
// acknowledged version must be listed exactly once, one latest.
func TestEmbeddedRaceWritersDeletes(t *testing.T) {
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
			VersionID string `xml:"VersionId"`
			IsLatest  bool
		} `xml:"Version"`
	}
	xml.Unmarshal(b, &out)
	seen, latest := map[string]int{}, 0
	for _, v := range out.V {
		seen[v.VersionID]++
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

// Compare ListObjectVersions paging (max-keys 1..5, prefixes, delimiter)
// of the embedded store with moto_server's for one sequence of writes and
// deletes. Version ids are replaced by the key's write order.
func TestEmbeddedListVersionsPagingVsMoto(t *testing.T) {
	motoURL := moto.Start(t)
	s := startRaw(t)
	type target struct {
		name string
		do   func(method, p string, q url.Values, body []byte) (*http.Response, []byte)
	}
	motoDo := func(method, p string, q url.Values, body []byte) (*http.Response, []byte) {
		u := motoURL + p
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
							NextVersionIDMarker string `xml:"NextVersionIdMarker"`
							Items               []struct {
								XMLName   xml.Name
								Key       string
								VersionID string `xml:"VersionId"`
								IsLatest  bool
							} `xml:",any"`
							CommonPrefixes []struct{ Prefix string }
						}
						xml.Unmarshal(b, &out)
						line := "p=" + prefix + " d=" + delim + " mk=" + itoa(mk) + ":"
						for _, it := range out.Items {
							if it.XMLName.Local == "Version" || it.XMLName.Local == "DeleteMarker" {
								line += " " + it.XMLName.Local[:1] + ":" + names[it.VersionID]
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
						km, vm = out.NextKeyMarker, out.NextVersionIDMarker
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
