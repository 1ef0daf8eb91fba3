package policy

import (
	"strings"
	"testing"
)

// doc is a one-statement policy with the given statement fields.
func doc(fields string) []byte {
	return []byte(`{"Version":"2012-10-17","Statement":[{` + fields + `}]}`)
}

var alice = Who{AWS: []string{"111122223333", "arn:aws:iam::111122223333:user/AKALICE", "arn:aws:iam::111122223333:root", "AKALICE"},
	Canonical: strings.Repeat("a", 64)}

func values(m map[string][]string) Values {
	return func(k string) ([]string, bool) { v, ok := m[k]; return v, ok }
}

func TestEvaluateTable(t *testing.T) {
	const getObj = `"Action":"s3:GetObject","Resource":"arn:aws:s3:::bkt/*"`
	cases := []struct {
		name   string
		fields string
		who    Who
		action string
		res    string
		vals   map[string][]string
		want   Effect
	}{
		{"allow everyone", `"Effect":"Allow","Principal":"*",` + getObj, alice, "s3:GetObject", "arn:aws:s3:::bkt/k", nil, Allow},
		{"AWS * is everyone, anonymous too", `"Effect":"Allow","Principal":{"AWS":"*"},` + getObj, Who{Anonymous: true}, "s3:GetObject", "arn:aws:s3:::bkt/k", nil, Allow},
		{"deny", `"Effect":"Deny","Principal":"*",` + getObj, alice, "s3:GetObject", "arn:aws:s3:::bkt/k", nil, Deny},
		{"other action", `"Effect":"Allow","Principal":"*",` + getObj, alice, "s3:PutObject", "arn:aws:s3:::bkt/k", nil, NoOpinion},
		{"action case-insensitive", `"Effect":"Allow","Principal":"*","Action":"S3:getobj*","Resource":"arn:aws:s3:::bkt/*"`, alice, "s3:GetObject", "arn:aws:s3:::bkt/k", nil, Allow},
		{"s3:* on bucket only", `"Effect":"Allow","Principal":"*","Action":"s3:*","Resource":"arn:aws:s3:::bkt"`, alice, "s3:GetObject", "arn:aws:s3:::bkt/k", nil, NoOpinion},
		{"resource ?", `"Effect":"Allow","Principal":"*","Action":"*","Resource":"arn:aws:s3:::bkt/k?"`, alice, "s3:GetObject", "arn:aws:s3:::bkt/k1", nil, Allow},
		{"resource * crosses /", `"Effect":"Allow","Principal":"*","Action":"*","Resource":"arn:aws:s3:::bkt/a*"`, alice, "s3:GetObject", "arn:aws:s3:::bkt/a/b/c", nil, Allow},
		{"resource case-sensitive", `"Effect":"Allow","Principal":"*","Action":"*","Resource":"arn:aws:s3:::bkt/A"`, alice, "s3:GetObject", "arn:aws:s3:::bkt/a", nil, NoOpinion},
		{"NotResource", `"Effect":"Deny","Principal":"*","Action":"*","NotResource":"arn:aws:s3:::bkt/public/*"`, alice, "s3:GetObject", "arn:aws:s3:::bkt/private/x", nil, Deny},
		{"NotAction", `"Effect":"Deny","Principal":"*","NotAction":"s3:Get*","Resource":"*"`, alice, "s3:GetObject", "arn:aws:s3:::bkt/x", nil, NoOpinion},
		{"by account", `"Effect":"Allow","Principal":{"AWS":"111122223333"},` + getObj, alice, "s3:GetObject", "arn:aws:s3:::bkt/k", nil, Allow},
		{"by root ARN", `"Effect":"Allow","Principal":{"AWS":["arn:aws:iam::111122223333:root"]},` + getObj, alice, "s3:GetObject", "arn:aws:s3:::bkt/k", nil, Allow},
		{"by user ARN", `"Effect":"Allow","Principal":{"AWS":"arn:aws:iam::111122223333:user/AKALICE"},` + getObj, alice, "s3:GetObject", "arn:aws:s3:::bkt/k", nil, Allow},
		{"by access key", `"Effect":"Allow","Principal":{"AWS":"AKALICE"},` + getObj, alice, "s3:GetObject", "arn:aws:s3:::bkt/k", nil, Allow},
		{"by canonical id", `"Effect":"Allow","Principal":{"CanonicalUser":"` + strings.Repeat("a", 64) + `"},` + getObj, alice, "s3:GetObject", "arn:aws:s3:::bkt/k", nil, Allow},
		{"other account", `"Effect":"Allow","Principal":{"AWS":"999999999999"},` + getObj, alice, "s3:GetObject", "arn:aws:s3:::bkt/k", nil, NoOpinion},
		{"named principal not anonymous", `"Effect":"Allow","Principal":{"AWS":"111122223333"},` + getObj, Who{Anonymous: true}, "s3:GetObject", "arn:aws:s3:::bkt/k", nil, NoOpinion},
		{"NotPrincipal deny others", `"Effect":"Deny","NotPrincipal":{"AWS":"111122223333"},` + getObj, Who{AWS: []string{"999999999999"}}, "s3:GetObject", "arn:aws:s3:::bkt/k", nil, Deny},
		{"NotPrincipal spares", `"Effect":"Deny","NotPrincipal":{"AWS":"111122223333"},` + getObj, alice, "s3:GetObject", "arn:aws:s3:::bkt/k", nil, NoOpinion},
		{"StringEquals", `"Effect":"Allow","Principal":"*",` + getObj + `,"Condition":{"StringEquals":{"s3:ExistingObjectTag/security":"public"}}`, alice, "s3:GetObject", "arn:aws:s3:::bkt/k",
			map[string][]string{"s3:existingobjecttag/security": {"public"}}, Allow},
		{"StringEquals other value", `"Effect":"Allow","Principal":"*",` + getObj + `,"Condition":{"StringEquals":{"s3:ExistingObjectTag/security":"public"}}`, alice, "s3:GetObject", "arn:aws:s3:::bkt/k",
			map[string][]string{"s3:existingobjecttag/security": {"private"}}, NoOpinion},
		{"absent key false", `"Effect":"Allow","Principal":"*",` + getObj + `,"Condition":{"StringEquals":{"s3:ExistingObjectTag/security":"public"}}`, alice, "s3:GetObject", "arn:aws:s3:::bkt/k", nil, NoOpinion},
		{"absent key negated true", `"Effect":"Deny","Principal":"*",` + getObj + `,"Condition":{"StringNotEquals":{"s3:x-amz-server-side-encryption":"AES256"}}`, alice, "s3:GetObject", "arn:aws:s3:::bkt/k", nil, Deny},
		{"StringNotEquals equal", `"Effect":"Deny","Principal":"*",` + getObj + `,"Condition":{"StringNotEquals":{"s3:x-amz-server-side-encryption":"AES256"}}`, alice, "s3:GetObject", "arn:aws:s3:::bkt/k",
			map[string][]string{"s3:x-amz-server-side-encryption": {"AES256"}}, NoOpinion},
		{"IfExists absent", `"Effect":"Allow","Principal":"*",` + getObj + `,"Condition":{"StringLikeIfExists":{"aws:Referer":"http://www.example.com/*"}}`, alice, "s3:GetObject", "arn:aws:s3:::bkt/k", nil, Allow},
		{"IfExists present no match", `"Effect":"Allow","Principal":"*",` + getObj + `,"Condition":{"StringLikeIfExists":{"aws:Referer":"http://www.example.com/*"}}`, alice, "s3:GetObject", "arn:aws:s3:::bkt/k",
			map[string][]string{"aws:referer": {"http://example.com"}}, NoOpinion},
		{"Null true on absent", `"Effect":"Deny","Principal":"*",` + getObj + `,"Condition":{"Null":{"s3:x-amz-server-side-encryption":"true"}}`, alice, "s3:GetObject", "arn:aws:s3:::bkt/k", nil, Deny},
		{"Null true on present", `"Effect":"Deny","Principal":"*",` + getObj + `,"Condition":{"Null":{"s3:x-amz-server-side-encryption":true}}`, alice, "s3:GetObject", "arn:aws:s3:::bkt/k",
			map[string][]string{"s3:x-amz-server-side-encryption": {"AES256"}}, NoOpinion},
		{"IgnoreCase", `"Effect":"Allow","Principal":"*",` + getObj + `,"Condition":{"StringEqualsIgnoreCase":{"s3:x-amz-acl":"PRIVATE"}}`, alice, "s3:GetObject", "arn:aws:s3:::bkt/k",
			map[string][]string{"s3:x-amz-acl": {"private"}}, Allow},
		{"NumericLessThanEquals", `"Effect":"Allow","Principal":"*",` + getObj + `,"Condition":{"NumericLessThanEquals":{"s3:max-keys":"10"}}`, alice, "s3:GetObject", "arn:aws:s3:::bkt/k",
			map[string][]string{"s3:max-keys": {"10"}}, Allow},
		{"NumericGreaterThan", `"Effect":"Allow","Principal":"*",` + getObj + `,"Condition":{"NumericGreaterThan":{"s3:max-keys":10}}`, alice, "s3:GetObject", "arn:aws:s3:::bkt/k",
			map[string][]string{"s3:max-keys": {"10"}}, NoOpinion},
		{"DateLessThan", `"Effect":"Allow","Principal":"*",` + getObj + `,"Condition":{"DateLessThan":{"aws:CurrentTime":"2030-01-01T00:00:00Z"}}`, alice, "s3:GetObject", "arn:aws:s3:::bkt/k",
			map[string][]string{"aws:currenttime": {"2026-12-02T03:00:00Z"}}, Allow},
		{"DateGreaterThan epoch", `"Effect":"Allow","Principal":"*",` + getObj + `,"Condition":{"DateGreaterThan":{"aws:CurrentTime":"1893456000"}}`, alice, "s3:GetObject", "arn:aws:s3:::bkt/k",
			map[string][]string{"aws:currenttime": {"2026-12-02T03:00:00Z"}}, NoOpinion},
		{"Bool", `"Effect":"Deny","Principal":"*",` + getObj + `,"Condition":{"Bool":{"aws:SecureTransport":"false"}}`, alice, "s3:GetObject", "arn:aws:s3:::bkt/k",
			map[string][]string{"aws:securetransport": {"false"}}, Deny},
		{"IpAddress", `"Effect":"Allow","Principal":"*",` + getObj + `,"Condition":{"IpAddress":{"aws:SourceIp":["10.0.0.0/8","192.0.2.1"]}}`, alice, "s3:GetObject", "arn:aws:s3:::bkt/k",
			map[string][]string{"aws:sourceip": {"10.1.2.3"}}, Allow},
		{"NotIpAddress", `"Effect":"Deny","Principal":"*",` + getObj + `,"Condition":{"NotIpAddress":{"aws:SourceIp":"10.0.0.0/8"}}`, alice, "s3:GetObject", "arn:aws:s3:::bkt/k",
			map[string][]string{"aws:sourceip": {"127.0.0.1"}}, Deny},
		{"IPv6", `"Effect":"Allow","Principal":"*",` + getObj + `,"Condition":{"IpAddress":{"aws:SourceIp":"2001:db8::/32"}}`, alice, "s3:GetObject", "arn:aws:s3:::bkt/k",
			map[string][]string{"aws:sourceip": {"2001:db8::1"}}, Allow},
		{"ArnLike", `"Effect":"Allow","Principal":"*",` + getObj + `,"Condition":{"ArnLike":{"aws:PrincipalArn":"arn:aws:iam::111122223333:*"}}`, alice, "s3:GetObject", "arn:aws:s3:::bkt/k",
			map[string][]string{"aws:principalarn": {"arn:aws:iam::111122223333:user/AKALICE"}}, Allow},
		{"ForAnyValue", `"Effect":"Allow","Principal":"*",` + getObj + `,"Condition":{"ForAnyValue:StringEquals":{"s3:RequestObjectTagKeys":["a","b"]}}`, alice, "s3:GetObject", "arn:aws:s3:::bkt/k",
			map[string][]string{"s3:requestobjecttagkeys": {"c", "b"}}, Allow},
		{"ForAllValues not all", `"Effect":"Allow","Principal":"*",` + getObj + `,"Condition":{"ForAllValues:StringEquals":{"s3:RequestObjectTagKeys":["a","b"]}}`, alice, "s3:GetObject", "arn:aws:s3:::bkt/k",
			map[string][]string{"s3:requestobjecttagkeys": {"c", "b"}}, NoOpinion},
		{"ForAllValues absent", `"Effect":"Allow","Principal":"*",` + getObj + `,"Condition":{"ForAllValues:StringEquals":{"s3:RequestObjectTagKeys":["a","b"]}}`, alice, "s3:GetObject", "arn:aws:s3:::bkt/k", nil, Allow},
		{"ForAnyValue absent", `"Effect":"Allow","Principal":"*",` + getObj + `,"Condition":{"ForAnyValue:StringEquals":{"s3:RequestObjectTagKeys":"a"}}`, alice, "s3:GetObject", "arn:aws:s3:::bkt/k", nil, NoOpinion},
		{"two keys AND", `"Effect":"Allow","Principal":"*",` + getObj + `,"Condition":{"StringEquals":{"s3:prefix":"a","s3:delimiter":"/"}}`, alice, "s3:GetObject", "arn:aws:s3:::bkt/k",
			map[string][]string{"s3:prefix": {"a"}}, NoOpinion},
		{"key case-insensitive", `"Effect":"Allow","Principal":"*",` + getObj + `,"Condition":{"StringEquals":{"S3:Prefix":"a"}}`, alice, "s3:GetObject", "arn:aws:s3:::bkt/k",
			map[string][]string{"s3:prefix": {"a"}}, Allow},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p, err := Parse(doc(c.fields))
			if err != nil {
				t.Fatal(err)
			}
			got := p.Evaluate(Request{Who: c.who, Action: c.action, Resource: c.res, Values: values(c.vals)}, nil)
			if got != c.want {
				t.Errorf("got %v, want %v", got, c.want)
			}
		})
	}
}

