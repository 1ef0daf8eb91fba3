package e2e

import (
	"testing"
)

// TestKMSTenantCannotSealUnderAnotherTenantsKey: with a KMS key per
// tenant (a credential's key_id), tenant b must not be able to have
// s3seal seal under tenant a's key by naming it in
// x-amz-server-side-encryption-aws-kms-key-id (ARN, alias or bare id): on
// AWS the writer needs kms:GenerateDataKey on the key; in s3seal every
// KMS call is s3seal's own principal, so the key a request names is the
// only check there is. Today the write succeeds and HEAD names tenant
// a's key (tenant b spends a's KMS quota, puts its data under a's
// crypto-shred, and probes which keys exist and which are disabled).
func TestKMSTenantCannotSealUnderAnotherTenantsKey(t *testing.T) {
	t.Parallel()
	p, _, _, keyA, keyB := kmsTenants(t)
	b := newAWSCLIAs(t, p, "tenant-b", "tenant-b-secret")
	body := writeFile(t, t.TempDir(), "body", []byte("tenant b data"))
	b.run("s3", "mb", "s3://b-data")
	b.fails("AccessDenied", "s3api", "put-object", "--bucket", "b-data", "--key", "under-a", "--body", body,
		"--server-side-encryption", "aws:kms", "--ssekms-key-id", keyA)
	// Nor through a bucket's default encryption, which would seal every
	// later writer's objects under it.
	b.fails("AccessDenied", "s3api", "put-bucket-encryption", "--bucket", "b-data", "--server-side-encryption-configuration",
		`{"Rules": [{"ApplyServerSideEncryptionByDefault": {"SSEAlgorithm": "aws:kms", "KMSMasterKeyID": "`+keyA+`"}}]}`)
	// Its own key it may name.
	b.run("s3api", "put-object", "--bucket", "b-data", "--key", "under-b", "--body", body,
		"--server-side-encryption", "aws:kms", "--ssekms-key-id", keyB)
}
