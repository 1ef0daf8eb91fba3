package e2e

import (
	"strings"
	"testing"
)

// boto3OwnersScript drives two accounts and an unsigned client against
// s3seal as a user of S3 would: the creator owns its bucket, the other
// account is refused until the bucket's ACL or policy lets it in, a
// policy's Deny wins, ACL answers name the owner as S3 does, and an
// unsigned client gets only what is public (or nothing, with the flag
// off). Arguments: endpoint, anonymous on ("1") or off.
const boto3OwnersScript = `
import sys, json, boto3, botocore
from botocore import UNSIGNED
from botocore.config import Config
ep, anon_on = sys.argv[1], sys.argv[2] == "1"
cfg = Config(s3={"addressing_style": "path"}, retries={"max_attempts": 1})
def client(ak, sk):
    return boto3.client("s3", endpoint_url=ep, aws_access_key_id=ak, aws_secret_access_key=sk, region_name="us-east-1", config=cfg)
alice, bob = client("alice", "alice-secret"), client("bob", "bob-secret")
anon = boto3.client("s3", endpoint_url=ep, region_name="us-east-1", config=Config(signature_version=UNSIGNED, s3={"addressing_style": "path"}, retries={"max_attempts": 1}))
def code(f):
    try:
        f()
        return "OK"
    except botocore.exceptions.ClientError as e:
        return e.response["Error"]["Code"]
def expect(what, got, want):
    if got != want:
        print("FAIL", what, "got", got, "want", want)
        sys.exit(1)
alice.create_bucket(Bucket="albums")
alice.put_object(Bucket="albums", Key="a.txt", Body=b"hello")
expect("bob reads alice's private object", code(lambda: bob.get_object(Bucket="albums", Key="a.txt")), "AccessDenied")
expect("bob lists alice's private bucket", code(lambda: bob.list_objects(Bucket="albums")), "AccessDenied")
expect("bob re-creates alice's bucket", code(lambda: bob.create_bucket(Bucket="albums")), "BucketAlreadyExists")
acl = alice.get_bucket_acl(Bucket="albums")
expect("ACL owner", (acl["Owner"]["ID"], acl["Owner"]["DisplayName"]), ("a11ce", "Alice"))
expect("ACL grants", [(g["Grantee"]["Type"], g["Grantee"].get("ID"), g["Permission"]) for g in acl["Grants"]], [("CanonicalUser", "a11ce", "FULL_CONTROL")])
alice.put_object_acl(Bucket="albums", Key="a.txt", ACL="public-read")
expect("bob reads a public-read object", code(lambda: bob.get_object(Bucket="albums", Key="a.txt")), "OK")
expect("unsigned read of a public-read object", code(lambda: anon.get_object(Bucket="albums", Key="a.txt")), "OK" if anon_on else "AccessDenied")
expect("unsigned write", code(lambda: anon.put_object(Bucket="albums", Key="b.txt", Body=b"x")), "AccessDenied")
alice.put_bucket_acl(Bucket="albums", GrantRead='emailAddress="bob@example.com"')
expect("bob lists once the ACL grants him READ", code(lambda: bob.list_objects(Bucket="albums")), "OK")
alice.put_bucket_policy(Bucket="albums", Policy=json.dumps({"Version": "2012-10-17", "Statement": [
    {"Effect": "Deny", "Principal": {"AWS": "arn:aws:iam::222222222222:user/bob"}, "Action": "s3:GetObject", "Resource": "arn:aws:s3:::albums/*"}]}))
expect("a policy Deny wins over the ACL", code(lambda: bob.get_object(Bucket="albums", Key="a.txt")), "AccessDenied")
expect("the owner keeps its access", code(lambda: alice.get_object(Bucket="albums", Key="a.txt")), "OK")
status = alice.get_bucket_policy_status(Bucket="albums")["PolicyStatus"]["IsPublic"]
expect("a Deny-only policy is not public", status, False)
alice.put_public_access_block(Bucket="albums", PublicAccessBlockConfiguration={"BlockPublicAcls": True, "IgnorePublicAcls": True, "BlockPublicPolicy": True, "RestrictPublicBuckets": True})
expect("unsigned read once public ACLs are ignored", code(lambda: anon.get_object(Bucket="albums", Key="a.txt")), "AccessDenied")
expect("a public ACL under BlockPublicAcls", code(lambda: alice.put_object_acl(Bucket="albums", Key="a.txt", ACL="public-read")), "AccessDenied")
print("ALL OK")
`

// TestOwnersACLsAndPolicyBoto3 runs boto3OwnersScript against s3seal on
// the embedded store, with anonymous access on and off.
func TestOwnersACLsAndPolicyBoto3(t *testing.T) {
	t.Parallel()
	py := requireBoto3(t)
	if py == "" {
		return
	}
	for _, anon := range []bool{true, false} {
		dir := t.TempDir()
		creds := writeJSON(t, dir, "creds.json", map[string]any{"credentials": []map[string]any{
			{"access_key": "alice", "secret_key": "alice-secret", "read": []string{"*"}, "write": []string{"*"}, "admin": true,
				"canonical_id": "a11ce", "display_name": "Alice", "account": "111111111111"},
			{"access_key": "bob", "secret_key": "bob-secret", "read": []string{"*"}, "write": []string{"*"},
				"canonical_id": "b0b", "display_name": "Bob", "account": "222222222222", "email": "bob@example.com"},
		}})
		opts := sealOpts{CredentialsFile: creds}
		flag := "0"
		if anon {
			opts.Args, flag = []string{"--allow-anonymous"}, "1"
		}
		p := startS3seal(t, opts)
		script := writeFile(t, dir, "owners.py", []byte(boto3OwnersScript))
		out := runTool(t, isolatedPythonEnv(dir, "AWS_EC2_METADATA_DISABLED=true"), py, script, p.Endpoint, flag)
		if !strings.Contains(out, "ALL OK") {
			t.Fatalf("anonymous=%v: %s", anon, out)
		}
	}
}