func TestDenyWinsOverAllow(t *testing.T) {
	p, err := Parse([]byte(`{"Statement":[
		{"Effect":"Allow","Principal":"*","Action":"s3:PutObject","Resource":"arn:aws:s3:::b/*"},
		{"Effect":"Deny","Principal":"*","Action":"s3:PutObject","Resource":"arn:aws:s3:::b/*","Condition":{"StringLike":{"s3:x-amz-acl":"public*"}}}]}`))
	if err != nil {
		t.Fatal(err)
	}
	r := Request{Who: alice, Action: "s3:PutObject", Resource: "arn:aws:s3:::b/k"}
	if got := p.Evaluate(r, nil); got != Allow {
		t.Errorf("without x-amz-acl: %v", got)
	}
	r.Values = values(map[string][]string{"s3:x-amz-acl": {"public-read"}})
	if got := p.Evaluate(r, nil); got != Deny {
		t.Errorf("with public-read: %v", got)
	}
	if got := p.Evaluate(r, func(Statement) bool { return true }); got != Deny {
		t.Errorf("skipping the Allows leaves the Deny: %v", got)
	}
}

func TestParseRefusesMalformed(t *testing.T) {
	for name, d := range map[string]string{
		"not json":             `{`,
		"no statement":         `{"Version":"2012-10-17"}`,
		"empty statement":      `{"Statement":[]}`,
		"bad effect":           `{"Statement":[{"Effect":"Maybe","Principal":"*","Action":"s3:*","Resource":"*"}]}`,
		"no principal":         `{"Statement":[{"Effect":"Allow","Action":"s3:*","Resource":"*"}]}`,
		"both principals":      `{"Statement":[{"Effect":"Allow","Principal":"*","NotPrincipal":"*","Action":"s3:*","Resource":"*"}]}`,
		"principal type":       `{"Statement":[{"Effect":"Allow","Principal":{"Bogus":"x"},"Action":"s3:*","Resource":"*"}]}`,
		"no action":            `{"Statement":[{"Effect":"Allow","Principal":"*","Resource":"*"}]}`,
		"iam action":           `{"Statement":[{"Effect":"Allow","Principal":"*","Action":"iam:GetUser","Resource":"*"}]}`,
		"no resource":          `{"Statement":[{"Effect":"Allow","Principal":"*","Action":"s3:*"}]}`,
		"unknown operator":     `{"Statement":[{"Effect":"Allow","Principal":"*","Action":"s3:*","Resource":"*","Condition":{"StringSortOf":{"s3:prefix":"a"}}}]}`,
		"Null IfExists":        `{"Statement":[{"Effect":"Allow","Principal":"*","Action":"s3:*","Resource":"*","Condition":{"NullIfExists":{"s3:prefix":"true"}}}]}`,
		"bad number":           `{"Statement":[{"Effect":"Allow","Principal":"*","Action":"s3:*","Resource":"*","Condition":{"NumericEquals":{"s3:max-keys":"ten"}}}]}`,
		"bad IP":               `{"Statement":[{"Effect":"Allow","Principal":"*","Action":"s3:*","Resource":"*","Condition":{"IpAddress":{"aws:SourceIp":"10.0.0/33"}}}]}`,
		"bad date":             `{"Statement":[{"Effect":"Allow","Principal":"*","Action":"s3:*","Resource":"*","Condition":{"DateLessThan":{"aws:CurrentTime":"tomorrow"}}}]}`,
		"condition not object": `{"Statement":[{"Effect":"Allow","Principal":"*","Action":"s3:*","Resource":"*","Condition":"x"}]}`,
		"unknown field":        `{"Statement":[{"Effect":"Allow","Principal":"*","Action":"s3:*","Resource":"*","Extra":1}]}`,
	} {
		if _, err := Parse([]byte(d)); !IsMalformed(err) {
			t.Errorf("%s: %v, want a MalformedPolicy error", name, err)
		}
	}
}

