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
	srv := newTestServerWith(t, Config{Credentials: creds, Forwarder: fw})
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
