package main

import (
	"strings"
	"testing"
)

// An endpoint given with credentials in its URL (user:password@host) is
// logged without the password: the start-up line names the backend, and
// logs travel further than the secret files.
func TestLoggedBackendEndpointHidesURLPassword(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"http://user:pa55word@127.0.0.1:9000", "http://user:xxxxx@127.0.0.1:9000"},
		{"https://s3.example.com/prefix", "https://s3.example.com/prefix"},
		{"embedded:/var/lib/s3seal", "embedded:/var/lib/s3seal"},
		{"", ""},
	} {
		got := loggedEndpoint(tc.in)
		if strings.Contains(got, "pa55word") || got != tc.want {
			t.Errorf("loggedEndpoint(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
