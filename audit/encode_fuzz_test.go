package audit

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

// FuzzLineEncoding: whatever a client puts in the fields it controls (the
// key, the bucket, the access key it claims, the version id, a reason
// quoting them), the hand-written encoder makes one line of valid UTF-8
// that splitLine (encoding/json) reads back as the same fields, each
// invalid byte as U+FFFD, and whose MAC verifies: no field can forge
// another, or a line, or break the parse.
func FuzzLineEncoding(f *testing.F) {
	for _, s := range []string{"", "k", `","decision":"allow`, "a\nb", `\u0000`, "\xff\xfe", "\u2028", `"}` + "\n" + `{"seq":1`, `,"mac":"`, "\xed\xa0\x80", "\xef\xbf\xbd"} {
		f.Add(s, s, s, s)
	}
	ch, _ := newChain(testKey)
	now := time.Date(2026, 12, 6, 10, 0, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, key, bucket, ak, reason string) {
		l := Line{Seq: 3, Type: TypeAccess, RequestID: "R", AccessKey: ak, Op: "s3:GetObject", Bucket: bucket, Key: key,
			VersionID: key, Decision: "deny", Rule: "signature", Reason: reason}
		body := appendBody(nil, l, now)
		mac := ch.next(zeroMAC, body)
		line := appendLine(nil, body, mac)
		if bytes.Count(line, []byte("\n")) != 1 || line[len(line)-1] != '\n' || !utf8.Valid(line) {
			t.Fatalf("not one line of UTF-8: %q", line)
		}
		gb, gm, got, err := splitLine(line[:len(line)-1])
		if err != nil {
			t.Fatalf("%v: %q", err, line)
		}
		if !bytes.Equal(gb, body) || gm != mac {
			t.Fatalf("split at the wrong place: %q", line)
		}
		if max(len(key), len(bucket), len(ak), len(reason)) > maxField {
			if !strings.Contains(string(line), " bytes]") {
				t.Fatalf("a long field not cut: %q", line)
			}
			return // cut: TestLongFieldsAreCut
		}
		want := l
		want.Time = "2026-12-06T10:00:00Z"
		want.MAC = string(appendHex(mac))
		norm := func(s string) string {
			return strings.ToValidUTF8(strings.Map(func(r rune) rune { return r }, s), "\ufffd")
		}
		want.AccessKey, want.Bucket, want.Key, want.VersionID, want.Reason = norm(ak), norm(bucket), norm(key), norm(key), norm(reason)
		if got != want {
			t.Fatalf("read back\n%+v\nwant\n%+v\nline %q", got, want, line)
		}
		// encoding/json reads the same as it would read its own encoding.
		var viaJSON Line
		enc, _ := json.Marshal(want)
		if err := json.Unmarshal(enc, &viaJSON); err != nil || viaJSON != got {
			t.Fatalf("encoding/json disagrees: %+v vs %+v", viaJSON, got)
		}
	})
}

func appendHex(mac [32]byte) []byte {
	const d = "0123456789abcdef"
	out := make([]byte, 0, 64)
	for _, b := range mac {
		out = append(out, d[b>>4], d[b&15])
	}
	return out
}
