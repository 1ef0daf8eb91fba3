package e2e

import (
	"bytes"
	"encoding/json"
	"maps"
	"reflect"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"

	"github.com/s3seal/s3seal/checksum"
)

// listedSum is a listed checksum algorithm and type ("" for none).
type listedSum struct{ Alg, Type string }

// TestListChecksumsSDK: ListObjects (V1 and V2) names each object's
// checksum algorithm and type, from the cache s3seal's writes fill and,
// after a restart, from the objects' metadata; ListMultipartUploads names
// each upload's, as given at CreateMultipartUpload. An upload created
// without a checksum lists none. In front of moto (5 MiB parts) and on the
// embedded store.
func TestListChecksumsSDK(t *testing.T) {
	t.Parallel()
	onEachStoreOpts(t, func(t *testing.T, o sealOpts) {
		o.DataDir = t.TempDir()
		o.Key = randomKey(t) // the same after the restart
		const b = "list-sums"
		p, c := startWithBucket(t, o, mustCreateBucket, b)
		ctx := ctxT(t)
		want := map[string]listedSum{}
		body := patternBytes(3, 1000)
		for _, a := range []checksum.Algorithm{checksum.CRC32, checksum.SHA256, checksum.XXHASH3, checksum.MD5} {
			k := "put-" + string(a)
			in := &s3.PutObjectInput{Bucket: aws.String(b), Key: aws.String(k), Body: bytes.NewReader(body)}
			if sdkComputesAlg[a] {
				in.ChecksumAlgorithm = types.ChecksumAlgorithm(a)
			} else {
				checksumField(in, a).Set(reflect.ValueOf(aws.String(algSum(a, body))))
			}
			if _, err := c.PutObject(ctx, in); err != nil {
				t.Fatalf("put %s: %v", k, err)
			}
			want[k] = listedSum{string(a), "FULL_OBJECT"}
		}
		parts := [][]byte{patternBytes(4, 5<<20), []byte("tail")}
		multipart := func(k string, alg types.ChecksumAlgorithm, typ types.ChecksumType, partAlg types.ChecksumAlgorithm) {
			t.Helper()
			cr, err := c.CreateMultipartUpload(ctx, &s3.CreateMultipartUploadInput{Bucket: aws.String(b), Key: aws.String(k),
				ChecksumAlgorithm: alg, ChecksumType: typ})
			if err != nil {
				t.Fatal(err)
			}
			var done []types.CompletedPart
			for i, d := range parts {
				n := aws.Int32(int32(i + 1))
				up, err := c.UploadPart(ctx, &s3.UploadPartInput{Bucket: aws.String(b), Key: aws.String(k), UploadId: cr.UploadId,
					PartNumber: n, Body: bytes.NewReader(d), ChecksumAlgorithm: partAlg})
				if err != nil {
					t.Fatalf("%s part %d: %v", k, i+1, err)
				}
				done = append(done, types.CompletedPart{PartNumber: n, ETag: up.ETag, ChecksumSHA1: up.ChecksumSHA1,
					ChecksumCRC32: up.ChecksumCRC32, ChecksumCRC32C: up.ChecksumCRC32C})
			}
			if _, err := c.CompleteMultipartUpload(ctx, &s3.CompleteMultipartUploadInput{Bucket: aws.String(b), Key: aws.String(k),
				UploadId: cr.UploadId, MultipartUpload: &types.CompletedMultipartUpload{Parts: done}}); err != nil {
				t.Fatalf("complete %s: %v", k, err)
			}
			want[k] = listedSum{string(alg), string(typ)}
		}
		multipart("mp-sha1", types.ChecksumAlgorithmSha1, types.ChecksumTypeComposite, types.ChecksumAlgorithmSha1)
		multipart("mp-crc32c", types.ChecksumAlgorithmCrc32c, types.ChecksumTypeFullObject, types.ChecksumAlgorithmCrc32c)
		// No algorithm at creation, parts with CRC32: the object has S3's
		// default, a FULL_OBJECT CRC64NVME.
		multipart("mp-none", "", "", types.ChecksumAlgorithmCrc32)
		want["mp-none"] = listedSum{"CRC64NVME", "FULL_OBJECT"}

		uploads := map[string]listedSum{
			"up-crc64nvme": {"CRC64NVME", "FULL_OBJECT"},
			"up-sha512":    {"SHA512", "COMPOSITE"},
			"up-xxhash128": {"XXHASH128", "COMPOSITE"},
			"up-none":      {},
		}
		ids := map[string]string{}
		for k, u := range uploads {
			cr, err := c.CreateMultipartUpload(ctx, &s3.CreateMultipartUploadInput{Bucket: aws.String(b), Key: aws.String(k),
				ChecksumAlgorithm: types.ChecksumAlgorithm(u.Alg), ChecksumType: types.ChecksumType(u.Type)})
			if err != nil {
				t.Fatal(err)
			}
			ids[k] = aws.ToString(cr.UploadId)
		}

		check := func(what string) {
			t.Helper()
			got := func(o types.Object) listedSum {
				s := listedSum{Type: string(o.ChecksumType)}
				if len(o.ChecksumAlgorithm) == 1 {
					s.Alg = string(o.ChecksumAlgorithm[0])
				} else if len(o.ChecksumAlgorithm) > 1 {
					s.Alg = "several"
				}
				return s
			}
			v1, err := c.ListObjects(ctx, &s3.ListObjectsInput{Bucket: aws.String(b)})
			if err != nil {
				t.Fatal(err)
			}
			v2, err := c.ListObjectsV2(ctx, &s3.ListObjectsV2Input{Bucket: aws.String(b)})
			if err != nil {
				t.Fatal(err)
			}
			for name, contents := range map[string][]types.Object{"V1": v1.Contents, "V2": v2.Contents} {
				if len(contents) != len(want) {
					t.Fatalf("%s %s: %d objects, want %d", what, name, len(contents), len(want))
				}
				for _, o := range contents {
					if g, w := got(o), want[aws.ToString(o.Key)]; g != w {
						t.Errorf("%s %s: %s lists %+v, want %+v", what, name, aws.ToString(o.Key), g, w)
					}
				}
			}
			lu, err := c.ListMultipartUploads(ctx, &s3.ListMultipartUploadsInput{Bucket: aws.String(b)})
			if err != nil {
				t.Fatal(err)
			}
			if len(lu.Uploads) != len(uploads) {
				t.Fatalf("%s: %d uploads, want %d", what, len(lu.Uploads), len(uploads))
			}
			for _, u := range lu.Uploads {
				k := aws.ToString(u.Key)
				if g, w := (listedSum{string(u.ChecksumAlgorithm), string(u.ChecksumType)}), uploads[k]; g != w || aws.ToString(u.UploadId) != ids[k] {
					t.Errorf("%s: upload %s lists %+v, want %+v", what, k, g, w)
				}
			}
		}
		check("cached")
		p.Stop()
		p = startS3seal(t, o)
		c = sdkFor(t, p)
		check("after a restart")
	})
}

