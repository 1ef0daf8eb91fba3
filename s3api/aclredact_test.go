package s3api

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
)

// TestACLRedactedForReaders: GET ?acl stays open to readers (s3cmd info
// fails on a 403 there) but without the backend account's identity;
// admins read it as the store gives it. GET ?policy is for admins only.
func TestACLRedactedForReaders(t *testing.T) {
	fw := &fakeForwarder{}
	creds := Credentials{
		"reader": {AccessKey: "reader", SecretKey: "rs", Read: []string{"*"}},
		"admin":  {AccessKey: "admin", SecretKey: "as", Read: []string{"*"}, Write: []string{"*"}, Admin: true},
	}
	srv := newTestServerWith(t, Config{Credentials: creds, Forwarder: fw})
	ctx := context.Background()
	reader, admin := sdkClient(srv.URL, "reader", "rs"), sdkClient(srv.URL, "admin", "as")
	const owner, other = "aaaa1111", "bbbb2222"
	grantee := func(typ, inner string) string {
		return `<Grantee xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xsi:type="` + typ + `">` + inner + `</Grantee>`
	}
	fw.body = `<AccessControlPolicy><Owner><ID>` + owner + `</ID><DisplayName>root</DisplayName></Owner><AccessControlList>` +
		`<Grant>` + grantee("CanonicalUser", `<ID>`+owner+`</ID><DisplayName>root</DisplayName>`) + `<Permission>FULL_CONTROL</Permission></Grant>` +
		`<Grant>` + grantee("CanonicalUser", `<ID>`+other+`</ID><DisplayName>partner</DisplayName>`) + `<Permission>WRITE</Permission></Grant>` +
		`<Grant>` + grantee("AmazonCustomerByEmail", `<EmailAddress>ops@backend.example</EmailAddress>`) + `<Permission>READ_ACP</Permission></Grant>` +
		`<Grant>` + grantee("Group", `<URI>http://acs.amazonaws.com/groups/global/AllUsers</URI>`) + `<Permission>READ</Permission></Grant>` +
		`</AccessControlList></AccessControlPolicy>`
	type grant struct{ typ, id, name, email, uri, perm string }
	flat := func(gs []types.Grant) []grant {
		var out []grant
		for _, g := range gs {
			out = append(out, grant{string(g.Grantee.Type), aws.ToString(g.Grantee.ID), aws.ToString(g.Grantee.DisplayName),
				aws.ToString(g.Grantee.EmailAddress), aws.ToString(g.Grantee.URI), string(g.Permission)})
		}
		return out
	}
	all := "http://acs.amazonaws.com/groups/global/AllUsers"
	want := []grant{{"CanonicalUser", "reader", "reader", "", "", "FULL_CONTROL"}, {"CanonicalUser", "other-account", "", "", "", "WRITE"},
		{"CanonicalUser", "other-account", "", "", "", "READ_ACP"}, {"Group", "", "", "", all, "READ"}}
	b, k := aws.String("bkt"), aws.String("k")
	out, err := reader.GetBucketAcl(ctx, &s3.GetBucketAclInput{Bucket: b})
	if err != nil || aws.ToString(out.Owner.ID) != "reader" || aws.ToString(out.Owner.DisplayName) != "reader" || !slices.Equal(flat(out.Grants), want) {
		t.Fatalf("reader's bucket ACL: %v %+v %+v", err, out.Owner, flat(out.Grants))
	}
	oout, err := reader.GetObjectAcl(ctx, &s3.GetObjectAclInput{Bucket: b, Key: k})
	if err != nil || aws.ToString(oout.Owner.ID) != "reader" || !slices.Equal(flat(oout.Grants), want) {
		t.Fatalf("reader's object ACL: %v %+v", err, flat(oout.Grants))
	}
	aout, err := admin.GetBucketAcl(ctx, &s3.GetBucketAclInput{Bucket: b})
	// Admins see the other grants as the store has them; the owner is
	// the caller for them too.
	if err != nil || aws.ToString(aout.Owner.ID) != "admin" || len(aout.Grants) != 4 || aws.ToString(aout.Grants[0].Grantee.ID) != "admin" ||
		aws.ToString(aout.Grants[1].Grantee.ID) != other || aws.ToString(aout.Grants[2].Grantee.EmailAddress) != "ops@backend.example" {
		t.Fatalf("admin's bucket ACL: %v %+v", err, aout)
	}
	// What an admin read and puts back names the caller where the store
	// has its own account: the store gets its owner's ID back.
	if _, err := admin.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: b}); err != nil {
		t.Fatal(err)
	}
	_, err = admin.PutBucketAcl(ctx, &s3.PutBucketAclInput{Bucket: b, AccessControlPolicy: &types.AccessControlPolicy{Owner: aout.Owner, Grants: aout.Grants[:2]}})
	if got, _ := fw.last(); err != nil || got.Method != "PUT" || strings.Contains(string(got.Body), "<ID>admin</ID>") ||
		strings.Count(string(got.Body), "<ID>"+owner+"</ID>") != 2 || !strings.Contains(string(got.Body), "<ID>"+other+"</ID>") {
		t.Fatalf("admin's PUT ?acl: %v, forwarded %s", err, got.Body)
	}
	fw.body = `{"Version":"2012-10-17","Statement":[]}`
	_, before := fw.last()
	_, err = reader.GetBucketPolicy(ctx, &s3.GetBucketPolicyInput{Bucket: b})
	if _, after := fw.last(); apiCode(err) != "AccessDenied" || httpStatus(err) != 403 || after != before {
		t.Fatalf("reader's GET ?policy: %v (forwarded: %v)", err, after != before)
	}
	pol, err := admin.GetBucketPolicy(ctx, &s3.GetBucketPolicyInput{Bucket: b})
	if err != nil || aws.ToString(pol.Policy) != fw.body {
		t.Fatalf("admin's GET ?policy: %v", err)
	}
}
