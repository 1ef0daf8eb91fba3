package s3api

import (
	"strings"
	"testing"

	"github.com/s3seal/s3seal/backend"
	"github.com/s3seal/s3seal/s3api/s3err"
)

// The bucket documents' "none" answers read as AWS words them (moto's and
// the embedded store's lack the period; versitygw's suite), and bucket
// tags are judged with AWS's rules and words.
func TestBucketDocWording(t *testing.T) {
	for code, want := range map[string]string{
		"NoSuchBucketPolicy":             "The bucket policy does not exist.",
		"NoSuchTagSet":                   "The TagSet does not exist.",
		"OwnershipControlsNotFoundError": "The bucket ownership controls were not found.",
	} {
		be := backend.Error{Code: code, StatusCode: 404, Message: strings.TrimSuffix(want, ".")}
		ae, ok := forwardErr(&be).(*s3err.Error)
		if !ok || string(ae.Code) != code || ae.StatusCode != 404 || ae.Message != want {
			t.Errorf("forwardErr(%s) = %+v, want %q", code, ae, want)
		}
	}
	for _, tc := range []struct {
		tags      []tag
		code, msg string
	}{
		{[]tag{{"user!name", "v"}}, "InvalidTag", "The TagKey you have provided is invalid"},
		{[]tag{{"ok", "ok"}, {"data%20", "v"}}, "InvalidTag", "The TagKey you have provided is invalid"},
		{[]tag{{strings.Repeat("k", 129), "v"}}, "InvalidTag", "The TagKey you have provided is invalid"},
		{[]tag{{"k", "name?test"}}, "InvalidTag", "The TagValue you have provided is invalid"},
		{[]tag{{"k", "(parentheses)"}}, "InvalidTag", "The TagValue you have provided is invalid"},
		{[]tag{{"k", strings.Repeat("v", 257)}}, "InvalidTag", "The TagValue you have provided is invalid"},
		{make([]tag, 51), "BadRequest", "Bucket tag count cannot be greater than 50"},
		{[]tag{{"aws:x", "v"}}, "InvalidTag", "Your TagKey cannot be prefixed with aws:"},
		{[]tag{{"Ünïcode key", "a+b-c=d_e.f:g/h@i"}}, "", ""},
	} {
		err := checkBucketTags(tc.tags)
		if tc.code == "" && err != nil {
			t.Errorf("%v: %v", tc.tags, err)
			continue
		}
		if ae, ok := err.(*s3err.Error); tc.code != "" && (!ok || string(ae.Code) != tc.code || ae.Message != tc.msg || ae.StatusCode != 400) {
			t.Errorf("%v: %v, want %s %q", tc.tags[:1], err, tc.code, tc.msg)
		}
	}
}
