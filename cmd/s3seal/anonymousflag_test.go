package main

import "testing"

// TestAllowAnonymousFlag: anonymous requests are off by default and
// turned on by --allow-anonymous or S3SEAL_ALLOW_ANONYMOUS.
func TestAllowAnonymousFlag(t *testing.T) {
	c, err := parseConfig(nil, env(nil))
	if err != nil || c.AllowAnonymous {
		t.Fatalf("anonymous requests allowed by default (%v)", err)
	}
	for _, a := range []struct {
		args []string
		env  map[string]string
	}{
		{[]string{"--allow-anonymous"}, nil},
		{nil, map[string]string{"S3SEAL_ALLOW_ANONYMOUS": "true"}},
	} {
		got, err := parseConfig(a.args, env(a.env))
		if err != nil || !got.AllowAnonymous {
			t.Fatalf("%v %v: anonymous requests not allowed (%v)", a.args, a.env, err)
		}
	}
}
