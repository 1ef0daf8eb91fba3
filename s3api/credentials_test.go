package s3api

import (
	"strings"
	"testing"
)

// A malformed credentials document is located by line and column; the
// error quotes nothing of a secret, not even the character where the
// syntax broke or the digits of a mistyped value.
func TestParseCredentialsErrorsQuoteNoSecret(t *testing.T) {
	const secret = "Qz9SECRETs3cr3t"
	good := `{"credentials": [{"access_key": "a", "secret_key": "` + secret + `", "read": ["*"], "write": []}]}`
	c, err := ParseCredentials([]byte(good))
	if err != nil || c["a"].SecretKey != secret {
		t.Fatalf("good document: %v, %v", c, err)
	}
	cases := map[string]struct{ doc, want string }{
		"secret unquoted": {"{\"credentials\": [\n  {\"access_key\": \"a\",\n   \"secret_key\": " + secret + "}]}", "line 3, column"},
		"secret a number": {"{\"credentials\": [\n  {\"access_key\": \"a\", \"secret_key\": 987654321}]}", "line 2, column"},
		"bad escape":      {`{"credentials": [{"access_key": "a", "secret_key": "Qz9\` + secret + `"}]}`, ""},
		"truncated":       {`{"credentials": [{"access_key": "a", "secret_key": "` + secret, ""},
		"unknown field":   {"{\"credentials\": [{\"access_key\": \"a\", \"secret_key\": \"" + secret + "\", \"writ\": []}]}", ""},
		"trailing data":   {good + ` Qz9`, ""},
		"no credentials":  {`{"credentials": []}`, ""},
		"no secret":       {`{"credentials": [{"access_key": "a"}]}`, ""},
	}
	for name, tc := range cases {
		_, err := ParseCredentials([]byte(tc.doc))
		if err == nil {
			t.Errorf("%s: accepted", name)
			continue
		}
		msg := err.Error()
		for _, leak := range []string{"Q", "z9", "SECRET", "987", "'"} {
			if strings.Contains(msg, leak) {
				t.Errorf("%s: error %q quotes %q", name, msg, leak)
			}
		}
		if tc.want != "" && !strings.Contains(msg, tc.want) {
			t.Errorf("%s: error %q, want it to name %q", name, msg, tc.want)
		}
	}
}

// An access key listed twice is refused, whichever entry comes last: the
// document does not say which secret and grants it has.
func TestParseCredentialsRefusesRepeatedAccessKey(t *testing.T) {
	doc := `{"credentials": [{"access_key": "a", "secret_key": "one", "read": ["*"]},
		{"access_key": "a", "secret_key": "two", "write": ["*"]}]}`
	if c, err := ParseCredentials([]byte(doc)); err == nil || !strings.Contains(err.Error(), "appears twice") {
		t.Fatalf("got %v, %v; want an error naming the repeated key", c, err)
	}
}
