package embedded

import (
	"bytes"
	"mime/multipart"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"
)

// A browser-form POST upload (gofakes3's
// createObjectBrowserUpload) bypassed the sidecar, so its version had no
// default retention. s3seal never sends one: the store refuses it (501).
func TestEmbeddedPostUploadRefused(t *testing.T) {
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

// A DELETE ?versionId with an extra query parameter is routed past
// serveVersions (len(q) != 1) to gofakes3; the sidecar checked the named
// version only.
func TestEmbeddedDeleteVersionExtraParam(t *testing.T) {
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

// A DELETE with an extra query parameter (any
// name) used to skip serveVersions (len(q)==0) and reach gofakes3's
// deleteObject, which removed the COMPLIANCE-locked current version for
// good. The store now refuses a parameter it does not know (501).
func TestEmbeddedDeleteExtraParamRefused(t *testing.T) {
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

// A copy onto a locked current version with an extra query
// parameter (serveVersions takes copies only with len(q)==0).
func TestEmbeddedCopyExtraParamOntoLocked(t *testing.T) {
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

// A copy with an extra query parameter used to
// be answered by gofakes3's copyObject (the SOURCE's version id), so the
// lock was filed under the wrong id. It is refused now (501), and makes
// no version.
func TestEmbeddedCopyExtraParamRefused(t *testing.T) {
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
func TestEmbeddedQueryWhitelist(t *testing.T) {
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
