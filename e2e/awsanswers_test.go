package e2e

import (
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"testing"
)

// boto3AnswersScript drives s3seal with boto3 and prints, as JSON, what it
// saw: the code and message of a handful of errors, a listing (boto3 asks
// for encoding-type=url and decodes it itself), the storage class and
// redirect of an object, and a ListBuckets page.
const boto3AnswersScript = `
import json, sys
import boto3
from botocore.config import Config
from botocore.exceptions import ClientError

endpoint, ak, sk = sys.argv[1:4]
s3 = boto3.client("s3", endpoint_url=endpoint, aws_access_key_id=ak, aws_secret_access_key=sk,
                  region_name="us-east-1", config=Config(s3={"addressing_style": "path"}, retries={"max_attempts": 1}))
out = {}

def err(name, fn, **kw):
    try:
        fn(**kw)
        out[name] = ["", "", 0]
    except ClientError as e:
        out[name] = [e.response["Error"]["Code"], e.response["Error"].get("Message", ""),
                     e.response["ResponseMetadata"]["HTTPStatusCode"]]

s3.create_bucket(Bucket="answers")
for k in ["foo+1/bar", "foo/bar/xyzzy", "quux ab/thud", "asdf+b", "dir/"]:
    s3.put_object(Bucket="answers", Key=k, Body=b"x")
err("no_such_key", s3.get_object, Bucket="answers", Key="missing")
err("no_such_bucket", s3.list_objects_v2, Bucket="missing-bucket")
err("bucket_not_empty", s3.delete_bucket, Bucket="answers")
err("invalid_bucket_name", s3.create_bucket, Bucket="a..b")
err("key_too_long", s3.put_object, Bucket="answers", Key="k" * 1025, Body=b"x")
err("invalid_storage_class", s3.put_object, Bucket="answers", Key="sc", Body=b"x", StorageClass="FOO")
err("precondition", s3.get_object, Bucket="answers", Key="asdf+b", IfMatch='"nope"')
err("no_such_upload", s3.abort_multipart_upload, Bucket="answers", Key="k", UploadId="nope")

v2 = s3.list_objects_v2(Bucket="answers", Delimiter="/")
out["v2_prefixes"] = [p["Prefix"] for p in v2.get("CommonPrefixes", [])]
out["v2_keys"] = [o["Key"] for o in v2.get("Contents", [])]
v1 = s3.list_objects(Bucket="answers", Prefix="foo/")
out["v1_prefix"] = v1.get("Prefix", "")
out["v1_keys"] = [o["Key"] for o in v1.get("Contents", [])]

s3.put_object(Bucket="answers", Key="cold", Body=b"x", StorageClass="STANDARD_IA", WebsiteRedirectLocation="/warm")
h = s3.head_object(Bucket="answers", Key="cold")
out["head_class"] = [h.get("StorageClass", ""), h.get("WebsiteRedirectLocation", "")]

s3.create_bucket(Bucket="answers-2")
lb = s3.list_buckets(MaxBuckets=1, Prefix="answers")
out["list_buckets"] = [[b["Name"] for b in lb["Buckets"]], bool(lb.get("ContinuationToken")), lb.get("Prefix", ""), lb["Owner"]["ID"]]
print(json.dumps(out, separators=(",", ":")))
`

// TestBoto3AWSAnswers checks, with boto3, S3's exact codes and messages
// on a handful of errors, url-encoded listings as boto3 decodes them, the
// storage class and website redirect, and ListBuckets paging.
func TestBoto3AWSAnswers(t *testing.T) {
	t.Parallel()
	py := requireBoto3(t)
	p := startS3seal(t, sealOpts{})
	dir := t.TempDir()
	script := writeFile(t, dir, "answers.py", []byte(boto3AnswersScript))
	env := isolatedPythonEnv(dir)
	raw := runTool(t, env, py, script, p.Endpoint, p.AccessKey, p.SecretKey)
	var got map[string]json.RawMessage
	if err := json.Unmarshal([]byte(raw), &got); err != nil {
		t.Fatalf("boto3 output %q: %v", raw, err)
	}
	wantErrs := map[string]string{
		"no_such_key":           `["NoSuchKey","The specified key does not exist.",404]`,
		"no_such_bucket":        `["NoSuchBucket","The specified bucket does not exist.",404]`,
		"bucket_not_empty":      `["BucketNotEmpty","The bucket you tried to delete is not empty.",409]`,
		"invalid_bucket_name":   `["InvalidBucketName","The specified bucket is not valid.",400]`,
		"key_too_long":          `["KeyTooLongError","Your key is too long.",400]`,
		"invalid_storage_class": `["InvalidStorageClass","The storage class you specified is not valid.",400]`,
		"precondition":          `["PreconditionFailed","At least one of the pre-conditions you specified did not hold.",412]`,
		"no_such_upload":        `["NoSuchUpload","The specified multipart upload does not exist. The upload ID may be invalid, or the upload may have been aborted or completed.",404]`,
		"v2_prefixes":           `["dir/","foo+1/","foo/","quux ab/"]`,
		"v2_keys":               `["asdf+b"]`,
		"v1_prefix":             `"foo/"`,
		"v1_keys":               `["foo/bar/xyzzy"]`,
		"head_class":            `["STANDARD_IA","/warm"]`,
		// The owner is the caller's canonical id: by default the SHA-256
		// of its access key in hex.
		"list_buckets": `[["answers"],true,"answers","` + fmt.Sprintf("%x", sha256.Sum256([]byte(p.AccessKey))) + `"]`,
	}
	for name, want := range wantErrs {
		if g := string(got[name]); g != want {
			t.Errorf("%s: boto3 saw %s, want %s", name, g, want)
		}
	}
}
