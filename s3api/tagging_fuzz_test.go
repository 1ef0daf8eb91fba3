package s3api

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// tagsWithinLimits checks what checkTags promises of accepted tags.
func tagsWithinLimits(t *testing.T, in string, tags []tag, limit int) {
	t.Helper()
	if len(tags) > limit {
		t.Fatalf("%.80q: accepted %d tags", in, len(tags))
	}
	seen := map[string]bool{}
	for _, tg := range tags {
		if tg.Key == "" || !utf8.ValidString(tg.Key) || utf8.RuneCountInString(tg.Key) > maxTagKey ||
			!utf8.ValidString(tg.Value) || utf8.RuneCountInString(tg.Value) > maxTagValue ||
			!tagChars(tg.Key) || !tagChars(tg.Value) || strings.HasPrefix(strings.ToLower(tg.Key), "aws:") || seen[tg.Key] {
			t.Fatalf("%.80q: accepted tag %q=%q", in, tg.Key, tg.Value)
		}
		seen[tg.Key] = true
	}
}

func tagErrorCode(code string) bool {
	return code == "InvalidArgument" || code == "InvalidTag" || code == "BadRequest" || code == "MalformedXML"
}

// FuzzParseTagHeader: x-amz-tagging (a URL query string) never panics the
// parser; a refusal is InvalidArgument, InvalidTag or BadRequest; accepted
// tags are within S3's limits (10 tags, keys of 1 to 128 and values of at
// most 256 characters, of the allowed characters, no aws: key, no key
// twice), and their x-amz-tagging encoding reads back the same.
func FuzzParseTagHeader(f *testing.F) {
	for _, s := range []string{
		"k=v", "k1=v1&k2=v2", "k=", "k", "=v", "&&k=v&", "a%20b=c+d", "k=v&k=w", "aws:x=1", "AWS:x=1",
		"k=%zz", "%ff=v", "k=a%2Bb", "k=caf%C3%A9", strings.Repeat("k", 129) + "=v", "k=" + strings.Repeat("v", 257),
		"a=1&b=2&c=3&d=4&e=5&f=6&g=7&h=8&i=9&j=10&k=11", "k=v;w", "k=%00",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		tags, err := parseTagHeader(v)
		if err != nil {
			if ae := toAPIError(err); !tagErrorCode(string(ae.Code)) || ae.StatusCode != 400 {
				t.Fatalf("%.80q: unexpected error %v", v, err)
			}
			return
		}
		tagsWithinLimits(t, v, tags, maxObjectTags)
		back, err := parseTagHeader(encodeTags(tags))
		if err != nil || len(back) != len(tags) {
			t.Fatalf("%.80q: re-encoded %q: %v", v, encodeTags(tags), err)
		}
		for i := range back {
			if back[i] != tags[i] {
				t.Fatalf("%.80q: tag %d read back as %q=%q, not %q=%q", v, i, back[i].Key, back[i].Value, tags[i].Key, tags[i].Value)
			}
		}
	})
}

// FuzzParseTagBody: a Tagging document (PutObjectTagging, a POST form's
// tagging field, PutBucketTagging) never panics its parsers; a refusal is
// MalformedXML, InvalidTag or BadRequest; accepted tags are within the
// object (10) or bucket (50) limits.
func FuzzParseTagBody(f *testing.F) {
	for _, s := range []string{
		`<Tagging><TagSet><Tag><Key>k</Key><Value>v</Value></Tag></TagSet></Tagging>`,
		`<Tagging xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><TagSet></TagSet></Tagging>`,
		`<Tagging><TagSet><Tag><Key>k</Key><Value>v</Value></Tag><Tag><Key>k</Key><Value>w</Value></Tag></TagSet></Tagging>`,
		`<Tagging><TagSet><Tag><Key></Key><Value>v</Value></Tag></TagSet></Tagging>`,
		`<Tagging><TagSet><Tag><Key>aws:k</Key></Tag></TagSet></Tagging>`,
		`<Tagging><TagSet><Tag><Key>&#0;</Key></Tag></TagSet></Tagging>`,
		`<Tagging><TagSet><Tag><Key>k</Key><Value>v</Value></Tag></TagSet></Tagging><x/>`,
		`<Other/>`, ``, `<Tagging>`,
		`<Tagging><TagSet>` + strings.Repeat(`<Tag><Key>k</Key></Tag>`, 11) + `</TagSet></Tagging>`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		for _, parse := range []struct {
			limit int
			fn    func([]byte) ([]tag, error)
		}{
			{maxObjectTags, func(b []byte) ([]tag, error) { return parseTagBody(b, maxObjectTags) }},
			{maxBucketTags, parseBucketTagBody},
		} {
			tags, err := parse.fn(body)
			if err != nil {
				if ae := toAPIError(err); !tagErrorCode(string(ae.Code)) || ae.Code == "InvalidArgument" || ae.StatusCode != 400 {
					t.Fatalf("%.80q: unexpected error %v", body, err)
				}
				continue
			}
			tagsWithinLimits(t, string(body), tags, parse.limit)
		}
	})
}
