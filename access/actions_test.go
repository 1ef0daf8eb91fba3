package access

import (
	"testing"

	"github.com/s3seal/s3seal/access/policy"
)

// TestPolicyActions: s3seal's operations are S3's actions on S3's
// resources, on a version where the request names one.
func TestPolicyActions(t *testing.T) {
	for _, tc := range []struct {
		op, bucket, key  string
		version          bool
		action, resource string
	}{
		{"ListObjectsV2", "bkt", "", false, "s3:ListBucket", "arn:aws:s3:::bkt"},
		{"ListObjectVersions", "bkt", "", false, "s3:ListBucketVersions", "arn:aws:s3:::bkt"},
		{"GetObject", "bkt", "a/b", false, "s3:GetObject", "arn:aws:s3:::bkt/a/b"},
		{"GetObject", "bkt", "k", true, "s3:GetObjectVersion", "arn:aws:s3:::bkt/k"},
		{"HeadObject", "bkt", "k", false, "s3:GetObject", "arn:aws:s3:::bkt/k"},
		{"DeleteObject", "bkt", "k", true, "s3:DeleteObjectVersion", "arn:aws:s3:::bkt/k"},
		{"PutObjectTagging", "bkt", "k", false, "s3:PutObjectTagging", "arn:aws:s3:::bkt/k"},
		{"GetObjectAcl", "bkt", "k", true, "s3:GetObjectVersionAcl", "arn:aws:s3:::bkt/k"},
		{"CreateMultipartUpload", "bkt", "k", false, "s3:PutObject", "arn:aws:s3:::bkt/k"},
		{"DeleteBucketCors", "bkt", "", false, "s3:PutBucketCORS", "arn:aws:s3:::bkt"},
		{"GetPublicAccessBlock", "bkt", "", false, "s3:GetBucketPublicAccessBlock", "arn:aws:s3:::bkt"},
		{"PutObject", "bkt", "k", true, "s3:PutObject", "arn:aws:s3:::bkt/k"}, // no version action
		{"ListObjects", "bkt", "", true, "s3:ListBucket", "arn:aws:s3:::bkt"}, // a bucket has no versions
		{"NotImplemented", "bkt", "", false, "", ""},
		{"DeleteObjects", "bkt", "", false, "", ""},
		{"", "bkt", "", false, "", ""},
	} {
		if a, r := ActionOf(tc.op, tc.bucket, tc.key, tc.version); a != tc.action || r != tc.resource {
			t.Errorf("%s %s/%s (version %v): %s on %s, want %s on %s", tc.op, tc.bucket, tc.key, tc.version, a, r, tc.action, tc.resource)
		}
	}
}

// TestActionsAreS3s: every action the mapping names is one a bucket
// policy can name, spelled as S3 spells it: a policy written from S3's
// documentation matches s3seal's operations.
func TestActionsAreS3s(t *testing.T) {
	for op, a := range policyActions {
		if !policy.IsAction(a) {
			t.Errorf("%s is %s, which is not one of S3's actions", op, a)
		}
	}
	for from, to := range versionActions {
		if !policy.IsAction(from) || !policy.IsAction(to) {
			t.Errorf("%s on a version is %s: not S3's actions", from, to)
		}
	}
	for _, op := range []string{"GetObject", "PutObject", "DeleteObject", "GetObjectAcl", "PutObjectAcl", "GetObjectTagging",
		"PutObjectTagging", "GetObjectAttributes", "GetObjectRetention", "PutObjectRetention", "GetObjectLegalHold",
		"PutObjectLegalHold", "AbortMultipartUpload", "RestoreObject", "DeleteBucket", "GetBucketAcl", "PutBucketAcl",
		"GetBucketLocation", "GetBucketVersioning", "PutBucketVersioning", "GetBucketTagging", "PutBucketTagging",
		"GetBucketPolicy", "PutBucketPolicy", "DeleteBucketPolicy", "GetBucketOwnershipControls", "PutBucketOwnershipControls",
		"GetBucketWebsite", "PutBucketWebsite", "GetBucketLogging", "PutBucketLogging"} {
		if a, _ := ActionOf(op, "b", "k", false); !policy.IsAction(a) {
			t.Errorf("%s is %s, which is not one of S3's actions", op, a)
		}
	}
}