const boto3ListSumsScript = `
import json, sys
import boto3
from botocore.config import Config

endpoint, ak, sk, bucket = sys.argv[1:5]
c = boto3.client("s3", endpoint_url=endpoint, aws_access_key_id=ak, aws_secret_access_key=sk,
                 region_name="us-east-1", config=Config(s3={"addressing_style": "path"}))
c.create_bucket(Bucket=bucket)
c.put_object(Bucket=bucket, Key="crc32", Body=b"data", ChecksumAlgorithm="CRC32")
c.put_object(Bucket=bucket, Key="sha256", Body=b"data", ChecksumAlgorithm="SHA256")
c.create_multipart_upload(Bucket=bucket, Key="up-crc32c", ChecksumAlgorithm="CRC32C", ChecksumType="FULL_OBJECT")
c.create_multipart_upload(Bucket=bucket, Key="up-sha1", ChecksumAlgorithm="SHA1")
c.create_multipart_upload(Bucket=bucket, Key="up-none")
def sums(entries):
    return {e["Key"]: [",".join(e.get("ChecksumAlgorithm", [])), e.get("ChecksumType", "")] for e in entries}
print(json.dumps({
    "v1": sums(c.list_objects(Bucket=bucket).get("Contents", [])),
    "v2": sums(c.list_objects_v2(Bucket=bucket).get("Contents", [])),
    "uploads": {u["Key"]: [u.get("ChecksumAlgorithm", ""), u.get("ChecksumType", "")]
                for u in c.list_multipart_uploads(Bucket=bucket).get("Uploads", [])},
}))
`

// TestListChecksumsBoto3: boto3 reads the checksum algorithm and type of
// listed objects (V1 and V2) and uploads, in front of moto and on the
// embedded store.
func TestListChecksumsBoto3(t *testing.T) {
	t.Parallel()
	py := requireBoto3(t)
	onEachStore(t, func(t *testing.T, p *sealProc) {
		dir := t.TempDir()
		script := writeFile(t, dir, "list_sums.py", []byte(boto3ListSumsScript))
		env := isolatedPythonEnv(dir, "AWS_EC2_METADATA_DISABLED=true")
		out := runTool(t, env, py, script, p.Endpoint, p.AccessKey, p.SecretKey, "boto3-list-sums")
		var got struct {
			V1, V2, Uploads map[string][2]string
		}
		if err := json.Unmarshal([]byte(out), &got); err != nil {
			t.Fatalf("boto3 output %q: %v", out, err)
		}
		objects := map[string][2]string{"crc32": {"CRC32", "FULL_OBJECT"}, "sha256": {"SHA256", "FULL_OBJECT"}}
		uploads := map[string][2]string{"up-crc32c": {"CRC32C", "FULL_OBJECT"}, "up-sha1": {"SHA1", "COMPOSITE"}, "up-none": {"", ""}}
		for name, m := range map[string]map[string][2]string{"V1": got.V1, "V2": got.V2} {
			if !maps.Equal(m, objects) {
				t.Errorf("boto3 %s: %v, want %v", name, m, objects)
			}
		}
		if !maps.Equal(got.Uploads, uploads) {
			t.Errorf("boto3 uploads: %v, want %v", got.Uploads, uploads)
		}
	})
}
