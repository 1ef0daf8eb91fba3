package access

import "testing"

// TestDecisionRule checks that each decision names the rule that took
// it, a policy's with the statement that decided (the audit trail's
// "rule").
func TestDecisionRule(t *testing.T) {
	p := pol(t,
		`{"Sid":"ReadAll","Effect":"Allow","Principal":"*","Action":"s3:GetObject","Resource":"arn:aws:s3:::bkt/*"}`,
		`{"Effect":"Deny","Principal":{"AWS":"`+bob.Account+`"},"Action":"s3:GetObject","Resource":"arn:aws:s3:::bkt/secret"}`)
	get := func(who Principal, key string) Request {
		return Request{Who: who, Op: "GetObject", Bucket: "bkt", Key: key}
	}
	for _, c := range []struct {
		name string
		b    Bucket
		r    Request
		want Effect
		rule string
	}{
		{"owner", Bucket{Owner: ownerDoc}, Request{Who: owner, Op: "PutObject", Bucket: "bkt", Key: "k"}, Allow, "owner"},
		{"no owner", Bucket{}, get(bob, "k"), Allow, "no-owner"},
		{"lists", Bucket{Owner: ownerDoc}, Request{Who: carol, Lists: Lists{Write: true}, Op: "PutObject", Bucket: "bkt", Key: "k"}, Allow, "lists"},
		{"policy allow by Sid", Bucket{Owner: ownerDoc, Policy: p}, get(carol, "k"), Allow, `policy-allow Sid "ReadAll"`},
		{"policy deny by place", Bucket{Owner: ownerDoc, Policy: p}, get(bob, "secret"), Deny, "policy-deny statement 1"},
		{"policy unreadable", Bucket{Owner: ownerDoc, PolicyUnreadable: true}, get(bob, "k"), Deny, "policy-unreadable"},
		{"bucket ACL", Bucket{Owner: ownerDoc, ACL: acl(owner, userGrant(bob, "READ"))}, Request{Who: bob, Op: "ListObjects", Bucket: "bkt"}, Allow, "bucket-acl"},
		{"object ACL", Bucket{Owner: ownerDoc, ObjectRecords: true}, Request{Who: bob, Op: "GetObject", Bucket: "bkt", Key: "k", Record: record("c1", owner, userGrant(bob, "READ"))}, Allow, "object-acl"},
		{"nothing allows", Bucket{Owner: ownerDoc}, get(bob, "k"), Deny, "default-deny"},
		{"never anonymous", Bucket{Owner: ownerDoc}, Request{Who: anonymous, Op: "PutObjectAcl", Bucket: "bkt", Key: "k"}, Deny, "never-anonymous"},
		{"service bucket", Bucket{Owner: &Owner{ID: owner.CanonicalID, Service: "lfs"}}, get(bob, "k"), Deny, "service-refused"},
	} {
		d := Decide(c.b, c.r)
		if d.Effect != c.want || d.Rule != c.rule {
			t.Errorf("%s: %v by %q (%s), want %v by %q", c.name, d.Effect, d.Rule, d.Reason, c.want, c.rule)
		}
	}
}
