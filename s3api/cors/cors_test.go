package cors

import "testing"

func TestGlobMatch(t *testing.T) {
	for _, tc := range []struct {
		p, s string
		want bool
	}{
		{"*", "", true}, {"*suffix", "foo.suffix", true}, {"*suffix", "foo.suffix.get", false},
		{"start*end", "startend", true}, {"start*end", "start12end", true}, {"start*end", "0start12end", false},
		{"prefix*", "prefix.suffix", true}, {"prefix*", "bla.prefix", false}, {"a*b*c", "aXbYbc", true}, {"abc", "abd", false},
	} {
		if got := globMatch(tc.p, tc.s); got != tc.want {
			t.Errorf("globMatch(%q, %q) = %v", tc.p, tc.s, got)
		}
	}
}
