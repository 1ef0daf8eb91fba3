package audit

import (
	"strconv"
	"time"
	"unicode/utf8"
)

// appendBody appends l's body: the JSON object of its fields in Line's
// order, the empty ones left out, without "mac" and the closing brace;
// its time is now (UTC, RFC 3339 with nanoseconds).
func appendBody(dst []byte, l Line, now time.Time) []byte {
	dst = append(dst, `{"seq":`...)
	dst = strconv.AppendUint(dst, l.Seq, 10)
	dst = append(dst, `,"time":"`...)
	dst = now.UTC().AppendFormat(dst, time.RFC3339Nano)
	dst = append(dst, '"')
	dst = appendField(dst, "type", l.Type)
	dst = appendField(dst, "request_id", l.RequestID)
	dst = appendField(dst, "access_key", l.AccessKey)
	dst = appendField(dst, "account", l.Account)
	dst = appendField(dst, "op", l.Op)
	dst = appendField(dst, "bucket", l.Bucket)
	dst = appendField(dst, "key", l.Key)
	dst = appendField(dst, "version_id", l.VersionID)
	dst = appendField(dst, "decision", l.Decision)
	dst = appendField(dst, "rule", l.Rule)
	dst = appendField(dst, "reason", l.Reason)
	dst = appendField(dst, "key_id", l.KeyID)
	dst = appendField(dst, "outcome", l.Outcome)
	if l.PrevSeq != 0 {
		dst = append(dst, `,"prev_seq":`...)
		dst = strconv.AppendUint(dst, l.PrevSeq, 10)
	}
	return appendField(dst, "prev_mac", l.PrevMAC)
}

// maxField bounds a field's bytes (an S3 key's limit): a client names
// the key, bucket, version and access key a refusal records, as long as
// its request line (64 KiB, each control byte written as 6), and a line
// must stay short enough for a restart to read back and for Verify.
const maxField = 1024

// appendField appends `,"name":"v"`, nothing when v is empty; v longer
// than maxField is cut there and says so ("…[cut, N bytes]").
func appendField(dst []byte, name, v string) []byte {
	if v == "" {
		return dst
	}
	dst = append(dst, ',', '"')
	dst = append(dst, name...)
	dst = append(dst, '"', ':')
	if len(v) <= maxField {
		return appendString(dst, v)
	}
	n := maxField
	for i := 0; i < utf8.UTFMax-1 && n > 0 && !utf8.RuneStart(v[n]); i++ {
		n--
	}
	dst = appendString(dst, v[:n])
	dst = append(dst[:len(dst)-1], "…[cut, "...)
	dst = strconv.AppendInt(dst, int64(len(v)), 10)
	return append(dst, ` bytes]"`...)
}

const hexDigits = "0123456789abcdef"

// appendString appends s as a JSON string: quote, backslash and control
// characters escaped, as are U+2028 and U+2029; invalid UTF-8 becomes
// U+FFFD, as encoding/json makes it.
func appendString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch c {
			case '"', '\\':
				dst = append(dst, '\\', c)
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hexDigits[r&0xf])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}
