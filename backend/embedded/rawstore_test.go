package embedded

import (
	"bytes"
	"encoding/xml"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// rawStore sends requests straight at the embedded store over HTTP, with
// its access key, for what backend.S3 never sends: malformed queries,
// browser-form uploads, requests a hostile local client could make.

type rawStore struct {
	t   testing.TB
	e   *Server
	dir string
}

func startRaw(t testing.TB) *rawStore {
	t.Helper()
	dir := t.TempDir()
	e, err := Start(dir)
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
		V []struct {
			Key       string
			VersionID string `xml:"VersionId"`
		} `xml:"Version"`
	}
	xml.Unmarshal(b, &out)
	var ids []string
	for _, v := range out.V {
		ids = append(ids, v.Key+"@"+v.VersionID)
	}
	return ids
}
