package s3api

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/s3seal/s3seal/backend"
)

// FuzzParseCopySource: x-amz-copy-source never panics the parser; a
// refusal is InvalidArgument; an accepted source names a bucket of
// letters, digits, '.', '-' and '_' (no NUL, no '/') and a non-empty,
// valid UTF-8 key whose "." and ".." segments stay inside the bucket, and
// a well-formed version id when one is named.
func FuzzParseCopySource(f *testing.F) {
	for _, s := range []string{
		"bucket/key", "/bucket/key", "bucket/a/b/c", "bucket/a%20b", "/bucket/k?versionId=null",
		"bucket/k?versionId=3HL4kqtJlcpXroDTDmJ.rmSpXd3dIbrHY", "bucket/k?versionId=", "bucket/k?versionid=x",
		"bucket", "/bucket/", "bucket/..", "bucket/a/../..", "bucket/./a", "bucket/a/..", "bucket/%00",
		"buc%2Fket/k", "192.168.0.1/k", "bucket/%ff", "bucket/%", "%2Fbucket%2Fkey", "bucket/k?a=b&versionId=null",
		"bucket/k?%zz", "Bucket_Old.name-1/k",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		bucket, key, vid, err := parseCopySource(v)
		if err != nil {
			if toAPIError(err).Code != "InvalidArgument" {
				t.Fatalf("%q: unexpected error %v", v, err)
			}
			return
		}
		if bucket == "" || strings.ContainsAny(bucket, "/\x00") || !validCopyBucket(bucket) {
			t.Fatalf("%q: accepted bucket %q", v, bucket)
		}
		if key == "" || !utf8.ValidString(key) || !validCopyKey(key) {
			t.Fatalf("%q: accepted key %q", v, key)
		}
		if vid != "" && !backend.WellFormedVersionID(vid) {
			t.Fatalf("%q: accepted version id %q", v, vid)
		}
	})
}
