package e2e

import (
	"strings"
	"testing"
)

// boto3SSEScript drives SSE-C and SSE-KMS through s3seal with boto3 (the
// client of Ceph's s3-tests): PUT, GET, ranges, HEAD, copies, multipart
// with UploadPartCopy, a presigned GET, and the refusals S3 gives for a
// missing, wrong or inapplicable customer key. With a backend URL it also
// checks what the store got: never the customer key, and SSE-KMS applied
// to the sealed bytes. It prints one line per check, "name ok" or
// "name FAIL detail".
const boto3SSEScript = `
import sys, base64, hashlib, boto3, botocore, urllib.request
from botocore.config import Config
endpoint, ak, sk = sys.argv[1], sys.argv[2], sys.argv[3]
backend = sys.argv[4] if len(sys.argv) > 4 else ""
cfg = Config(s3={"addressing_style": "path"}, retries={"max_attempts": 1})
c = boto3.client("s3", endpoint_url=endpoint, aws_access_key_id=ak, aws_secret_access_key=sk, region_name="us-east-1", config=cfg)
def check(name, cond, detail=""):
    print(name, "ok" if cond else "FAIL " + str(detail))
def err(f):
    try:
        f()
        return "none"
    except botocore.exceptions.ClientError as e:
        return "%s %s" % (e.response["ResponseMetadata"]["HTTPStatusCode"], e.response["Error"].get("Code", ""))
def ssec(raw):
    return {"SSECustomerAlgorithm": "AES256", "SSECustomerKey": base64.b64encode(raw).decode(),
            "SSECustomerKeyMD5": base64.b64encode(hashlib.md5(raw).digest()).decode()}
def src(k):
    return {"CopySource" + n: v for n, v in k.items()}
A, B = ssec(b"A" * 32), ssec(b"B" * 32)
data = bytes(range(256)) * 1000  # 256000 bytes, several segments

c.create_bucket(Bucket="sse")
r = c.put_object(Bucket="sse", Key="c", Body=data, **A)
check("put echo", r.get("SSECustomerAlgorithm") == "AES256" and r.get("SSECustomerKeyMD5") == A["SSECustomerKeyMD5"], r)
g = c.get_object(Bucket="sse", Key="c", **A)
check("get", g["Body"].read() == data and g.get("SSECustomerKeyMD5") == A["SSECustomerKeyMD5"])
g = c.get_object(Bucket="sse", Key="c", Range="bytes=65530-131080", **A)
check("range", g["Body"].read() == data[65530:131081])
check("head", c.head_object(Bucket="sse", Key="c", **A)["ContentLength"] == len(data))
check("head no key", err(lambda: c.head_object(Bucket="sse", Key="c")) == "400 400")
check("get no key", err(lambda: c.get_object(Bucket="sse", Key="c")) == "400 InvalidRequest")
check("get wrong key", err(lambda: c.get_object(Bucket="sse", Key="c", **B)) == "403 AccessDenied")
check("range wrong key", err(lambda: c.get_object(Bucket="sse", Key="c", Range="bytes=0-9", **B)) == "403 AccessDenied")
bad = dict(A, SSECustomerKeyMD5=B["SSECustomerKeyMD5"])
check("bad md5", err(lambda: c.put_object(Bucket="sse", Key="x", Body=b"x", **bad)) == "400 InvalidArgument")
c.put_object(Bucket="sse", Key="plain", Body=b"plain")
check("key for plain", err(lambda: c.get_object(Bucket="sse", Key="plain", **A)) == "400 InvalidRequest")
listed = c.list_objects_v2(Bucket="sse", Prefix="c")["Contents"]
check("list size", listed[0]["Size"] == len(data), listed)

c.copy_object(Bucket="sse", Key="rekeyed", CopySource="sse/c", **src(A), **B)
check("copy rekeyed", c.get_object(Bucket="sse", Key="rekeyed", **B)["Body"].read() == data)
check("copy old key", err(lambda: c.get_object(Bucket="sse", Key="rekeyed", **A)) == "403 AccessDenied")
c.copy_object(Bucket="sse", Key="decrypted", CopySource="sse/c", **src(A))
check("copy to plain", c.get_object(Bucket="sse", Key="decrypted")["Body"].read() == data)
check("copy no source key", err(lambda: c.copy_object(Bucket="sse", Key="y", CopySource="sse/c")) == "400 InvalidRequest")

part1 = b"1" * (5 << 20)
up = c.create_multipart_upload(Bucket="sse", Key="mp", **A)["UploadId"]
check("part wrong key", err(lambda: c.upload_part(Bucket="sse", Key="mp", UploadId=up, PartNumber=1, Body=part1, **B)) == "400 InvalidRequest")
check("part no key", err(lambda: c.upload_part(Bucket="sse", Key="mp", UploadId=up, PartNumber=1, Body=part1)) == "400 InvalidRequest")
e1 = c.upload_part(Bucket="sse", Key="mp", UploadId=up, PartNumber=1, Body=part1, **A)["ETag"]
e2 = c.upload_part_copy(Bucket="sse", Key="mp", UploadId=up, PartNumber=2, CopySource="sse/rekeyed",
    CopySourceRange="bytes=0-99999", **src(B), **A)["CopyPartResult"]["ETag"]
c.complete_multipart_upload(Bucket="sse", Key="mp", UploadId=up,
    MultipartUpload={"Parts": [{"PartNumber": 1, "ETag": e1}, {"PartNumber": 2, "ETag": e2}]}, **A)
whole = part1 + data[:100000]
g = c.get_object(Bucket="sse", Key="mp", Range="bytes=%d-%d" % ((5 << 20) - 10, (5 << 20) + 99), **A)
check("mp range", g["Body"].read() == whole[(5 << 20) - 10:(5 << 20) + 100])
check("mp no key", err(lambda: c.get_object(Bucket="sse", Key="mp")) == "400 InvalidRequest")

pc = boto3.client("s3", endpoint_url=endpoint, aws_access_key_id=ak, aws_secret_access_key=sk, region_name="us-east-1",
    config=Config(signature_version="s3v4", s3={"addressing_style": "path"}))
url = pc.generate_presigned_url("get_object", Params=dict(Bucket="sse", Key="c", **A), ExpiresIn=300)
req = urllib.request.Request(url, headers={"x-amz-server-side-encryption-customer-algorithm": "AES256",
    "x-amz-server-side-encryption-customer-key": A["SSECustomerKey"],
    "x-amz-server-side-encryption-customer-key-MD5": A["SSECustomerKeyMD5"]})
check("presigned", urllib.request.urlopen(req).read() == data)

r = c.put_object(Bucket="sse", Key="kms", Body=b"kms body", ServerSideEncryption="aws:kms", SSEKMSKeyId="testkey-1")
h = c.head_object(Bucket="sse", Key="kms")
check("kms head", h.get("ServerSideEncryption") == "aws:kms" and h.get("SSEKMSKeyId") == "testkey-1", h)
check("kms get", c.get_object(Bucket="sse", Key="kms")["Body"].read() == b"kms body")
kc = boto3.client("s3", endpoint_url=endpoint, aws_access_key_id=ak, aws_secret_access_key=sk, region_name="us-east-1", config=cfg)
kc.meta.events.register("before-call.s3.GetObject", lambda **kw: kw["params"]["headers"].update({"x-amz-server-side-encryption": "aws:kms"}))
check("kms declared on get", err(lambda: kc.get_object(Bucket="sse", Key="kms")) == "400 InvalidArgument")
c.copy_object(Bucket="sse", Key="kms2", CopySource="sse/kms", ServerSideEncryption="aws:kms", SSEKMSKeyId="testkey-2")
check("kms copy", c.head_object(Bucket="sse", Key="kms2").get("SSEKMSKeyId") == "testkey-2")
c.copy_object(Bucket="sse", Key="kms3", CopySource="sse/kms")
check("kms copy unencrypted", c.head_object(Bucket="sse", Key="kms3").get("ServerSideEncryption") != "aws:kms")
up = c.create_multipart_upload(Bucket="sse", Key="kmsmp", ServerSideEncryption="aws:kms", SSEKMSKeyId="testkey-2")["UploadId"]
r = c.upload_part(Bucket="sse", Key="kmsmp", UploadId=up, PartNumber=1, Body=b"part")
check("kms part", r.get("ServerSideEncryption") == "aws:kms" and r.get("SSEKMSKeyId") == "testkey-2", r)
r = c.complete_multipart_upload(Bucket="sse", Key="kmsmp", UploadId=up, MultipartUpload={"Parts": [{"PartNumber": 1, "ETag": r["ETag"]}]})
check("kms complete", r.get("ServerSideEncryption") == "aws:kms" and c.head_object(Bucket="sse", Key="kmsmp").get("SSEKMSKeyId") == "testkey-2", r)

if backend:
    be = boto3.client("s3", endpoint_url=backend, aws_access_key_id="x", aws_secret_access_key="y", region_name="us-east-1", config=cfg)
    bh = be.head_object(Bucket="sse", Key="c")
    raw = be.get_object(Bucket="sse", Key="c")["Body"].read()
    check("store never sees the key", "SSECustomerKeyMD5" not in bh and "s3seal-ssec" in bh["Metadata"] and
          A["SSECustomerKey"] not in str(bh) and A["SSECustomerKeyMD5"] not in str(bh), bh)
    check("store holds ciphertext", data[:1000] not in raw and len(raw) > len(data))
    kh = be.head_object(Bucket="sse", Key="kms")
    check("store kms", kh.get("ServerSideEncryption") == "aws:kms" and kh.get("SSEKMSKeyId") == "testkey-1", kh)
`

