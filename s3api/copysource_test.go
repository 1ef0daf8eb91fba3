package s3api

import (
	"io"
	"net/http"
	neturl "net/url"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
)

// A copy source whose versionId cannot be decoded names a version all the
// same: it is refused with S3's InvalidArgument, never read as "no
// version" (which would copy the current version instead).
func TestCopySourceBadVersionEncoding(t *testing.T) {
	for _, v := range []string{"bkt/k?versionId=%zz", "bkt/k?versionId=%", "bkt/k?a=1&versionId=%zz", "bkt/k?versionId=x%zz"} {
		_, _, vid, err := parseCopySource(v)
		if ae := toAPIError(err); err == nil || ae.Code != "InvalidArgument" || ae.Message != "Invalid version id specified" {
			t.Errorf("%q: version %q, error %v", v, vid, err)
		}
	}
	// Other parameters are not S3's to read and stay ignored, encoded or not.
	for v, want := range map[string]string{"bkt/k?%zz": "", "bkt/k?x=%zz&versionId=null": "null", "bkt/k?versionId=null&x=%": "null"} {
		if _, _, vid, err := parseCopySource(v); err != nil || vid != want {
			t.Errorf("%q: version %q, error %v", v, vid, err)
		}
	}

	url, _, _ := newBucketServer(t, SingleCredential("ak", "sk"))
	if r, body := doSigned(t, http.MethodPut, url+"/bkt/src", nil, "current"); r.StatusCode != 200 {
		t.Fatalf("PUT: %d %s", r.StatusCode, body)
	}
	r, body := doSigned(t, http.MethodPut, url+"/bkt/dst", http.Header{"X-Amz-Copy-Source": {"bkt/src?versionId=%zz"}}, "")
	if r.StatusCode != 400 || !strings.Contains(body, "<Code>InvalidArgument</Code>") {
		t.Fatalf("copy: %d %s", r.StatusCode, body)
	}
	if r, _ := doSigned(t, http.MethodHead, url+"/bkt/dst", nil, ""); r.StatusCode != 404 {
		t.Fatalf("the refused copy wrote its destination: HEAD %d", r.StatusCode)
	}
}

// A key may hold any UTF-8, NUL and other control characters included, as
// in S3: a copy source naming such a key copies that object, and one
// whose key is not UTF-8 is refused with InvalidArgument.
func TestCopySourceControlCharacters(t *testing.T) {
	url, ctx, c := newBucketServer(t, SingleCredential("ak", "sk"))
	for _, k := range []string{"a\x01b", "\x1f\x7f", "tab\tnl\n"} {
		if _, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("bkt"), Key: aws.String(k),
			Body: strings.NewReader("data of " + k)}); err != nil {
			t.Fatalf("PUT %q: %v", k, err)
		}
		if _, err := c.CopyObject(ctx, &s3.CopyObjectInput{Bucket: aws.String("bkt"), Key: aws.String("copy"),
			CopySource: aws.String("bkt/" + neturl.PathEscape(k))}); err != nil {
			t.Fatalf("copy from %q: %v", k, err)
		}
		out, err := c.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String("bkt"), Key: aws.String("copy")})
		if err != nil {
			t.Fatal(err)
		}
		got, _ := io.ReadAll(out.Body)
		out.Body.Close()
		if string(got) != "data of "+k {
			t.Fatalf("copy of %q: %q", k, got)
		}
	}
	// A NUL is read into the key, whole: the embedded store, whose file
	// names cannot hold it, answers for that key (a backend object store
	// can hold it), and nothing is copied from "a" or "a\x00".
	if _, key, _, err := parseCopySource("bkt/a%00b"); err != nil || key != "a\x00b" {
		t.Fatalf("copy source bkt/a%%00b: key %q, %v", key, err)
	}
	if _, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("bkt"), Key: aws.String("a"), Body: strings.NewReader("a")}); err != nil {
		t.Fatal(err)
	}
	_, err := c.CopyObject(ctx, &s3.CopyObjectInput{Bucket: aws.String("bkt"), Key: aws.String("nul"), CopySource: aws.String("bkt/a%00b")})
	if apiCode(err) != "NoSuchKey" {
		t.Fatalf("copy from a key the embedded store cannot hold: %v, want NoSuchKey", err)
	}
	if _, err := c.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String("bkt"), Key: aws.String("nul")}); apiCode(err) != "NotFound" {
		t.Fatalf("the refused copy wrote its destination: %v", err)
	}
	r, body := doSigned(t, http.MethodPut, url+"/bkt/copy2", http.Header{"X-Amz-Copy-Source": {"bkt/%ff%fe"}}, "")
	if r.StatusCode != 400 || !strings.Contains(body, "<Code>InvalidArgument</Code>") {
		t.Fatalf("copy from a key not UTF-8: %d %s", r.StatusCode, body)
	}
}

// TestCopySourceVersionIDOfB2: a copy source naming a version by the id
// its store gave it is taken, whatever store that is. Backblaze B2's S3
// API names versions by their file id (82 characters with "_" between its
// fields), which a copy (and a GET ?versionId) must be able to name.
func TestCopySourceVersionIDOfB2(t *testing.T) {
	const b2 = "4_z27c88f1d182b150646ff0b16_f100920ddab886245_d20150809_m232316_c100_v0009990_t0003"
	_, key, vid, err := parseCopySource("bkt/k?versionId=" + neturl.QueryEscape(b2))
	if err != nil || key != "k" || vid != b2 {
		t.Errorf("copy source of a B2 version: key %q, version %q, %v", key, vid, err)
	}
	if _, err := checkVersionID(b2); err != nil {
		t.Errorf("GET ?versionId= of a B2 version: %v", err)
	}
}
