package e2e

import (
	"encoding/base64"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/s3seal/s3seal/internal/localkms"
)

// kmsEnv points the AWS SDK's standard settings (in s3seal and in the
// aws CLI) at a KMS endpoint, as an operator would.
func kmsEnv(endpoint, region string) []string {
	return []string{"AWS_ENDPOINT_URL_KMS=" + endpoint, "AWS_REGION=" + region,
		"AWS_ACCESS_KEY_ID=kms-test", "AWS_SECRET_ACCESS_KEY=kms-test"}
}

// kmsCLI is the aws CLI talking to the KMS (or the store) at endpoint.
func kmsCLI(t *testing.T, endpoint, region string) *awsCLI {
	t.Helper()
	requireTool(t, "aws")
	dir := t.TempDir()
	env := cleanEnv([]string{"AWS_CA_BUNDLE"}, "AWS_ACCESS_KEY_ID=kms-test", "AWS_SECRET_ACCESS_KEY=kms-test",
		"AWS_DEFAULT_REGION="+region, "AWS_EC2_METADATA_DISABLED=true", "AWS_MAX_ATTEMPTS=1",
		"AWS_CONFIG_FILE="+filepath.Join(dir, "none"), "HOME="+dir)
	return &awsCLI{t: t, endpoint: endpoint, env: env}
}

// createKMSKey makes a symmetric key and returns its ARN.
func createKMSKey(t *testing.T, k *awsCLI) string {
	t.Helper()
	return strings.TrimSpace(k.run("kms", "create-key", "--query", "KeyMetadata.Arn", "--output", "text"))
}

func headJSON(t *testing.T, a *awsCLI, bucket, key string) map[string]any {
	t.Helper()
	var h map[string]any
	if err := json.Unmarshal([]byte(a.run("s3api", "head-object", "--bucket", bucket, "--key", key)), &h); err != nil {
		t.Fatal(err)
	}
	return h
}

// TestKMSOnMotoWithTheAWSCLI runs s3seal in front of moto with its master
// key in moto's KMS (the same endpoint, as AWS has both): no key file, no
// key in the data dir; the aws CLI writes with the default key, with
// SSE-KMS naming another key (single PUT, bucket key, multipart), copies
// to a third key; HEAD answers as AWS does; the store sees no SSE-KMS
// and no plaintext; a restart reads everything back.
func TestKMSOnMotoWithTheAWSCLI(t *testing.T) {
	t.Parallel()
	m := startMoto(t)
	k := kmsCLI(t, m.Endpoint, "us-east-1")
	keyA, keyB := createKMSKey(t, k), createKMSKey(t, k)
	opts := sealOpts{Backend: m, KMSKey: "aws-kms://" + keyA, Env: kmsEnv(m.Endpoint, "us-east-1")}
	p := startS3seal(t, opts)
	if _, err := os.Stat(filepath.Join(p.DataDir, "dev-master.key")); err == nil {
		t.Fatal("a master key was written to the data dir")
	}
	a := newAWSCLIMultipart(t, p)
	dir := t.TempDir()
	small := writeFile(t, dir, "small", []byte("kms sealed body"))
	bigBody := patternBytes(7, 12<<20)
	big := writeFile(t, dir, "big", bigBody)
	a.run("s3", "mb", "s3://kms")
	a.run("s3", "cp", "--only-show-errors", small, "s3://kms/default")
	a.run("s3api", "put-object", "--bucket", "kms", "--key", "named", "--body", small,
		"--server-side-encryption", "aws:kms", "--ssekms-key-id", keyB, "--bucket-key-enabled")
	a.run("s3", "cp", "--only-show-errors", big, "s3://kms/big", "--sse", "aws:kms", "--sse-kms-key-id", keyB)
	a.run("s3api", "copy-object", "--bucket", "kms", "--key", "copied", "--copy-source", "kms/named",
		"--server-side-encryption", "aws:kms", "--ssekms-key-id", keyA)

	for _, c := range []struct {
		key, arn  string
		bucketKey bool
	}{{"default", keyA, false}, {"named", keyB, true}, {"big", keyB, false}, {"copied", keyA, false}} {
		h := headJSON(t, a, "kms", c.key)
		if etag, _ := h["ETag"].(string); c.key == "big" && !strings.HasSuffix(etag, `-3"`) {
			t.Errorf("big: ETag %s, want a multipart object of 3 parts", etag)
		}
		bk, _ := h["BucketKeyEnabled"].(bool)
		if h["ServerSideEncryption"] != "aws:kms" || h["SSEKMSKeyId"] != c.arn || bk != c.bucketKey {
			t.Errorf("%s: HEAD %v, want aws:kms, %s, bucket key %v", c.key, h, c.arn, c.bucketKey)
		}
	}
	got := filepath.Join(dir, "got")
	a.run("s3", "cp", "--only-show-errors", "s3://kms/big", got)
	if err := sameFile(got, bigBody); err != nil {
		t.Fatal(err)
	}

	// The store holds sealed bytes under s3seal's metadata and was asked
	// for no encryption of its own.
	store := kmsCLI(t, m.Endpoint, "us-east-1")
	sh := headJSON(t, store, "kms", "named")
	meta, _ := sh["Metadata"].(map[string]any)
	if sh["ServerSideEncryption"] == "aws:kms" || meta["s3seal-kms"] == nil || meta["s3seal-bk"] != "1" {
		t.Errorf("store's HEAD of a terminated SSE-KMS object: %v", sh)
	}

	p.Stop()
	opts.DataDir = p.DataDir
	p2 := startS3seal(t, opts)
	a2 := newAWSCLI(t, p2)
	out := a2.run("s3", "cp", "s3://kms/copied", "-")
	if out != "kms sealed body" {
		t.Fatalf("after a restart: %q", out)
	}
}

