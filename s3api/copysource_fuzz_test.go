package s3api

import (
	"cmp"
	"strconv"
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

// FuzzCopySourceRange: x-amz-copy-source-range never panics its parser; a
// refusal is InvalidArgument, and a range refused against a source of
// size bytes is InvalidRange; an accepted range is 0 <= First <= Last,
// spelled as the header gave it, and one accepted against the source lies
// inside it.
func FuzzCopySourceRange(f *testing.F) {
	for _, s := range []struct {
		v    string
		size int64
	}{
		{"bytes=0-0", 1}, {"bytes=0-0", 0}, {"bytes=0-9", 10}, {"bytes=0-10", 10}, {"bytes=5-4", 10},
		{"bytes=-5", 10}, {"bytes=5-", 10}, {"bytes=0-1,2-3", 10}, {" bytes=0-1", 10}, {"Bytes=0-1", 10},
		{"bytes=00-01", 10}, {"bytes=9223372036854775806-9223372036854775807", 9223372036854775807},
		{"bytes=0-9223372036854775808", 10}, {"bytes=0-99999999999999999999", 10}, {"bytes=+1-2", 10},
	} {
		f.Add(s.v, s.size)
	}
	f.Fuzz(func(t *testing.T, v string, size int64) {
		rng, err := parseCopySourceRange(v)
		if err != nil {
			if rng != nil || toAPIError(err).Code != "InvalidArgument" || toAPIError(err).StatusCode != 400 {
				t.Fatalf("%q: refused with %v, range %+v", v, err, rng)
			}
			return
		}
		if rng == nil || rng.First < 0 || rng.Last < rng.First || rng.SuffixLen != 0 || rng.Part != 0 {
			t.Fatalf("%q: accepted %+v", v, rng)
		}
		first, last, ok := strings.Cut(strings.TrimPrefix(v, "bytes="), "-")
		if !ok || !strings.HasPrefix(v, "bytes=") || !sameNumber(first, rng.First) || !sameNumber(last, rng.Last) {
			t.Fatalf("%q: read as %+v", v, rng)
		}
		if size < 0 {
			return
		}
		if err := copyRangeWithin(rng, size); err != nil {
			if toAPIError(err).Code != "InvalidRange" || rng.Last < size {
				t.Fatalf("%q on %d bytes: refused with %v", v, size, err)
			}
			return
		}
		if rng.Last >= size {
			t.Fatalf("%q on %d bytes: accepted a range past the source", v, size)
		}
	})
}

// sameNumber says whether digits, leading zeros aside, spell n.
func sameNumber(digits string, n int64) bool {
	return cmp.Or(strings.TrimLeft(digits, "0"), "0") == strconv.FormatInt(n, 10)
}
