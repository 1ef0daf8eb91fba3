package s3api

import (
	"context"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
)

// A non-admin's PUT ?acl on an object that grants only the owner (x-amz-acl
// private; a document granting only its owner, as s3cmd cp and mv put on
// the copy) is answered 200 without a write where the object's ACL grants
// only its owner already; where it grants more (an admin's public-read),
// and for any ACL granting others, it is AccessDenied. Nothing is written.
func TestUnchangedObjectACLForAnyWriter(t *testing.T) {
	fw := &fakeForwarder{}
	creds := Credentials{"user": {AccessKey: "user", SecretKey: "us", Read: []string{"*"}, Write: []string{"*"}}}
	srv := newTestServerWith(t, Config{Credentials: creds, Forwarder: fw})
	ctx := context.Background()
	user := sdkClient(srv.URL, "user", "us")
	const ownerOnly = `<AccessControlPolicy><Owner><ID>o1</ID></Owner><AccessControlList><Grant>` +
		`<Grantee xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xsi:type="CanonicalUser"><ID>o1</ID></Grantee>` +
		`<Permission>FULL_CONTROL</Permission></Grant></AccessControlList></AccessControlPolicy>`
	const public = `<AccessControlPolicy><Owner><ID>o1</ID></Owner><AccessControlList><Grant>` +
		`<Grantee xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xsi:type="CanonicalUser"><ID>o1</ID></Grantee>` +
		`<Permission>FULL_CONTROL</Permission></Grant><Grant>` +
		`<Grantee xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xsi:type="Group"><URI>http://acs.amazonaws.com/groups/global/AllUsers</URI></Grantee>` +
		`<Permission>READ</Permission></Grant></AccessControlList></AccessControlPolicy>`
	owner := &types.Owner{ID: aws.String("o1"), DisplayName: aws.String("s3seal")}
	grant := func(typ types.Type, id, uri string, perm types.Permission) types.Grant {
		g := types.Grant{Grantee: &types.Grantee{Type: typ}, Permission: perm}
		if id != "" {
			g.Grantee.ID = aws.String(id)
		}
		if uri != "" {
			g.Grantee.URI = aws.String(uri)
		}
		return g
	}
	policy := func(grants ...types.Grant) func(*s3.PutObjectAclInput) {
		return func(in *s3.PutObjectAclInput) {
			in.AccessControlPolicy = &types.AccessControlPolicy{Owner: owner, Grants: grants}
		}
	}
	private := func(in *s3.PutObjectAclInput) { in.ACL = types.ObjectCannedACLPrivate }
	cases := []struct {
		name    string
		current string // the object's ACL at the store
		f       func(*s3.PutObjectAclInput)
		allowed bool
	}{
		{"private on private", ownerOnly, private, true},
		{"owner only on private", ownerOnly, policy(grant(types.TypeCanonicalUser, "o1", "", types.PermissionFullControl)), true},
		{"private on public-read", public, private, false},
		{"public-read", ownerOnly, func(in *s3.PutObjectAclInput) { in.ACL = types.ObjectCannedACLPublicRead }, false},
		{"grant header", ownerOnly, func(in *s3.PutObjectAclInput) { in.GrantRead = aws.String(`id="o2"`) }, false},
		{"another user", ownerOnly, policy(grant(types.TypeCanonicalUser, "o1", "", types.PermissionFullControl),
			grant(types.TypeCanonicalUser, "o2", "", types.PermissionRead)), false},
		{"all users", ownerOnly, policy(grant(types.TypeGroup, "", "http://acs.amazonaws.com/groups/global/AllUsers", types.PermissionRead)), false},
	}
	for _, tc := range cases {
		fw.body = tc.current
		_, n := fw.last()
		in := &s3.PutObjectAclInput{Bucket: aws.String("bkt"), Key: aws.String("k")}
		tc.f(in)
		_, err := user.PutObjectAcl(ctx, in)
		if (err == nil) != tc.allowed || (!tc.allowed && apiCode(err) != "AccessDenied") {
			t.Errorf("%s: %v, want allowed %v (else AccessDenied)", tc.name, err, tc.allowed)
		}
		fw.mu.Lock()
		for _, r := range fw.reqs[n:] {
			if r.Method != "GET" || !r.Query.Has("acl") || r.Key != "k" {
				t.Errorf("%s: forwarded %+v; want at most a GET ?acl", tc.name, r)
			}
		}
		fw.mu.Unlock()
	}
}
