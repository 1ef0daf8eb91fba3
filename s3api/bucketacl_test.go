package s3api

import (
	"context"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
)

// TestBucketACLJudged: a PutBucketAcl is judged by s3seal as AWS judges
// it, and kept by s3seal (nothing reaches the store): missing bucket, ACLs
// off with BucketOwnerEnforced, canned ACL with grant headers or a
// document, none at all, a malformed document.
func TestBucketACLJudged(t *testing.T) {
	fw := &fakeForwarder{}
	creds := Credentials{"admin": {AccessKey: "admin", SecretKey: "as", Read: []string{"*"}, Write: []string{"*"}, Admin: true, CanonicalID: "admin"},
		"grantee": {AccessKey: "grantee", SecretKey: "gs", CanonicalID: "grt1"}}
	srv := newTestServerFw(t, Config{Credentials: creds}, fw)
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
	if _, n := fw.last(); n != 0 {
		t.Errorf("%d ACL requests reached the store", n)
	}
	if _, err := c.PutBucketAcl(ctx, &s3.PutBucketAclInput{Bucket: b, ACL: types.BucketCannedACLPrivate}); err != nil {
		t.Fatal(err)
	}
	_, err := c.PutBucketOwnershipControls(ctx, &s3.PutBucketOwnershipControlsInput{Bucket: b, OwnershipControls: &types.OwnershipControls{
		Rules: []types.OwnershipControlsRule{{ObjectOwnership: types.ObjectOwnershipBucketOwnerEnforced}}}})
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.PutBucketAcl(ctx, &s3.PutBucketAclInput{Bucket: b, ACL: types.BucketCannedACLPublicRead, GrantRead: aws.String("id=x")})
	if apiCode(err) != "AccessControlListNotSupported" || httpStatus(err) != 400 {
		t.Fatalf("ACL on a BucketOwnerEnforced bucket: %v", err)
	}
}

// TestOwnershipControlsJudged: a PutBucketOwnershipControls document with
// no rule, two rules or an unknown setting is MalformedXML from s3seal
// (moto answered 503 or took it); a good one is kept by s3seal, not
// forwarded.
func TestOwnershipControlsJudged(t *testing.T) {
	fw := &fakeForwarder{}
	creds := Credentials{"admin": {AccessKey: "admin", SecretKey: "as", Read: []string{"*"}, Write: []string{"*"}, Admin: true}}
	srv := newTestServerFw(t, Config{Credentials: creds}, fw)
	c := sdkClient(srv.URL, "admin", "as")
	if _, err := c.CreateBucket(context.Background(), &s3.CreateBucketInput{Bucket: aws.String("bkt")}); err != nil {
		t.Fatal(err)
	}
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
	if _, n := fw.last(); err != nil || n != 0 {
		t.Fatalf("a good document: %v (%d forwarded)", err, n)
	}
	got, err := c.GetBucketOwnershipControls(context.Background(), &s3.GetBucketOwnershipControlsInput{Bucket: aws.String("bkt")})
	if err != nil || got.OwnershipControls.Rules[0].ObjectOwnership != types.ObjectOwnershipBucketOwnerEnforced {
		t.Fatalf("the kept document: %+v, %v", got, err)
	}
}
