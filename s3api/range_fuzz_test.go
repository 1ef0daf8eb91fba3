package s3api

import (
	"net/http"
	"net/url"
	"testing"

	"github.com/s3seal/s3seal/crypto"
)

// FuzzObjectRange: the part of an object a GET or HEAD asks for (a Range
// header, ?partNumber=, or both) never panics; a refusal is an S3 error
// with a code; an accepted range is well formed (a byte range with
// 0 <= First <= Last or an open end, a suffix of length >= 0, or a part
// number of 1 to 10000, never a byte range and a part at once), and
// resolves within any object size.
func FuzzObjectRange(f *testing.F) {
	for _, s := range []struct {
		rng, pn string
		size    int64
	}{
		{"bytes=0-0", "", 100}, {"bytes=5-", "", 3}, {"bytes=-3", "", 0}, {"bytes=-0", "", 10},
		{"bytes=9-3", "", 100}, {"bytes=0-1,2-3", "", 100}, {" bytes=1-2 ", "", 5},
		{"", "1", 100}, {"", "10000", 100}, {"", "0", 1}, {"", "10001", 1}, {"", "-1", 1}, {"", "+1", 1},
		{"bytes=0-1", "2", 10}, {"bytes=x", "2", 10}, {"bytes=9223372036854775807-", "", 9223372036854775807},
		{"bytes=-9223372036854775807", "", 1}, {"bytes=0-9223372036854775807", "", 9223372036854775807},
	} {
		f.Add(s.rng, s.pn, s.size)
	}
	f.Fuzz(func(t *testing.T, rangeHdr, partNum string, size int64) {
		if size < 0 {
			size = -size
		}
		if size < 0 {
			return
		}
		r := &http.Request{Header: http.Header{}, URL: &url.URL{Path: "/b/k"}}
		if rangeHdr != "" {
			r.Header.Set("Range", rangeHdr)
		}
		if partNum != "" {
			r.URL.RawQuery = "partNumber=" + url.QueryEscape(partNum)
		}
		rng, err := objectRange(r)
		if err != nil {
			if ae := toAPIError(err); ae.Code != "InvalidArgument" && ae.Code != "InvalidRequest" {
				t.Fatalf("Range %q partNumber %q: unexpected error %v", rangeHdr, partNum, err)
			}
			if partNum == "" {
				t.Fatalf("Range %q alone refused: %v", rangeHdr, err)
			}
			return
		}
		if rng == nil {
			return // the whole object
		}
		switch {
		case rng.Part != 0:
			if rng.Part < 1 || rng.Part > crypto.MaxParts || rng.First != 0 || rng.Last != 0 || rng.SuffixLen != 0 {
				t.Fatalf("partNumber %q: %+v", partNum, *rng)
			}
			if rangeHdr != "" {
				if p, _ := parseRange(rangeHdr); p != nil {
					t.Fatalf("Range %q and partNumber %q both taken", rangeHdr, partNum)
				}
			}
			return
		case rng.First < 0:
			if rng.First != -1 || rng.SuffixLen < 0 {
				t.Fatalf("Range %q: %+v", rangeHdr, *rng)
			}
		default:
			if rng.Last != -1 && rng.Last < rng.First {
				t.Fatalf("Range %q: %+v", rangeHdr, *rng)
			}
		}
		off, n, err := rng.Resolve(size)
		if err != nil {
			return
		}
		if off < 0 || n < 0 || n == 0 && size > 0 || off+n > size || off+n < off {
			t.Fatalf("Range %q on %d: off=%d n=%d", rangeHdr, size, off, n)
		}
		if rng.First >= 0 && (off != rng.First || rng.Last >= 0 && off+n-1 > rng.Last) {
			t.Fatalf("Range %q on %d: off=%d n=%d outside the range asked", rangeHdr, size, off, n)
		}
	})
}
