package s3api

import (
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
)

// TestBucketLoggingKept: a bucket without logging answers an empty
// BucketLoggingStatus; a configuration naming an existing target is kept
// and answered back (the key format SimplePrefix when none was given,
// TargetGrants dropped); an empty status turns it off.
func TestBucketLoggingKept(t *testing.T) {
	_, ctx, c := newBucketServer(t, SingleCredential("ak", "sk"))
	if _, err := c.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String("logs")}); err != nil {
		t.Fatal(err)
	}
	b := aws.String("bkt")
	got, err := c.GetBucketLogging(ctx, &s3.GetBucketLoggingInput{Bucket: b})
	if err != nil || got.LoggingEnabled != nil {
		t.Fatalf("GetBucketLogging without one: %v %+v", err, got)
	}
	grants := []types.TargetGrant{{Grantee: &types.Grantee{Type: types.TypeCanonicalUser, ID: aws.String("id")}, Permission: types.BucketLogsPermissionFullControl}}
	if _, err := c.PutBucketLogging(ctx, &s3.PutBucketLoggingInput{Bucket: b, BucketLoggingStatus: &types.BucketLoggingStatus{
		LoggingEnabled: &types.LoggingEnabled{TargetBucket: aws.String("logs"), TargetPrefix: aws.String("log/"), TargetGrants: grants}}}); err != nil {
		t.Fatal(err)
	}
	got, err = c.GetBucketLogging(ctx, &s3.GetBucketLoggingInput{Bucket: b})
	if err != nil {
		t.Fatal(err)
	}
	le := got.LoggingEnabled
	if le == nil || aws.ToString(le.TargetBucket) != "logs" || aws.ToString(le.TargetPrefix) != "log/" || len(le.TargetGrants) != 0 ||
		le.TargetObjectKeyFormat == nil || le.TargetObjectKeyFormat.SimplePrefix == nil || le.TargetObjectKeyFormat.PartitionedPrefix != nil {
		t.Fatalf("GetBucketLogging: %+v", le)
	}
	if _, err := c.PutBucketLogging(ctx, &s3.PutBucketLoggingInput{Bucket: b, BucketLoggingStatus: &types.BucketLoggingStatus{
		LoggingEnabled: &types.LoggingEnabled{TargetBucket: aws.String("logs"), TargetPrefix: aws.String("p/"),
			TargetObjectKeyFormat: &types.TargetObjectKeyFormat{PartitionedPrefix: &types.PartitionedPrefix{PartitionDateSource: types.PartitionDateSourceDeliveryTime}}}}}); err != nil {
		t.Fatal(err)
	}
	got, err = c.GetBucketLogging(ctx, &s3.GetBucketLoggingInput{Bucket: b})
	if err != nil || got.LoggingEnabled == nil || got.LoggingEnabled.TargetObjectKeyFormat.PartitionedPrefix == nil ||
		got.LoggingEnabled.TargetObjectKeyFormat.PartitionedPrefix.PartitionDateSource != types.PartitionDateSourceDeliveryTime {
		t.Fatalf("GetBucketLogging partitioned: %v %+v", err, got.LoggingEnabled)
	}
	if _, err := c.PutBucketLogging(ctx, &s3.PutBucketLoggingInput{Bucket: b, BucketLoggingStatus: &types.BucketLoggingStatus{}}); err != nil {
		t.Fatal(err)
	}
	got, err = c.GetBucketLogging(ctx, &s3.GetBucketLoggingInput{Bucket: b})
	if err != nil || got.LoggingEnabled != nil {
		t.Fatalf("GetBucketLogging after turning it off: %v %+v", err, got.LoggingEnabled)
	}
}

// TestBucketLoggingRefusals: a missing source bucket is NoSuchBucket, a
// missing target InvalidTargetBucketForLogging, a target outside the
// credential's write list AccessDenied, a key format with both or neither
// form or an unknown date source MalformedXML; none is kept.
func TestBucketLoggingRefusals(t *testing.T) {
	creds := Credentials{"ak": {AccessKey: "ak", SecretKey: "sk", Read: []string{"*"}, Write: []string{"bkt", "logs", "nosuch"}},
		"root": {AccessKey: "root", SecretKey: "rs", Read: []string{"*"}, Write: []string{"*"}}}
	url, ctx, c := newBucketServer(t, creds)
	root := sdkClient(url, "root", "rs")
	for _, name := range []string{"logs", "other"} {
		if _, err := root.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String(name)}); err != nil {
			t.Fatal(err)
		}
	}
	put := func(bucket string, le *types.LoggingEnabled) error {
		_, err := c.PutBucketLogging(ctx, &s3.PutBucketLoggingInput{Bucket: aws.String(bucket), BucketLoggingStatus: &types.BucketLoggingStatus{LoggingEnabled: le}})
		return err
	}
	target := func(name string, kf *types.TargetObjectKeyFormat) *types.LoggingEnabled {
		return &types.LoggingEnabled{TargetBucket: aws.String(name), TargetPrefix: aws.String("log/"), TargetObjectKeyFormat: kf}
	}
	for name, tc := range map[string]struct {
		bucket string
		le     *types.LoggingEnabled
		code   string
	}{
		"missing source":  {"nosuch", target("logs", nil), "NoSuchBucket"},
		"missing target":  {"bkt", target("nosuch", nil), "InvalidTargetBucketForLogging"},
		"target unlisted": {"bkt", target("other", nil), "AccessDenied"},
		"both formats": {"bkt", target("logs", &types.TargetObjectKeyFormat{SimplePrefix: &types.SimplePrefix{},
			PartitionedPrefix: &types.PartitionedPrefix{PartitionDateSource: types.PartitionDateSourceEventTime}}), "MalformedXML"},
		"no format":       {"bkt", target("logs", &types.TargetObjectKeyFormat{}), "MalformedXML"},
		"bad date source": {"bkt", target("logs", &types.TargetObjectKeyFormat{PartitionedPrefix: &types.PartitionedPrefix{PartitionDateSource: "kaboom"}}), "MalformedXML"},
	} {
		if err := put(tc.bucket, tc.le); apiCode(err) != tc.code {
			t.Errorf("%s: %v, want %s", name, err, tc.code)
		}
	}
	got, err := c.GetBucketLogging(ctx, &s3.GetBucketLoggingInput{Bucket: aws.String("bkt")})
	if err != nil || got.LoggingEnabled != nil {
		t.Fatalf("after refusals: %v %+v", err, got.LoggingEnabled)
	}
}