// kmsTenants starts local-kms (a KMS that refuses disabled keys), makes a
// key per tenant, and runs s3seal on the embedded store with a local
// primary key, the KMS as a provider only (aws-kms:// names no key) and
// two credentials whose key_id is their tenant's KMS key.
func kmsTenants(t *testing.T, extra ...string) (p *sealProc, kmsd *localkms.Server, k *awsCLI, keyA, keyB string) {
	t.Helper()
	kmsd = localkms.StartServer(t)
	k = kmsCLI(t, kmsd.Endpoint, localkms.Region)
	keyA, keyB = createKMSKey(t, k), createKMSKey(t, k)
	dir := t.TempDir()
	creds := writeFile(t, dir, "creds.json", []byte(`{"credentials": [
 {"access_key": "tenant-a", "secret_key": "tenant-a-secret", "read": ["a-data"], "write": ["a-data"], "key_id": "`+keyA+`"},
 {"access_key": "tenant-b", "secret_key": "tenant-b-secret", "read": ["b-data"], "write": ["b-data"], "key_id": "`+keyB+`"}]}`))
	if err := os.Chmod(creds, 0o600); err != nil {
		t.Fatal(err)
	}
	p = startS3seal(t, sealOpts{CredentialsFile: creds, KMSKey: "aws-kms://", Env: append(kmsEnv(kmsd.Endpoint, localkms.Region), "S3SEAL_KEY="+randomKey(t)),
		Args: extra})
	return p, kmsd, k, keyA, keyB
}

// TestKMSTenantCryptoShred: two tenants on two KMS keys; disabling one
// key makes exactly that tenant's objects unreadable, with an error
// naming the key, and its writes fail; the other tenant is untouched; and
// enabling the key again reads everything back (nothing was lost).
func TestKMSTenantCryptoShred(t *testing.T) {
	t.Parallel()
	p, _, k, keyA, keyB := kmsTenants(t, "--kms-cache-ttl", "-1s")
	a, b := newAWSCLIAs(t, p, "tenant-a", "tenant-a-secret"), newAWSCLIAs(t, p, "tenant-b", "tenant-b-secret")
	body := writeFile(t, t.TempDir(), "body", []byte("tenant data"))
	a.run("s3", "mb", "s3://a-data")
	b.run("s3", "mb", "s3://b-data")
	a.run("s3", "cp", "--only-show-errors", body, "s3://a-data/obj")
	b.run("s3", "cp", "--only-show-errors", body, "s3://b-data/obj")
	if h := headJSON(t, a, "a-data", "obj"); h["SSEKMSKeyId"] != keyA {
		t.Fatalf("tenant a's object: %v, want key %s", h, keyA)
	}
	if h := headJSON(t, b, "b-data", "obj"); h["SSEKMSKeyId"] != keyB {
		t.Fatalf("tenant b's object: %v, want key %s", h, keyB)
	}

	k.run("kms", "disable-key", "--key-id", keyA)
	msg := a.fails("KMS.DisabledException", "s3api", "get-object", "--bucket", "a-data", "--key", "obj", filepath.Join(t.TempDir(), "out"))
	if !strings.Contains(msg, keyA) {
		t.Errorf("the refusal does not name the key %s: %s", keyA, msg)
	}
	a.fails("KMS.DisabledException", "s3api", "put-object", "--bucket", "a-data", "--key", "new", "--body", body)
	if out := b.run("s3", "cp", "s3://b-data/obj", "-"); out != "tenant data" {
		t.Fatalf("tenant b after tenant a's key was disabled: %q", out)
	}

	k.run("kms", "enable-key", "--key-id", keyA)
	if out := a.run("s3", "cp", "s3://a-data/obj", "-"); out != "tenant data" {
		t.Fatalf("tenant a after its key was enabled again: %q", out)
	}
}

