package s3api

import (
	"context"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
)

// TestBucketACLJudged: an admin's PutBucketAcl is judged by s3seal as AWS
// judges it before the store sees it (moto answers 503 or takes it):
// missing bucket, ACLs off with BucketOwnerEnforced, canned ACL with
// grant headers or a document, none at all, a malformed document.
func TestBucketACLJudged(t *testing.T) {
	fw := &fakeForwarder{body: `<OwnershipControls><Rule><ObjectOwnership>BucketOwnerPreferred</ObjectOwnership></Rule></OwnershipControls>`}
	creds := Credentials{"admin": {AccessKey: "admin", SecretKey: "as", Read: []string{"*"}, Write: []string{"*"}, Admin: true}}
	srv := newTestServerWith(t, Config{Credentials: creds, Forwarder: fw})
	ctx := context.Background()
	c := sdkClient(srv.URL, "admin", "as")
	b := aws.String("acl-bucket")
	if _, err := c.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: b}); err != nil {
		t.Fatal(err)
	}
	owner := &types.Owner{ID: aws.String("admin")}
	grant := func(typ types.Type, id string, perm types.Permission) types.Grant {
		g := types.Grant{Grantee: &types.Grantee{Type: typ}, Permission: perm}
		if id != "" {
			g.Grantee.ID = aws.String(id)
		}
		return g
	}
	acp := func(o *types.Owner, g ...types.Grant) *types.AccessControlPolicy {
		return &types.AccessControlPolicy{Owner: o, Grants: g}
	}
	for _, tc := range []struct {
		name string
		in   s3.PutBucketAclInput
		code string
	}{
		{"missing bucket", s3.PutBucketAclInput{Bucket: aws.String("no-such-bucket"), ACL: types.BucketCannedACLPrivate}, "NoSuchBucket"},
		{"nothing", s3.PutBucketAclInput{}, "MissingSecurityHeader"},
		{"canned and grant", s3.PutBucketAclInput{ACL: types.BucketCannedACLPrivate, GrantRead: aws.String("id=x")}, "InvalidRequest"},
		{"canned and document", s3.PutBucketAclInput{ACL: types.BucketCannedACLPrivate,
			AccessControlPolicy: acp(owner, grant(types.TypeCanonicalUser, "admin", types.PermissionFullControl))}, "UnexpectedContent"},
		{"grant and document", s3.PutBucketAclInput{GrantFullControl: aws.String("id=x"),
			AccessControlPolicy: acp(owner, grant(types.TypeCanonicalUser, "admin", types.PermissionFullControl))}, "UnexpectedContent"},
		{"no owner", s3.PutBucketAclInput{AccessControlPolicy: acp(nil, grant(types.TypeCanonicalUser, "grt1", types.PermissionRead))}, "MalformedACLError"},
		{"empty owner", s3.PutBucketAclInput{AccessControlPolicy: acp(&types.Owner{}, grant(types.TypeCanonicalUser, "grt1", types.PermissionRead))}, "MalformedACLError"},
		{"permission", s3.PutBucketAclInput{AccessControlPolicy: acp(owner, grant(types.TypeCanonicalUser, "grt1", "invalid_permission"))}, "MalformedACLError"},
		{"grantee type", s3.PutBucketAclInput{AccessControlPolicy: acp(owner, grant("invalid_type", "grt1", types.PermissionRead))}, "MalformedACLError"},
		{"grantee without ID", s3.PutBucketAclInput{AccessControlPolicy: acp(owner, grant(types.TypeCanonicalUser, "", types.PermissionRead))}, "MalformedACLError"},
	} {
		if tc.in.Bucket == nil {
			tc.in.Bucket = b
		}
		_, before := fw.last()
		_, err := c.PutBucketAcl(ctx, &tc.in)
		if _, after := fw.last(); apiCode(err) != tc.code || after-before > 1 {
			t.Errorf("%s: %v (forwarded %d), want %s", tc.name, err, after-before, tc.code)
		}
	}
	if _, err := c.PutBucketAcl(ctx, &s3.PutBucketAclInput{Bucket: b, AccessControlPolicy: acp(owner, grant(types.TypeCanonicalUser, "grt1", types.PermissionRead))}); err != nil {
		t.Fatalf("a good document: %v", err)
	}
	fw.body = `<OwnershipControls><Rule><ObjectOwnership>BucketOwnerEnforced</ObjectOwnership></Rule></OwnershipControls>`
	_, err := c.PutBucketAcl(ctx, &s3.PutBucketAclInput{Bucket: b, ACL: types.BucketCannedACLPublicRead, GrantRead: aws.String("id=x")})
	if apiCode(err) != "AccessControlListNotSupported" || httpStatus(err) != 400 {
		t.Fatalf("ACL on a BucketOwnerEnforced bucket: %v", err)
	}
}

// TestOwnershipControlsJudged: a PutBucketOwnershipControls document with
// no rule, two rules or an unknown setting is MalformedXML from s3seal
// (moto answered 503 or took it); a good one is forwarded.
func TestOwnershipControlsJudged(t *testing.T) {
	fw := &fakeForwarder{}
	creds := Credentials{"admin": {AccessKey: "admin", SecretKey: "as", Read: []string{"*"}, Write: []string{"*"}, Admin: true}}
	srv := newTestServerWith(t, Config{Credentials: creds, Forwarder: fw})
	c := sdkClient(srv.URL, "admin", "as")
	rules := func(o ...types.ObjectOwnership) *types.OwnershipControls {
		oc := &types.OwnershipControls{Rules: []types.OwnershipControlsRule{}}
		for _, v := range o {
			oc.Rules = append(oc.Rules, types.OwnershipControlsRule{ObjectOwnership: v})
		}
		return oc
	}
	for name, oc := range map[string]*types.OwnershipControls{
		"no rule":     rules(),
		"two rules":   rules(types.ObjectOwnershipBucketOwnerPreferred, types.ObjectOwnershipObjectWriter),
		"unknown one": rules("invalid_ownership"),
	} {
		_, err := c.PutBucketOwnershipControls(context.Background(), &s3.PutBucketOwnershipControlsInput{Bucket: aws.String("bkt"), OwnershipControls: oc})
		if apiCode(err) != "MalformedXML" || httpStatus(err) != 400 {
			t.Errorf("%s: %v, want 400 MalformedXML", name, err)
		}
	}
	if _, n := fw.last(); n != 0 {
		t.Fatalf("%d refused documents were forwarded", n)
	}
	_, err := c.PutBucketOwnershipControls(context.Background(), &s3.PutBucketOwnershipControlsInput{Bucket: aws.String("bkt"), OwnershipControls: rules(types.ObjectOwnershipBucketOwnerEnforced)})
	if got, n := fw.last(); err != nil || n != 1 || got.Method != "PUT" {
		t.Fatalf("a good document: %v (%d forwarded)", err, n)
	}
}
