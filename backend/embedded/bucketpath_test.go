package embedded

import (
	"net/http"
	"strings"
	"testing"
)

// TestDotBucketRefused: buckets are directories here, so a bucket named
// "." or ".." (or none before a key) would reach the directory of buckets
// and every bucket's files through it: 400 InvalidBucketName, and the
// bucket's object is neither read, written nor deleted through it.
func TestDotBucketRefused(t *testing.T) {
	s := startRaw(t)
	if resp, b := s.do("PUT", "/real", nil, nil, nil); resp.StatusCode != 200 {
		t.Fatalf("create: %d %s", resp.StatusCode, b)
	}
	if st, _, b := s.put("real", "k", nil, "secret"); st != 200 {
		t.Fatalf("put: %d %s", st, b)
	}
	for _, p := range []string{"/./real/k", "/../buckets/real/k", "//real/k", "/./real", "/.."} {
		for _, method := range []string{"GET", "PUT", "DELETE", "HEAD"} {
			req, _ := http.NewRequest(method, s.e.Endpoint()+p, strings.NewReader("forged"))
			req.Header.Set("Authorization", "AWS4-HMAC-SHA256 Credential="+s.e.accessKey+"/20260101/us-east-1/s3/aws4_request, SignedHeaders=host, Signature=00")
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			// A path with an empty bucket may be refused before the
			// handler (405); any refusal will do.
			if want := http.StatusBadRequest; resp.StatusCode != want && !(p == "//real/k" && resp.StatusCode/100 == 4) {
				t.Errorf("%s %s: %d, want 400 InvalidBucketName", method, p, resp.StatusCode)
			}
		}
	}
	if resp, b := s.do("GET", "/real/k", nil, nil, nil); resp.StatusCode != 200 || string(b) != "secret" {
		t.Errorf("the object after: %d %q", resp.StatusCode, b)
	}
}
