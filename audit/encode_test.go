package audit

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

// TestBodyIsJSON: a line's body, closed, is the JSON of the line, for
// keys of every awkward kind (an S3 key may hold any byte).
func TestBodyIsJSON(t *testing.T) {
	now := time.Date(2026, 12, 6, 10, 0, 0, 123, time.UTC)
	for _, key := range []string{"", "plain/key", `quo"te\back`, "ctl\x00\x01\n\r\t\x1f", "bad\xff\xfeutf8", "sep\u2028\u2029", "ünï©ødé/日本", "<&>"} {
		l := Line{Seq: 42, Type: TypeAccess, AccessKey: "ak", Op: "s3:GetObject", Bucket: "b", Key: key, Decision: "allow", Rule: "owner", PrevSeq: 7, PrevMAC: strings.Repeat("0", 64)}
		body := appendBody(nil, l, now)
		var got Line
		if err := json.Unmarshal(append(body, '}'), &got); err != nil {
			t.Fatalf("key %q: %v: %s", key, err, body)
		}
		want := l
		var valid strings.Builder
		for _, r := range key { // each invalid byte is one U+FFFD
			valid.WriteRune(r)
		}
		want.Key = valid.String()
		want.Time = "2026-12-06T10:00:00.000000123Z"
		if got != want {
			t.Errorf("key %q: read back %+v, want %+v", key, got, want)
		}
		if !utf8.Valid(body) || strings.ContainsAny(string(body), "\n\r") {
			t.Errorf("key %q: the body is not one line of UTF-8: %q", key, body)
		}
	}
}
