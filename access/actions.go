package access

import "strings"

// Each of s3seal's operations is one of S3's actions on one of S3's
// resources, by which a policy names it and by which some rules (reads,
// notByACL) are told apart.

// policyActions maps s3seal's operation names to S3's actions, where the
// name differs; object operations on a version (a versionId in the
// query) are in versionActions. An operation on a key acts on the object
// resource, the others on the bucket.
var policyActions = map[string]string{
	"ListObjects":                     "s3:ListBucket",
	"ListObjectsV2":                   "s3:ListBucket",
	"HeadBucket":                      "s3:ListBucket",
	"ListObjectVersions":              "s3:ListBucketVersions",
	"ListMultipartUploads":            "s3:ListBucketMultipartUploads",
	"ListParts":                       "s3:ListMultipartUploadParts",
	"HeadObject":                      "s3:GetObject",
	"CopyObject":                      "s3:PutObject",
	"CreateMultipartUpload":           "s3:PutObject",
	"UploadPart":                      "s3:PutObject",
	"UploadPartCopy":                  "s3:PutObject",
	"CompleteMultipartUpload":         "s3:PutObject",
	"DeleteObjects":                   "s3:DeleteObject",
	"DeleteObjectTagging":             "s3:DeleteObjectTagging",
	"GetBucketCors":                   "s3:GetBucketCORS",
	"PutBucketCors":                   "s3:PutBucketCORS",
	"DeleteBucketCors":                "s3:PutBucketCORS",
	"GetBucketLifecycle":              "s3:GetLifecycleConfiguration",
	"PutBucketLifecycle":              "s3:PutLifecycleConfiguration",
	"DeleteBucketLifecycle":           "s3:PutLifecycleConfiguration",
	"GetBucketLifecycleConfiguration": "s3:GetLifecycleConfiguration",
	"PutBucketLifecycleConfiguration": "s3:PutLifecycleConfiguration",
	"GetObjectLockConfiguration":      "s3:GetBucketObjectLockConfiguration",
	"PutObjectLockConfiguration":      "s3:PutBucketObjectLockConfiguration",
	"DeleteBucketOwnershipControls":   "s3:PutBucketOwnershipControls",
	"GetBucketEncryption":             "s3:GetEncryptionConfiguration",
	"PutBucketEncryption":             "s3:PutEncryptionConfiguration",
	"DeleteBucketEncryption":          "s3:PutEncryptionConfiguration",
	"GetPublicAccessBlock":            "s3:GetBucketPublicAccessBlock",
	"PutPublicAccessBlock":            "s3:PutBucketPublicAccessBlock",
	"DeletePublicAccessBlock":         "s3:PutBucketPublicAccessBlock",
	"GetBucketPublicAccessBlock":      "s3:GetBucketPublicAccessBlock",
	"PutBucketPublicAccessBlock":      "s3:PutBucketPublicAccessBlock",
	"DeleteBucketPublicAccessBlock":   "s3:PutBucketPublicAccessBlock",
	"DeleteBucketTagging":             "s3:PutBucketTagging",
	"DeleteBucketWebsite":             "s3:DeleteBucketWebsite",
	"GetBucketPolicyStatus":           "s3:GetBucketPolicyStatus",
}

// versionActions are the actions of object operations on a version.
var versionActions = map[string]string{
	"s3:GetObject":           "s3:GetObjectVersion",
	"s3:DeleteObject":        "s3:DeleteObjectVersion",
	"s3:GetObjectTagging":    "s3:GetObjectVersionTagging",
	"s3:PutObjectTagging":    "s3:PutObjectVersionTagging",
	"s3:DeleteObjectTagging": "s3:DeleteObjectVersionTagging",
	"s3:GetObjectAcl":        "s3:GetObjectVersionAcl",
	"s3:PutObjectAcl":        "s3:PutObjectVersionAcl",
	"s3:GetObjectAttributes": "s3:GetObjectVersionAttributes",
}

// notActions are the routes' names for refusals, which no policy decides.
var notActions = map[string]bool{"NotImplemented": true, "MethodNotAllowed": true,
	"InvalidRequest": true, "InvalidArgument": true}

// ActionOf is the S3 action and resource ARN of operation op (s3seal's
// name for it, as its routes give it) on bucket and key ("" for the
// bucket), on a version when version (the request names a versionId);
// "" when op is no action a policy names.
func ActionOf(op, bucket, key string, version bool) (action, resource string) {
	if notActions[op] || op == "" || op == "DeleteObjects" {
		// DeleteObjects is no action of its own: each key it lists is
		// decided as its own DeleteObject, as S3 decides it.
		return "", ""
	}
	action = policyActions[op]
	if action == "" {
		action = "s3:" + op
	}
	resource = "arn:aws:s3:::" + bucket
	if key != "" {
		resource += "/" + key
		if v := versionActions[action]; version && v != "" {
			action = v
		}
	}
	return action, resource
}

// reads reports whether action only reads: a Get or a List.
func reads(action string) bool {
	return strings.HasPrefix(action, "s3:Get") || strings.HasPrefix(action, "s3:List")
}

// policyOps are the operations on the policy itself: S3 lets the bucket
// owner's account (its root user) do them even when the policy denies it,
// so that a policy can always be taken back.
var policyOps = map[string]bool{"GetBucketPolicy": true, "PutBucketPolicy": true, "DeleteBucketPolicy": true}
