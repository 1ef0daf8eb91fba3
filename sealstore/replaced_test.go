package sealstore

import "testing"

// TestPriorReplacedBy: a write removes the object it overwrote when that
// object had no version of its own ("" or the null version) and the write
// made none either ("") or made the null version; a version with an id is
// only ever hidden, and a write that made a real version hides too.
func TestPriorReplacedBy(t *testing.T) {
	for _, c := range []struct {
		prior, written string
		want           bool
	}{
		{"", "", true},
		{"", "null", true}, // moto: no id on HEAD, "null" on a write, bucket without versioning
		{"null", "null", true},
		{"null", "", true},
		{"", "v2", false},
		{"null", "v2", false},
		{"v1", "", false},
		{"v1", "null", false},
		{"v1", "v2", false},
	} {
		if got := (prior{"m", c.prior}).replacedBy(c.written); got != c.want {
			t.Errorf("prior version %q, write made %q: replaced %v, want %v", c.prior, c.written, got, c.want)
		}
	}
}
