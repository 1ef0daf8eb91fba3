package policy

import (
	"reflect"
	"testing"
)

// TestCheckInS3Words: a policy put on a bucket is judged as S3 judges it,
// in its words, what it names before its grammar (in every statement
// first), and what passes is the policy Parse reads from the same bytes.
func TestCheckInS3Words(t *testing.T) {
	known := func(n string) bool { return n == "AKALICE" }
	const objs = `"Resource":"arn:aws:s3:::bkt/*"`
	for _, tc := range []struct{ doc, msg string }{
		{` [`, "Policies must be valid JSON and the first byte must be '{'"},
		{`{"Statement":[]} x`, "This policy contains invalid Json"},
		{`{"Statement":[{"Effect":1,"Principal":"*","Action":"s3:GetObject",` + objs + `}]}`, "This policy contains invalid Json"},
		{`{"Statement":[{"Effect":null,"Principal":"*","Action":"s3:GetObject",` + objs + `}]}`, "Missing required field Effect"},
		{`{"Version":"2012-10-16","Statement":[{"Effect":"Deny"}]}`, "The policy must contain a valid version string"},
		{`{"Statement":[{"Effect":"Allow","NotPrincipal":"*","Action":"s3:GetObject",` + objs + `}]}`, "Invalid principal in policy"},
		{`{"Statement":[{"Effect":"Allow","Principal":{"AWS":"AKBOB"},"Action":"s3:GetObject",` + objs + `}]}`, "Invalid principal in policy"},
		{`{"Statement":[{"Effect":"Allow","Principal":{"CanonicalUser":"abc"},"Action":"s3:GetObject",` + objs + `}]}`, "Invalid principal in policy"},
		{`{"Statement":[{"Effect":"Allow","Principal":"*","Action":"s3:GetObjectz",` + objs + `}]}`, "Policy has invalid action"},
		{`{"Statement":[{"Effect":"Allow","Principal":"*","Action":"s3:GetObject","Resource":"arn:aws:s3:::other/*"}]}`, "Policy has invalid resource"},
		{`{"Statement":[{"Effect":"Allow","Principal":"*","Action":"s3:ListBucket",` + objs + `}]}`, "Action does not apply to any resource(s) in statement"},
		// The grammar after the names of every statement: the second
		// statement's principal is refused before the first's condition.
		{`{"Statement":[{"Effect":"Allow","Principal":"*","Action":"s3:GetObject",` + objs + `,"Condition":{"Sorts":{"k":"v"}}},` +
			`{"Effect":"Allow","Principal":"nobody","Action":"s3:GetObject",` + objs + `}]}`, "Invalid principal in policy"},
		{`{"Statement":[{"Effect":"Allow","Principal":"*","Action":"s3:GetObject",` + objs + `,"Condition":{"Sorts":{"k":"v"}}}]}`, "Invalid Condition type : Sorts"},
		{`{"Statement":[{"Sid":1,"Effect":"Allow","Principal":"*","Action":"s3:GetObject",` + objs + `}]}`, "Statement IDs (SID) must be strings"},
		// Policy variables, which s3seal would compare literally: a Deny
		// naming one would deny nothing.
		{`{"Version":"2012-10-17","Statement":[{"Effect":"Deny","Principal":"*","Action":"s3:GetObject","Resource":"arn:aws:s3:::bkt/${aws:username}/*"}]}`,
			"s3seal does not expand policy variables (${...}) in Resource: write the values out"},
		{`{"Version":"2012-10-17","Statement":[{"Effect":"Deny","Principal":"*","Action":"s3:GetObject","NotResource":["arn:aws:s3:::bkt/\u0024{aws:userid}"]}]}`,
			"s3seal does not expand policy variables (${...}) in NotResource: write the values out"},
		{`{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Principal":"*","Action":"s3:ListBucket","Resource":"arn:aws:s3:::bkt",` +
			`"Condition":{"StringLike":{"s3:prefix":["home/${aws:username}/*"]}}}]}`,
			"s3seal does not expand policy variables (${...}) in Condition: write the values out"},
	} {
		_, err := Check([]byte(tc.doc), "bkt", known)
		if !IsMalformed(err) || err.Error() != tc.msg {
			t.Errorf("%s: %v, want %q", tc.doc, err, tc.msg)
		}
	}
	good := []byte(`{"Version":"2012-10-17","Statement":[{"Sid":"a","Effect":"Deny","NotPrincipal":{"AWS":["AKALICE","111122223333"]},` +
		`"Action":["s3:Get*","s3:ListBucket"],"Resource":["arn:aws:s3:::bkt","arn:aws:s3:::bkt/*"],"Condition":{"Bool":{"aws:SecureTransport":false}}}]}`)
	judged, err := Check(good, "bkt", known)
	if err != nil {
		t.Fatal(err)
	}
	kept, err := Parse(good)
	if err != nil || !reflect.DeepEqual(judged, kept) {
		t.Fatalf("Parse of what Check passed: %v, %+v want %+v", err, kept, judged)
	}
	// Kept, a policy is read by its grammar alone: an access key it names
	// that s3seal no longer has, or another bucket, refuses nothing else.
	if _, err := Parse([]byte(`{"Statement":[{"Effect":"Allow","Principal":{"AWS":"AKGONE"},"Action":"s3:GetObject","Resource":"arn:aws:s3:::old/*"}]}`)); err != nil {
		t.Errorf("a kept policy naming a retired key: %v", err)
	}
}

func TestIsAction(t *testing.T) {
	for a, want := range map[string]bool{"s3:GetObject": true, "s3:DeleteObjectVersion": true, "s3:getobject": false,
		"GetObject": false, "s3:Get*": false, "s3:HeadObject": false} {
		if IsAction(a) != want {
			t.Errorf("IsAction(%q) = %v", a, !want)
		}
	}
}
