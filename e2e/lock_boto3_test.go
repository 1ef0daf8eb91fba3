package e2e

import (
	"strings"
	"testing"
)

// boto3LockScript drives s3seal with boto3: a locked bucket, a PUT with
// retention and tags, tag and legal-hold calls, version deletes on the
// backend, bucket tags, an admin-only policy s3seal keeps, and CORS. It
// prints one line per check, "name ok" or "name FAIL detail".
const boto3LockScript = `
import sys, datetime, boto3, botocore
from botocore.config import Config
endpoint, backend = sys.argv[1], sys.argv[2]
def client(ak, sk, url):
    return boto3.client("s3", endpoint_url=url, aws_access_key_id=ak, aws_secret_access_key=sk,
        region_name="us-east-1", config=Config(s3={"addressing_style": "path"}, retries={"max_attempts": 1}))
user = client("user", "user-secret-key", endpoint)
admin = client("admin", "admin-secret-key", endpoint)
be = client("x", "y", backend)
def check(name, cond, detail=""):
    print(name, "ok" if cond else "FAIL " + str(detail))
def code(f):
    try:
        f()
        return "none"
    except botocore.exceptions.ClientError as e:
        return e.response["Error"]["Code"]

user.create_bucket(Bucket="bvault", ObjectLockEnabledForBucket=True)
until = datetime.datetime.now(datetime.timezone.utc) + datetime.timedelta(hours=1)
user.put_object(Bucket="bvault", Key="k", Body=b"sealed", ObjectLockMode="GOVERNANCE",
    ObjectLockRetainUntilDate=until, Tagging="a=1&b=2")
check("read", user.get_object(Bucket="bvault", Key="k")["Body"].read() == b"sealed")
tags = user.get_object_tagging(Bucket="bvault", Key="k")["TagSet"]
check("tags", sorted((t["Key"], t["Value"]) for t in tags) == [("a", "1"), ("b", "2")], tags)
user.put_object_tagging(Bucket="bvault", Key="k", Tagging={"TagSet": [{"Key": "c", "Value": "3"}]})
head = user.head_object(Bucket="bvault", Key="k")
check("head", head.get("TagCount") == 1 and head.get("ObjectLockMode") == "GOVERNANCE", head)
check("retag", user.get_object_tagging(Bucket="bvault", Key="k")["TagSet"] == [{"Key": "c", "Value": "3"}])
check("11 tags", code(lambda: user.put_object_tagging(Bucket="bvault", Key="k",
    Tagging={"TagSet": [{"Key": "k%d" % i, "Value": "v"} for i in range(11)]})) == "BadRequest")
check("bad mode", code(lambda: user.put_object(Bucket="bvault", Key="x", Body=b"x", ObjectLockMode="FOREVER",
    ObjectLockRetainUntilDate=until)) == "InvalidArgument")
vid = be.head_object(Bucket="bvault", Key="k")["VersionId"]
check("locked version", code(lambda: be.delete_object(Bucket="bvault", Key="k", VersionId=vid)) == "AccessDenied")
user.put_object_legal_hold(Bucket="bvault", Key="k", VersionId=vid, LegalHold={"Status": "ON"})
check("legal hold", user.get_object_legal_hold(Bucket="bvault", Key="k", VersionId=vid)["LegalHold"]["Status"] == "ON")
check("held version", code(lambda: be.delete_object(Bucket="bvault", Key="k", VersionId=vid,
    BypassGovernanceRetention=True)) == "AccessDenied")
user.put_object_legal_hold(Bucket="bvault", Key="k", VersionId=vid, LegalHold={"Status": "OFF"})
check("bypass", code(lambda: be.delete_object(Bucket="bvault", Key="k", VersionId=vid,
    BypassGovernanceRetention=True)) == "none")
user.put_bucket_tagging(Bucket="bvault", Tagging={"TagSet": [{"Key": "team", "Value": "ops"}]})
check("bucket tags", user.get_bucket_tagging(Bucket="bvault")["TagSet"] == [{"Key": "team", "Value": "ops"}])
policy = '{"Version":"2012-10-17","Statement":[{"Effect":"Deny","Principal":"*","Action":"s3:GetObject","Resource":"arn:aws:s3:::bvault/none"}]}'
check("user policy", code(lambda: user.put_bucket_policy(Bucket="bvault", Policy=policy)) == "AccessDenied")
admin.put_bucket_policy(Bucket="bvault", Policy=policy)
# s3seal keeps and enforces the policy itself: the store never gets it.
check("admin policy", "bvault/none" in admin.get_bucket_policy(Bucket="bvault")["Policy"] and
      code(lambda: be.get_bucket_policy(Bucket="bvault")) == "NoSuchBucketPolicy")
check("user cors", code(lambda: user.get_bucket_cors(Bucket="bvault")) == "NoSuchCORSConfiguration" and
      code(lambda: user.put_bucket_cors(Bucket="bvault", CORSConfiguration={"CORSRules": [{"AllowedMethods": ["GET"], "AllowedOrigins": ["*"]}]})) == "AccessDenied")
check("admin cors", code(lambda: admin.get_bucket_cors(Bucket="bvault")) == "NoSuchCORSConfiguration")
admin.put_bucket_cors(Bucket="bvault", CORSConfiguration={"CORSRules": [{"AllowedMethods": ["GET"], "AllowedOrigins": ["https://example.com"]}]})
check("cors", admin.get_bucket_cors(Bucket="bvault")["CORSRules"][0]["AllowedOrigins"] == ["https://example.com"])
admin.put_bucket_lifecycle_configuration(Bucket="bvault", LifecycleConfiguration={"Rules": [{"ID": "old",
    "Status": "Enabled", "Filter": {"Prefix": "logs/"}, "NoncurrentVersionExpiration": {"NoncurrentDays": 30}}]})
check("lifecycle", admin.get_bucket_lifecycle_configuration(Bucket="bvault")["Rules"][0]["ID"] == "old")
check("user lifecycle", code(lambda: user.delete_bucket_lifecycle(Bucket="bvault")) == "AccessDenied")
admin.delete_bucket_lifecycle(Bucket="bvault")
check("lifecycle deleted", code(lambda: admin.get_bucket_lifecycle_configuration(Bucket="bvault")) == "NoSuchLifecycleConfiguration")
`

// TestObjectLockAndTagsBoto3 is TestObjectLockAndTagsSDK's core with
// boto3, the client of Ceph's s3-tests.
func TestObjectLockAndTagsBoto3(t *testing.T) {
	t.Parallel()
	py := requireBoto3(t)
	m, p, _, _ := lockSetup(t)
	dir := t.TempDir()
	script := writeFile(t, dir, "lock.py", []byte(boto3LockScript))
	env := isolatedPythonEnv(dir)
	out := runTool(t, env, py, script, p.Endpoint, m.Endpoint)
	checks := 0
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		checks++
		if !strings.HasSuffix(line, " ok") {
			t.Errorf("boto3: %s", line)
		}
	}
	if checks != 19 {
		t.Fatalf("boto3 ran %d checks, want 19:\n%s", checks, out)
	}
}
