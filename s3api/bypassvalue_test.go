package s3api

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/aws/smithy-go/middleware"
	smithyhttp "github.com/aws/smithy-go/transport/http"
)

// TestBypassValueForwarded: PutObjectRetention passes the bypass on only
// as the literal "true", and only for an admin who asked with a value S3
// reads as true; an admin's other values reach the backend as no header.
func TestBypassValueForwarded(t *testing.T) {
	fw := &fakeForwarder{}
	creds := Credentials{"admin": {AccessKey: "admin", SecretKey: "as", Read: []string{"*"}, Write: []string{"*"}, Admin: true}}
	srv := newTestServerFw(t, Config{Credentials: creds}, fw)
	future := time.Now().Add(time.Hour)
	// The version must exist: s3seal answers a missing one itself (404).
	c := sdkClient(srv.URL, "admin", "as")
	_, _ = c.CreateBucket(context.Background(), &s3.CreateBucketInput{Bucket: aws.String("bkt")})
	if _, err := c.PutObject(context.Background(), &s3.PutObjectInput{Bucket: aws.String("bkt"), Key: aws.String("k"), Body: strings.NewReader("x")}); err != nil {
		t.Fatal(err)
	}
	for v, want := range map[string]string{"TRUE": "true", " true": "true", "%74rue": "", "1": "", "false": ""} {
		admin := s3.New(s3.Options{BaseEndpoint: aws.String(srv.URL), Region: "us-east-1", UsePathStyle: true,
			Credentials: sdkClient(srv.URL, "admin", "as").Options().Credentials,
			APIOptions:  []func(*middleware.Stack) error{smithyhttp.AddHeaderValue("X-Amz-Bypass-Governance-Retention", v)}})
		if _, err := admin.PutObjectRetention(context.Background(), &s3.PutObjectRetentionInput{Bucket: aws.String("bkt"), Key: aws.String("k"),
			Retention: &types.ObjectLockRetention{Mode: types.ObjectLockRetentionModeGovernance, RetainUntilDate: &future}}); err != nil {
			t.Fatalf("%q: %v", v, err)
		}
		got, _ := fw.last()
		if h := got.Header.Values("X-Amz-Bypass-Governance-Retention"); len(h) > 1 || (want == "") != (len(h) == 0) || (len(h) == 1 && h[0] != want) {
			t.Errorf("an admin's bypass %q reached the backend as %q, want %q", v, h, want)
		}
	}
}

// The irreversible, store-enforced Object Lock decisions are the admins'
// (as ?lifecycle and ?policy are): a credential without "admin" (a backup
// writer) may not set a bucket's default retention (here COMPLIANCE for
// 100 years, which would make every object, s3seal's own state included,
// undeletable for a century), nor send x-amz-bypass-governance-retention,
// a right S3 keeps behind its own permission that s3seal's backend
// credential would otherwise lend every writer.
func TestNonAdminLockDecisionsRefused(t *testing.T) {
	fw := &fakeForwarder{body: "<ObjectLockConfiguration/>"}
	creds := Credentials{"user": {AccessKey: "user", SecretKey: "us", Read: []string{"*"}, Write: []string{"*"}}}
	srv := newTestServerFw(t, Config{Credentials: creds}, fw)
	ctx := context.Background()
	user := sdkClient(srv.URL, "user", "us")
	_, err := user.PutObjectLockConfiguration(ctx, &s3.PutObjectLockConfigurationInput{Bucket: aws.String("bkt"),
		ObjectLockConfiguration: &types.ObjectLockConfiguration{ObjectLockEnabled: types.ObjectLockEnabledEnabled,
			Rule: &types.ObjectLockRule{DefaultRetention: &types.DefaultRetention{Mode: types.ObjectLockRetentionModeCompliance, Years: aws.Int32(100)}}}})
	if got, n := fw.last(); err == nil && n > 0 {
		t.Errorf("want a non-admin's 100-year COMPLIANCE default retention to be refused; it was forwarded: %s %s?%s %s",
			got.Method, got.Bucket, got.Query.Encode(), got.Body)
	}
	until := time.Now().Add(time.Hour)
	_, err = user.PutObjectRetention(ctx, &s3.PutObjectRetentionInput{Bucket: aws.String("bkt"), Key: aws.String("k"),
		BypassGovernanceRetention: aws.Bool(true),
		Retention:                 &types.ObjectLockRetention{Mode: types.ObjectLockRetentionModeGovernance, RetainUntilDate: &until}})
	if got, _ := fw.last(); err == nil && got.Header.Get("X-Amz-Bypass-Governance-Retention") == "true" {
		t.Errorf("want x-amz-bypass-governance-retention from a non-admin to be refused; it was forwarded with s3seal's backend credential")
	}
}

// A non-admin's PutObjectRetention never reaches the backend with an
// x-amz-bypass-governance-retention value s3seal did not judge, whatever
// it says: backends read the header their own way (Ceph RGW url-decodes
// it before comparing with "true", so "%74rue" is a bypass there; OpenIO's
// swift s3api takes the header's mere presence as one, "false" included).
func TestNonAdminBypassHeaderNotForwarded(t *testing.T) {
	fw := &fakeForwarder{}
	creds := Credentials{"user": {AccessKey: "user", SecretKey: "us", Read: []string{"*"}, Write: []string{"*"}}}
	srv := newTestServerFw(t, Config{Credentials: creds}, fw)
	ctx := context.Background()
	future := time.Now().Add(time.Hour)
	for _, v := range []string{"%74rue", "false", "1"} {
		user := s3.New(s3.Options{BaseEndpoint: aws.String(srv.URL), Region: "us-east-1", UsePathStyle: true,
			Credentials: sdkClient(srv.URL, "user", "us").Options().Credentials,
			APIOptions:  []func(*middleware.Stack) error{smithyhttp.AddHeaderValue("X-Amz-Bypass-Governance-Retention", v)}})
		_, before := fw.last()
		_, err := user.PutObjectRetention(ctx, &s3.PutObjectRetentionInput{Bucket: aws.String("bkt"), Key: aws.String("k"),
			Retention: &types.ObjectLockRetention{Mode: types.ObjectLockRetentionModeGovernance, RetainUntilDate: &future}})
		got, after := fw.last()
		if after != before {
			if h := got.Header.Values("X-Amz-Bypass-Governance-Retention"); len(h) > 0 {
				t.Errorf("a non-admin's PutObjectRetention with x-amz-bypass-governance-retention: %q was forwarded to the backend with that header %q (err %v)", v, h, err)
			}
		}
	}
}
