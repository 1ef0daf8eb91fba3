package e2e

import (
	"os"
	"testing"

	"github.com/s3seal/s3seal/internal/localkms"
)

// TestKMSForwardingCredentialCannotSetAnotherTenantsKeyAsDefault: a
// credential with "sse_kms_to_store" forwards its own SSE-KMS writes to
// the store, but a bucket's default encryption applies to every writer
// of the bucket, and the others' writes are sealed by s3seal under the
// KMS key it names. Such a credential must not be able to name in
// PutBucketEncryption a key of s3seal's KMS it may not use (its own
// key_id, the default, its kms_keys): else a later writer with "*" (or
// the key's own tenant) has its objects sealed under a key the setter
// chose (another tenant's, to be crypto-shredded with it). Today the
// check is skipped for a forwarding setter.
func TestKMSForwardingCredentialCannotSetAnotherTenantsKeyAsDefault(t *testing.T) {
	t.Parallel()
	kmsd := localkms.StartServer(t)
	k := kmsCLI(t, kmsd.Endpoint, localkms.Region)
	keyA, keyS := createKMSKey(t, k), createKMSKey(t, k)
	dir := t.TempDir()
	creds := writeFile(t, dir, "creds.json", []byte(`{"credentials": [
 {"access_key": "tenant-a", "secret_key": "tenant-a-secret", "read": ["*"], "write": ["*"], "key_id": "`+keyA+`"},
 {"access_key": "fwd", "secret_key": "fwd-secret", "read": ["*"], "write": ["*"], "key_id": "`+keyS+`", "sse_kms_to_store": true},
 {"access_key": "admin", "secret_key": "admin-secret", "read": ["*"], "write": ["*"], "kms_keys": ["*"]}]}`))
	if err := os.Chmod(creds, 0o600); err != nil {
		t.Fatal(err)
	}
	p := startS3seal(t, sealOpts{CredentialsFile: creds, KMSKey: "aws-kms://",
		Env: append(kmsEnv(kmsd.Endpoint, localkms.Region), "S3SEAL_KEY="+randomKey(t))})
	fwd, admin := newAWSCLIAs(t, p, "fwd", "fwd-secret"), newAWSCLIAs(t, p, "admin", "admin-secret")
	admin.run("s3", "mb", "s3://shared")
	// As the setter's own list decides for any other credential
	// (TestKMSTenantCannotSealUnderAnotherTenantsKey).
	_, errOut, err := tryTool(t, fwd.env, "aws", "--endpoint-url", fwd.endpoint, "s3api", "put-bucket-encryption", "--bucket", "shared",
		"--server-side-encryption-configuration", `{"Rules": [{"ApplyServerSideEncryptionByDefault": {"SSEAlgorithm": "aws:kms", "KMSMasterKeyID": "`+keyA+`"}}]}`)
	if err != nil {
		t.Logf("refused: %s", errOut)
		return
	}
	body := writeFile(t, dir, "body", []byte("admin data"))
	admin.run("s3api", "put-object", "--bucket", "shared", "--key", "by-admin", "--body", body)
	h := headJSON(t, admin, "shared", "by-admin")
	t.Errorf("a forwarding credential set tenant a's key %s as the bucket's default; the admin's next write was sealed under %v", keyA, h["SSEKMSKeyId"])
}
