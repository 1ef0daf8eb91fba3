package e2e

import (
	"encoding/json"
	"testing"

	"github.com/s3seal/s3seal/checksum"
)

const boto3DefaultSumScript = `
import json, sys
import boto3
from botocore.config import Config

endpoint, ak, sk, bucket = sys.argv[1:5]
c = boto3.client("s3", endpoint_url=endpoint, aws_access_key_id=ak, aws_secret_access_key=sk,
                 region_name="us-east-1", config=Config(signature_version="s3v4", s3={"addressing_style": "path"},
                 retries={"max_attempts": 1, "mode": "standard"}))
c.create_bucket(Bucket=bucket)
up = c.create_multipart_upload(Bucket=bucket, Key="mp")
parts = [bytes((i * 5) % 253 for i in range(5 << 20)), b"the last part"]
done, answered = [], []
for i, p in enumerate(parts, 1):
    r = c.upload_part(Bucket=bucket, Key="mp", UploadId=up["UploadId"], PartNumber=i, Body=p)  # botocore's default CRC32
    answered.append(r.get("ChecksumCRC32", ""))
    done.append({"PartNumber": i, "ETag": r["ETag"]})
listed = c.list_parts(Bucket=bucket, Key="mp", UploadId=up["UploadId"])["Parts"]
comp = c.complete_multipart_upload(Bucket=bucket, Key="mp", UploadId=up["UploadId"], MultipartUpload={"Parts": done},
                                   ChecksumCRC64NVME="vqf3hRLTlJw=")
head = c.head_object(Bucket=bucket, Key="mp", ChecksumMode="ENABLED")
keys = lambda d: sorted(k for k in d if k.startswith("Checksum") and k != "ChecksumType")
print(json.dumps({"answered": answered, "listed": [p.get("ChecksumCRC32", "") for p in listed],
                  "listed_keys": [keys(p) for p in listed],
                  "complete": comp.get("ChecksumCRC64NVME", ""), "complete_type": comp.get("ChecksumType", ""), "complete_keys": keys(comp),
                  "head": head.get("ChecksumCRC64NVME", ""), "head_type": head.get("ChecksumType", ""), "head_keys": keys(head)}))
`

// TestMultipartDefaultChecksumBoto3: boto3 on its defaults sends a CRC32
// with each part of an upload created without an algorithm; the completion
// (whose stated CRC64NVME is ignored) and HEAD give the object's FULL_OBJECT
// CRC64NVME alone, UploadPart and ListParts the parts' CRC32s alone.
func TestMultipartDefaultChecksumBoto3(t *testing.T) {
	t.Parallel()
	py := requireBoto3(t)
	p := startS3seal(t, sealOpts{})
	parts := [][]byte{make([]byte, 5<<20), []byte("the last part")}
	for i := range parts[0] {
		parts[0][i] = byte(i * 5 % 253)
	}
	want := algSum(checksum.CRC64NVME, append(append([]byte{}, parts[0]...), parts[1]...))
	dir := t.TempDir()
	script := writeFile(t, dir, "boto3_defsum.py", []byte(boto3DefaultSumScript))
	env := isolatedPythonEnv(dir, "AWS_EC2_METADATA_DISABLED=true")
	out := runTool(t, env, py, script, p.Endpoint, p.AccessKey, p.SecretKey, "boto-defsum")
	var res struct {
		Answered, Listed []string
		ListedKeys       [][]string `json:"listed_keys"`
		Complete, Head   string
		CompleteType     string   `json:"complete_type"`
		HeadType         string   `json:"head_type"`
		CompleteKeys     []string `json:"complete_keys"`
		HeadKeys         []string `json:"head_keys"`
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("boto3 output %q: %v", out, err)
	}
	for i, p := range parts {
		crc := algSum(checksum.CRC32, p)
		if res.Answered[i] != crc || res.Listed[i] != crc || len(res.ListedKeys[i]) != 1 {
			t.Errorf("part %d: UploadPart CRC32 %q, ListParts CRC32 %q with %v, want %q alone", i+1, res.Answered[i], res.Listed[i], res.ListedKeys[i], crc)
		}
	}
	if res.Complete != want || res.CompleteType != "FULL_OBJECT" || len(res.CompleteKeys) != 1 {
		t.Errorf("completion: CRC64NVME %q %q %v, want FULL_OBJECT %q alone", res.Complete, res.CompleteType, res.CompleteKeys, want)
	}
	if res.Head != want || res.HeadType != "FULL_OBJECT" || len(res.HeadKeys) != 1 {
		t.Errorf("HEAD: CRC64NVME %q %q %v, want FULL_OBJECT %q alone", res.Head, res.HeadType, res.HeadKeys, want)
	}
}