// TestKMSOutage: the KMS goes away. Reads whose data key is cached keep
// working; writes that need the KMS fail closed with 503 naming the KMS
// and the key; /readyz says the KMS cannot be reached; the metrics count
// the failed calls.
func TestKMSOutage(t *testing.T) {
	t.Parallel()
	p, kmsd, _, keyA, _ := kmsTenants(t, "--kms-timeout", "1s")
	a := newAWSCLIAs(t, p, "tenant-a", "tenant-a-secret")
	body := writeFile(t, t.TempDir(), "body", []byte("cached"))
	a.run("s3", "mb", "s3://a-data")
	a.run("s3", "cp", "--only-show-errors", body, "s3://a-data/obj")
	if code, _ := httpGet(t, p.Endpoint+"/readyz"); code != http.StatusOK {
		t.Fatalf("/readyz before the outage: %d", code)
	}

	kmsd.Kill()
	if out := a.run("s3", "cp", "s3://a-data/obj", "-"); out != "cached" {
		t.Fatalf("cached read during the outage: %q", out)
	}
	msg := a.fails("ServiceUnavailable", "s3api", "put-object", "--bucket", "a-data", "--key", "new", "--body", body)
	if !strings.Contains(msg, "aws-kms") || !strings.Contains(msg, keyA) {
		t.Errorf("the 503 does not name the KMS and the key %s: %s", keyA, msg)
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		code, text := httpGet(t, p.Endpoint+"/readyz")
		if code == http.StatusServiceUnavailable && strings.Contains(text, "kms") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("/readyz during the outage: %d %s", code, text)
		}
		time.Sleep(500 * time.Millisecond)
	}
	_, metrics := httpGet(t, p.Endpoint+"/metrics")
	if !strings.Contains(metrics, `s3seal_kms_requests_total{operation="generate",outcome="unavailable"}`) {
		t.Errorf("no failed generate counted:\n%s", grepLines(metrics, "s3seal_kms"))
	}
}