func runSSEScript(t *testing.T, p *sealProc, backend string) {
	t.Helper()
	py := requireBoto3(t)
	dir := t.TempDir()
	script := writeFile(t, dir, "sse.py", []byte(boto3SSEScript))
	env := isolatedPythonEnv(dir)
	args := []string{script, p.Endpoint, p.AccessKey, p.SecretKey}
	want := 27
	if backend != "" {
		args = append(args, backend)
		want += 3
	}
	out := runTool(t, env, py, args...)
	checks := 0
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		checks++
		if !strings.HasSuffix(line, " ok") {
			t.Errorf("boto3: %s", line)
		}
	}
	if checks != want {
		t.Fatalf("boto3 ran %d checks, want %d:\n%s", checks, want, out)
	}
}

// TestSSEBoto3Embedded: SSE-C and SSE-KMS on the embedded default (which
// keeps SSE-KMS headers as a stand-in for a store with a KMS).
func TestSSEBoto3Embedded(t *testing.T) {
	t.Parallel()
	runSSEScript(t, startS3seal(t, sealOpts{}), "")
}

// TestSSEBoto3Moto: the same in front of moto, and what moto got.
func TestSSEBoto3Moto(t *testing.T) {
	t.Parallel()
	m := startMoto(t)
	runSSEScript(t, startS3seal(t, sealOpts{Backend: m}), m.Endpoint)
}