func TestIsPublic(t *testing.T) {
	const ls = `"Action":"s3:ListBucket","Resource":"arn:aws:s3:::b"`
	cases := []struct {
		fields string
		want   bool
	}{
		{`"Effect":"Allow","Principal":{"AWS":"*"},` + ls, true},
		{`"Effect":"Allow","Principal":"*",` + ls, true},
		{`"Effect":"Deny","Principal":"*",` + ls, false},
		{`"Effect":"Allow","Principal":{"AWS":"arn:aws:iam::s3tenant1:root"},` + ls, false},
		{`"Effect":"Allow","Principal":{"AWS":"arn:aws:iam::*:root"},` + ls, true},
		{`"Effect":"Allow","Principal":"*",` + ls + `,"Condition":{"IpAddress":{"aws:SourceIp":"10.0.0.0/32"}}`, false},
		{`"Effect":"Allow","Principal":"*",` + ls + `,"Condition":{"IpAddress":{"aws:SourceIp":"0.0.0.0/0"}}`, true},
		{`"Effect":"Allow","Principal":"*",` + ls + `,"Condition":{"StringEquals":{"aws:SourceAccount":"111122223333"}}`, false},
		{`"Effect":"Allow","Principal":"*",` + ls + `,"Condition":{"StringLike":{"aws:SourceAccount":"1111*"}}`, true},
		{`"Effect":"Allow","Principal":"*",` + ls + `,"Condition":{"StringNotEquals":{"aws:SourceAccount":"111122223333"}}`, true},
		{`"Effect":"Allow","Principal":"*",` + ls + `,"Condition":{"StringEquals":{"s3:prefix":"public/"}}`, true},
	}
	for i, c := range cases {
		p, err := Parse(doc(c.fields))
		if err != nil {
			t.Fatal(i, err)
		}
		if got := p.IsPublic(); got != c.want {
			t.Errorf("%d %s: IsPublic %v, want %v", i, c.fields, got, c.want)
		}
	}
}