func grepLines(text, sub string) string {
	var out []string
	for _, l := range strings.Split(text, "\n") {
		if strings.Contains(l, sub) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

// TestKMSRewrapAndVerify: objects under one KMS key (a single PUT with an
// encryption context, a multipart object) are rewrapped inside the KMS
// (rewrap --latest: ReEncrypt), then moved to another KMS key (rewrap
// --to), reading no object data; verify reports the objects per master
// key; with the first key disabled, everything still reads through the
// second alone.
func TestKMSRewrapAndVerify(t *testing.T) {
	t.Parallel()
	kmsd := localkms.StartServer(t)
	k := kmsCLI(t, kmsd.Endpoint, localkms.Region)
	keyA, keyB := createKMSKey(t, k), createKMSKey(t, k)
	env := kmsEnv(kmsd.Endpoint, localkms.Region)
	opts := sealOpts{KMSKey: "aws-kms://" + keyA, Env: env}
	p := startS3seal(t, opts)
	a := newAWSCLIMultipart(t, p)
	dir := t.TempDir()
	small := writeFile(t, dir, "small", []byte("rotated"))
	bigBody := patternBytes(3, 11<<20)
	big := writeFile(t, dir, "big", bigBody)
	a.run("s3", "mb", "s3://rot")
	a.run("s3api", "put-object", "--bucket", "rot", "--key", "ctx", "--body", small, "--server-side-encryption", "aws:kms",
		"--ssekms-encryption-context", base64.StdEncoding.EncodeToString([]byte(`{"tenant":"a"}`)))
	a.run("s3", "cp", "--only-show-errors", big, "s3://rot/mp")
	p.Stop()

	tool := func(args ...string) (int, string) {
		return runS3sealExit(t, env, append([]string{args[0], "--data-dir", p.DataDir, "--bucket", "rot"}, args[1:]...)...)
	}
	underA := "under aws-kms:" + keyA + ": "
	if code, out := tool("verify", "--kms-key", "aws-kms://"+keyA); code != 0 || !strings.Contains(out, underA) {
		t.Fatalf("verify before: exit %d\n%s", code, out)
	}
	if code, out := tool("rewrap", "--kms-key", "aws-kms://"+keyA, "--latest"); code != 0 || !strings.Contains(out, "rewrapped rot/ctx") || !strings.Contains(out, "rewrapped rot/mp") {
		t.Fatalf("rewrap --latest: exit %d\n%s", code, out)
	}
	if code, out := tool("rewrap", "--kms-key", "aws-kms://"+keyA, "--to", "aws-kms:"+keyB); code != 0 || !strings.Contains(out, "rewrapped rot/mp") {
		t.Fatalf("rewrap --to: exit %d\n%s", code, out)
	}
	code, out := tool("verify", "--kms-key", "aws-kms://"+keyB)
	if code != 0 || strings.Contains(out, underA) || !strings.Contains(out, "under aws-kms:"+keyB+": ") {
		t.Fatalf("verify after: exit %d\n%s", code, out)
	}

	k.run("kms", "disable-key", "--key-id", keyA)
	opts.KMSKey, opts.DataDir, opts.Args = "aws-kms://"+keyB, p.DataDir, []string{"--kms-cache-ttl", "-1s"}
	p2 := startS3seal(t, opts)
	a2 := newAWSCLI(t, p2)
	if out := a2.run("s3", "cp", "s3://rot/ctx", "-"); out != "rotated" {
		t.Fatalf("after the move to key b: %q", out)
	}
	got := filepath.Join(dir, "got")
	a2.run("s3", "cp", "--only-show-errors", "s3://rot/mp", got)
	if err := sameFile(got, bigBody); err != nil {
		t.Fatal(err)
	}
	if h := headJSON(t, a2, "rot", "ctx"); h["SSEKMSKeyId"] != keyB {
		t.Fatalf("HEAD after the move: %v", h)
	}
}

// boto3KMSScript drives terminated SSE-KMS with boto3 (the client of
// Ceph's s3-tests) and prints "name ok" or "name FAIL detail" per check:
// an encryption context, a bucket's default encryption with a bucket key,
// a copy to another key, multipart answers, and the refusals AWS gives.
const boto3KMSScript = `
import sys, base64, json, boto3, botocore
from botocore.config import Config
endpoint, ak, sk, key_a, key_b = sys.argv[1:6]
c = boto3.client("s3", endpoint_url=endpoint, aws_access_key_id=ak, aws_secret_access_key=sk, region_name="us-east-1",
                 config=Config(s3={"addressing_style": "path"}, retries={"max_attempts": 1}))
def check(name, cond, detail=""):
    print(name, "ok" if cond else "FAIL " + str(detail))
def err(f):
    try:
        f()
        return "none"
    except botocore.exceptions.ClientError as e:
        return "%s %s" % (e.response["ResponseMetadata"]["HTTPStatusCode"], e.response["Error"].get("Code", ""))
c.create_bucket(Bucket="kms-b")
ctx = base64.b64encode(json.dumps({"project": "x"}).encode()).decode()
r = c.put_object(Bucket="kms-b", Key="ctx", Body=b"with context", ServerSideEncryption="aws:kms", SSEKMSKeyId=key_b, SSEKMSEncryptionContext=ctx)
check("put answer", r.get("ServerSideEncryption") == "aws:kms" and r.get("SSEKMSKeyId") == key_b, r)
h = c.head_object(Bucket="kms-b", Key="ctx")
check("head", h.get("ServerSideEncryption") == "aws:kms" and h.get("SSEKMSKeyId") == key_b, h)
check("get", c.get_object(Bucket="kms-b", Key="ctx")["Body"].read() == b"with context")
bad = base64.b64encode(json.dumps({"aws:s3:arn": "arn:aws:s3:::kms-b/elsewhere"}).encode()).decode()
check("arn of another object", err(lambda: c.put_object(Bucket="kms-b", Key="x", Body=b"x", ServerSideEncryption="aws:kms", SSEKMSEncryptionContext=bad)) == "400 InvalidArgument")
check("unknown key", err(lambda: c.put_object(Bucket="kms-b", Key="x", Body=b"x", ServerSideEncryption="aws:kms",
    SSEKMSKeyId="arn:aws:kms:us-east-1:123456789012:key/00000000-0000-0000-0000-000000000000")).startswith("400 KMS.NotFoundException"))
c.copy_object(Bucket="kms-b", Key="copied", CopySource="kms-b/ctx", ServerSideEncryption="aws:kms", SSEKMSKeyId=key_a)
check("copy takes the destination's key", c.head_object(Bucket="kms-b", Key="copied").get("SSEKMSKeyId") == key_a)
c.put_bucket_encryption(Bucket="kms-b", ServerSideEncryptionConfiguration={"Rules": [{"ApplyServerSideEncryptionByDefault":
    {"SSEAlgorithm": "aws:kms", "KMSMasterKeyID": key_b}, "BucketKeyEnabled": True}]})
r = c.put_object(Bucket="kms-b", Key="default", Body=b"bucket default")
h = c.head_object(Bucket="kms-b", Key="default")
check("bucket default", h.get("SSEKMSKeyId") == key_b and h.get("BucketKeyEnabled") is True, h)
up = c.create_multipart_upload(Bucket="kms-b", Key="mp", ServerSideEncryption="aws:kms", SSEKMSKeyId=key_a)
check("create answer", up.get("ServerSideEncryption") == "aws:kms" and up.get("SSEKMSKeyId") == key_a, up)
p1 = c.upload_part(Bucket="kms-b", Key="mp", UploadId=up["UploadId"], PartNumber=1, Body=b"1" * (5 << 20))
check("part answer", p1.get("ServerSideEncryption") == "aws:kms" and p1.get("SSEKMSKeyId") == key_a, p1)
p2 = c.upload_part(Bucket="kms-b", Key="mp", UploadId=up["UploadId"], PartNumber=2, Body=b"2" * 100)
r = c.complete_multipart_upload(Bucket="kms-b", Key="mp", UploadId=up["UploadId"],
    MultipartUpload={"Parts": [{"PartNumber": 1, "ETag": p1["ETag"]}, {"PartNumber": 2, "ETag": p2["ETag"]}]})
check("complete answer", r.get("ServerSideEncryption") == "aws:kms" and r.get("SSEKMSKeyId") == key_a, r)
g = c.get_object(Bucket="kms-b", Key="mp", Range="bytes=%d-%d" % ((5 << 20) - 2, (5 << 20) + 1))
check("multipart range", g["Body"].read() == b"1122" and g.get("SSEKMSKeyId") == key_a)
`

// TestKMSBoto3AndRcloneOnMoto: terminated SSE-KMS through boto3 and rclone
// (--s3-server-side-encryption aws:kms --s3-sse-kms-key-id), s3seal in
// front of moto with its keys in moto's KMS and no default KMS key.
func TestKMSBoto3AndRcloneOnMoto(t *testing.T) {
	t.Parallel()
	py := requireBoto3(t)
	requireRclone(t)
	m := startMoto(t)
	k := kmsCLI(t, m.Endpoint, "us-east-1")
	keyA, keyB := createKMSKey(t, k), createKMSKey(t, k)
	p := startS3seal(t, sealOpts{Backend: m, KMSKey: "aws-kms://", Env: kmsEnv(m.Endpoint, "us-east-1")})
	dir := t.TempDir()
	script := writeFile(t, dir, "kms.py", []byte(boto3KMSScript))
	out := runTool(t, isolatedPythonEnv(dir), py, script, p.Endpoint, p.AccessKey, p.SecretKey, keyA, keyB)
	checks := 0
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		checks++
		if !strings.HasSuffix(line, " ok") {
			t.Errorf("boto3: %s", line)
		}
	}
	if checks != 11 {
		t.Fatalf("boto3 ran %d checks, want 11:\n%s", checks, out)
	}

	env := rcloneEnv(t, p)
	src := writeFile(t, dir, "rc/file.bin", patternBytes(9, 300000))
	runTool(t, env, rcloneBin, "--retries", "1", "--s3-server-side-encryption", "aws:kms", "--s3-sse-kms-key-id", keyB,
		"copyto", src, "s3seal:kms-b/file.bin")
	runTool(t, env, rcloneBin, "--retries", "1", "check", filepath.Dir(src), "s3seal:kms-b", "--include", "file.bin", "--one-way")
	if h := headJSON(t, newAWSCLI(t, p), "kms-b", "file.bin"); h["SSEKMSKeyId"] != keyB || h["ServerSideEncryption"] != "aws:kms" {
		t.Fatalf("rclone's upload: %v, want key %s", h, keyB)
	}
}
