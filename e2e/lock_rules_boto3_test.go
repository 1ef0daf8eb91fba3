package e2e

import (
	"strings"
	"testing"
)

// boto3LockRulesScript checks S3's Object Lock rules that s3seal applies
// itself, whatever the store (moto checks none of them): the lock
// configuration document and the bucket state it needs, retention and
// legal hold on a bucket without Object Lock, mode changes of a
// retention, GetObjectRetention (moto has none: read from a HEAD), and a
// legal hold given at CreateMultipartUpload on the completed object.
// One line per check, "name ok" or "name FAIL detail".
const boto3LockRulesScript = `
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
def err(f):
    try:
        f()
        return (200, "none")
    except botocore.exceptions.ClientError as e:
        return (e.response["ResponseMetadata"]["HTTPStatusCode"], e.response["Error"]["Code"])
def conf(mode="GOVERNANCE", status="Enabled", **period):
    return {"ObjectLockEnabled": status, "Rule": {"DefaultRetention": dict(Mode=mode, **period)}}

user.create_bucket(Bucket="plain")
put = lambda b, c: admin.put_object_lock_configuration(Bucket=b, ObjectLockConfiguration=c)
check("unversioned", err(lambda: put("plain", conf(Days=1))) == (409, "InvalidBucketState"), err(lambda: put("plain", conf(Days=1))))
user.put_bucket_versioning(Bucket="plain", VersioningConfiguration={"Status": "Suspended"})
check("suspended", err(lambda: put("plain", conf(Days=1))) == (409, "InvalidBucketState"))
check("missing bucket", err(lambda: put("nobucket", conf(Days=1))) == (404, "NoSuchBucket"))
user.put_bucket_versioning(Bucket="plain", VersioningConfiguration={"Status": "Enabled"})
check("enable after create", err(lambda: put("plain", conf(Days=1))) == (200, "none"))

user.create_bucket(Bucket="vault", ObjectLockEnabledForBucket=True)
for name, c, want in [("mode abc", conf("abc", Years=1), "MalformedXML"),
        ("mode lower case", conf("governance", Years=1), "MalformedXML"),
        ("status Disabled", conf(status="Disabled", Years=1), "MalformedXML"),
        ("days and years", conf(Days=1, Years=1), "MalformedXML"),
        ("days 0", conf(Days=0), "InvalidRetentionPeriod"),
        ("years -1", conf(Years=-1), "InvalidRetentionPeriod")]:
    got = err(lambda: put("vault", c))
    check(name, got == (400, want), got)
put("vault", conf(Days=1))
got = user.get_object_lock_configuration(Bucket="vault")["ObjectLockConfiguration"]
check("get config", got == conf(Days=1), got)

user.create_bucket(Bucket="nolock")
user.put_object(Bucket="nolock", Key="k", Body=b"x")
check("retention no lock", err(lambda: user.get_object_retention(Bucket="nolock", Key="k")) == (400, "InvalidRequest"),
      err(lambda: user.get_object_retention(Bucket="nolock", Key="k")))
check("legal hold no lock", err(lambda: user.get_object_legal_hold(Bucket="nolock", Key="k")) == (400, "InvalidRequest"))
check("retention no bucket", err(lambda: user.get_object_retention(Bucket="nobucket", Key="k")) == (404, "NoSuchBucket"))

user.create_bucket(Bucket="modes", ObjectLockEnabledForBucket=True)
until = datetime.datetime.now(datetime.timezone.utc).replace(microsecond=0) + datetime.timedelta(hours=1)
later = until + datetime.timedelta(hours=1)
user.put_object(Bucket="modes", Key="g", Body=b"g", ObjectLockMode="GOVERNANCE", ObjectLockRetainUntilDate=until)
user.put_object(Bucket="modes", Key="c", Body=b"c", ObjectLockMode="COMPLIANCE", ObjectLockRetainUntilDate=until)
ret = lambda c, k, mode, date, **kw: c.put_object_retention(Bucket="modes", Key=k, Retention={"Mode": mode, "RetainUntilDate": date}, **kw)
check("governance to compliance", err(lambda: ret(user, "g", "COMPLIANCE", until)) == (403, "AccessDenied"))
check("governance shorter", err(lambda: ret(user, "g", "GOVERNANCE", until - datetime.timedelta(minutes=5))) == (403, "AccessDenied"))
check("governance longer", err(lambda: ret(user, "g", "GOVERNANCE", later)) == (200, "none"))
check("governance bypass", err(lambda: ret(admin, "g", "GOVERNANCE", until, BypassGovernanceRetention=True)) == (200, "none"))
check("compliance to governance", err(lambda: ret(user, "c", "GOVERNANCE", until)) == (403, "AccessDenied"))
check("compliance bypass", err(lambda: ret(admin, "c", "GOVERNANCE", later, BypassGovernanceRetention=True)) == (403, "AccessDenied"))
check("compliance shorter", err(lambda: ret(user, "c", "COMPLIANCE", until - datetime.timedelta(minutes=5))) == (403, "AccessDenied"))
check("compliance longer", err(lambda: ret(user, "c", "COMPLIANCE", later)) == (200, "none"))
head = be.head_object(Bucket="modes", Key="c")
got = user.get_object_retention(Bucket="modes", Key="c")["Retention"]
check("get retention", got == {"Mode": "COMPLIANCE", "RetainUntilDate": later}, got)
user.put_object(Bucket="modes", Key="free", Body=b"f")
check("no retention", err(lambda: user.get_object_retention(Bucket="modes", Key="free")) == (404, "NoSuchObjectLockConfiguration"),
      err(lambda: user.get_object_retention(Bucket="modes", Key="free")))
check("compliance kept", head.get("ObjectLockMode") == "COMPLIANCE" and head.get("ObjectLockRetainUntilDate") == later, head)

up = user.create_multipart_upload(Bucket="modes", Key="mp", ObjectLockLegalHoldStatus="ON")
p = user.upload_part(Bucket="modes", Key="mp", UploadId=up["UploadId"], PartNumber=1, Body=b"abc")
done = user.complete_multipart_upload(Bucket="modes", Key="mp", UploadId=up["UploadId"],
    MultipartUpload={"Parts": [{"ETag": p["ETag"], "PartNumber": 1}]})
vid = done["VersionId"]
check("mp held", be.head_object(Bucket="modes", Key="mp", VersionId=vid).get("ObjectLockLegalHoldStatus") == "ON")
check("mp delete", err(lambda: user.delete_object(Bucket="modes", Key="mp", VersionId=vid)) == (403, "AccessDenied"))
user.put_object_legal_hold(Bucket="modes", Key="mp", LegalHold={"Status": "OFF"})
check("mp released", err(lambda: user.delete_object(Bucket="modes", Key="mp", VersionId=vid)) == (200, "none"))
`

// TestLockRulesBoto3 drives S3's Object Lock rules with boto3 through
// s3seal in front of moto, which enforces none of them itself: s3seal
// answers as S3 does (s3-tests' test_object_lock_* cases).
func TestLockRulesBoto3(t *testing.T) {
	t.Parallel()
	py := requireBoto3(t)
	m, p, _, _ := lockSetup(t)
	dir := t.TempDir()
	script := writeFile(t, dir, "lockrules.py", []byte(boto3LockRulesScript))
	env := isolatedPythonEnv(dir)
	out := runTool(t, env, py, script, p.Endpoint, m.Endpoint)
	checks := 0
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		checks++
		if !strings.HasSuffix(line, " ok") {
			t.Errorf("boto3: %s", line)
		}
	}
	if checks != 28 {
		t.Fatalf("boto3 ran %d checks, want 28:\n%s", checks, out)
	}
}