func TestCachedParsesOnce(t *testing.T) {
	d := doc(`"Sid":"cached","Effect":"Allow","Principal":"*","Action":"s3:*","Resource":"*"`)
	a, err := Cached(d)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := Cached(append([]byte(nil), d...))
	if a != b {
		t.Error("the same document was parsed twice")
	}
	if _, err := Cached([]byte(`{`)); err == nil {
		t.Error("a malformed document was cached")
	}
}

func TestMatch(t *testing.T) {
	for _, c := range []struct {
		p, s string
		want bool
	}{
		{"*", "", true}, {"a*c", "abbbc", true}, {"a*c", "abbbd", false}, {"a?c", "abc", true},
		{"a?c", "ac", false}, {"*/*", "b/k", true}, {"é?", "éé", true}, {"**a", "xa", true},
	} {
		if got := Match(c.p, c.s, false); got != c.want {
			t.Errorf("Match(%q, %q) = %v", c.p, c.s, got)
		}
	}
}

func FuzzParse(f *testing.F) {
	f.Add([]byte(`{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Principal":"*","Action":"s3:GetObject","Resource":"arn:aws:s3:::b/*","Condition":{"StringLike":{"s3:prefix":["a*"]}}}]}`))
	f.Add([]byte(`{"Statement":{"Effect":"Deny","NotPrincipal":{"AWS":["1"]},"NotAction":"s3:*","NotResource":"*","Condition":{"ForAllValues:NumericLessThanIfExists":{"k":1}}}}`))
	f.Fuzz(func(t *testing.T, d []byte) {
		p, err := Parse(d)
		if err != nil {
			if !IsMalformed(err) {
				t.Fatalf("an error that is not MalformedPolicy: %v", err)
			}
			return
		}
		// Whatever parses evaluates, for anyone, without panicking.
		for _, who := range []Who{alice, {Anonymous: true}} {
			_ = p.Evaluate(Request{Who: who, Action: "s3:GetObject", Resource: "arn:aws:s3:::b/k",
				Values: values(map[string][]string{"k": {"1"}, "s3:prefix": {"a"}})}, nil)
		}
		_ = p.IsPublic()
	})
}
