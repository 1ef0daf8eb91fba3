package e2e

import (
	"bytes"
	"crypto/x509"
	"encoding/json"
	"net/http"
	"reflect"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"

	"github.com/s3seal/s3seal/checksum"
)

// sdkComputesAlg: the algorithms the go.mod's aws-sdk-go-v2 computes
// itself; for the others (MD5, xxHash) the test passes the value.
var sdkComputesAlg = map[checksum.Algorithm]bool{checksum.CRC32: true, checksum.CRC32C: true,
	checksum.CRC64NVME: true, checksum.SHA1: true, checksum.SHA256: true, checksum.SHA512: true}

func algSum(a checksum.Algorithm, b []byte) string {
	h := checksum.NewHasher(a)
	h.Write(b)
	return h.Base64()
}

// checksumField reads or sets the SDK struct field Checksum<ALG> of v (a
// pointer to an SDK input or output struct).
func checksumField(v any, a checksum.Algorithm) reflect.Value {
	return reflect.ValueOf(v).Elem().FieldByName("Checksum" + string(a))
}

func fieldString(v any, a checksum.Algorithm) string {
	f := checksumField(v, a)
	if !f.IsValid() || f.IsNil() {
		return ""
	}
	return *f.Interface().(*string)
}

// TestChecksumAlgorithmsSDK round-trips every checksum algorithm with
// aws-sdk-go-v2 on its default checksum settings, over HTTPS (the SDK
// sends the checksums it computes as aws-chunked trailers) and plain HTTP
// (as headers), on the embedded store and in front of moto: PutObject
// answers the value and FULL_OBJECT, HEAD and GET with checksum mode give
// it back, the body is intact. Then
// GetObjectAttributes on a single and an XXHASH128 multipart object (its
// part records, once kept in bodies, are now in keys).
func TestChecksumAlgorithmsSDK(t *testing.T) {
	t.Parallel()
	tt := newTestTLS(t)
	for _, name := range []string{"https", "http", "http-moto"} {
		tls := name == "https"
		t.Run(name, func(t *testing.T) {
			var p *sealProc
			var roots *x509.CertPool
			switch name {
			case "https":
				p, roots = startTLSS3seal(t, tt, sealOpts{}), tt.Pool
			case "http":
				p = startS3seal(t, sealOpts{})
			default:
				p = startS3seal(t, sealOpts{Backend: startMoto(t)})
			}
			c, rec := newDefaultSDKClient(t, p.Endpoint, p.AccessKey, p.SecretKey, roots, false)
			ctx := ctxT(t)
			bucket := "algs-" + name
			mustCreateBucket(t, c, bucket)
			body := patternBytes(10, 100003)
			for _, a := range checksum.Algorithms {
				key := "obj-" + strings.ToLower(string(a))
				want := algSum(a, body)
				in := &s3.PutObjectInput{Bucket: aws.String(bucket), Key: aws.String(key), Body: bytes.NewReader(body)}
				if sdkComputesAlg[a] {
					in.ChecksumAlgorithm = types.ChecksumAlgorithm(a)
				} else {
					checksumField(in, a).Set(reflect.ValueOf(aws.String(want)))
				}
				out, err := c.PutObject(ctx, in)
				if err != nil {
					t.Fatalf("%s: PutObject: %v", a, err)
				}
				if fieldString(out, a) != want || out.ChecksumType != types.ChecksumTypeFullObject {
					t.Errorf("%s: PutObject answered %q %q, want %q FULL_OBJECT", a, fieldString(out, a), out.ChecksumType, want)
				}
				sent, _ := rec.last(http.MethodPut, "/"+bucket+"/"+key)
				if tls && sdkComputesAlg[a] {
					if !strings.EqualFold(sent.Header.Get("X-Amz-Trailer"), a.HeaderName()) {
						t.Errorf("%s over HTTPS: x-amz-trailer %q (not the trailer path)", a, sent.Header.Get("X-Amz-Trailer"))
					}
				} else if sent.Header.Get(a.HeaderName()) != want {
					t.Errorf("%s: sent %s %q", a, a.HeaderName(), sent.Header.Get(a.HeaderName()))
				}
				head, err := c.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String(bucket), Key: aws.String(key), ChecksumMode: types.ChecksumModeEnabled})
				if err != nil || fieldString(head, a) != want || head.ChecksumType != types.ChecksumTypeFullObject {
					t.Errorf("%s: HEAD %q %q, %v", a, fieldString(head, a), head.ChecksumType, err)
				}
				get, err := c.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(bucket), Key: aws.String(key), ChecksumMode: types.ChecksumModeEnabled})
				if err != nil {
					t.Fatalf("%s: GET: %v", a, err)
				}
				var got bytes.Buffer
				_, err = got.ReadFrom(get.Body)
				get.Body.Close()
				if err != nil || !bytes.Equal(got.Bytes(), body) || fieldString(get, a) != want {
					t.Errorf("%s: GET %d bytes (%v), checksum %q", a, got.Len(), err, fieldString(get, a))
				}
			}
			testAttributesSDK(t, c, bucket)
		})
	}
}

// testAttributesSDK: GetObjectAttributes of a single-part object and of a
// two-part XXHASH128 (COMPOSITE) object.
func testAttributesSDK(t *testing.T, c *s3.Client, bucket string) {
	ctx := ctxT(t)
	all := []types.ObjectAttributes{types.ObjectAttributesEtag, types.ObjectAttributesChecksum,
		types.ObjectAttributesObjectParts, types.ObjectAttributesStorageClass, types.ObjectAttributesObjectSize}
	body := patternBytes(10, 100003)
	a, err := c.GetObjectAttributes(ctx, &s3.GetObjectAttributesInput{Bucket: aws.String(bucket), Key: aws.String("obj-sha512"), ObjectAttributes: all})
	if err != nil {
		t.Fatal(err)
	}
	if aws.ToInt64(a.ObjectSize) != int64(len(body)) || aws.ToString(a.ETag) != md5Hex(body) || a.ObjectParts != nil ||
		a.Checksum == nil || aws.ToString(a.Checksum.ChecksumSHA512) != algSum(checksum.SHA512, body) || a.StorageClass != types.StorageClassStandard {
		t.Errorf("attributes of a single object: %+v checksum %+v", a, a.Checksum)
	}
	key := aws.String("mp-xxhash128")
	cr, err := c.CreateMultipartUpload(ctx, &s3.CreateMultipartUploadInput{Bucket: aws.String(bucket), Key: key, ChecksumAlgorithm: types.ChecksumAlgorithmXxhash128})
	if err != nil {
		t.Fatal(err)
	}
	parts := [][]byte{patternBytes(11, 5<<20), patternBytes(12, 777)}
	var done []types.CompletedPart
	var raw []byte
	for i, p := range parts {
		sum := algSum(checksum.XXHASH128, p)
		out, err := c.UploadPart(ctx, &s3.UploadPartInput{Bucket: aws.String(bucket), Key: key, UploadId: cr.UploadId,
			PartNumber: aws.Int32(int32(i + 1)), Body: bytes.NewReader(p), ChecksumXXHASH128: aws.String(sum)})
		if err != nil {
			t.Fatal(err)
		}
		done = append(done, types.CompletedPart{PartNumber: aws.Int32(int32(i + 1)), ETag: out.ETag, ChecksumXXHASH128: aws.String(sum)})
		h := checksum.NewHasher(checksum.XXHASH128)
		h.Write(p)
		raw = append(raw, h.Sum()...)
	}
	comp, err := c.CompleteMultipartUpload(ctx, &s3.CompleteMultipartUploadInput{Bucket: aws.String(bucket), Key: key, UploadId: cr.UploadId,
		MultipartUpload: &types.CompletedMultipartUpload{Parts: done}})
	if err != nil {
		t.Fatal(err)
	}
	composite := algSum(checksum.XXHASH128, raw)
	if aws.ToString(comp.ChecksumXXHASH128) != composite+"-2" || comp.ChecksumType != types.ChecksumTypeComposite {
		t.Errorf("complete: %q %q, want %q COMPOSITE", aws.ToString(comp.ChecksumXXHASH128), comp.ChecksumType, composite+"-2")
	}
	a, err = c.GetObjectAttributes(ctx, &s3.GetObjectAttributesInput{Bucket: aws.String(bucket), Key: key, ObjectAttributes: all})
	if err != nil {
		t.Fatal(err)
	}
	op := a.ObjectParts
	if aws.ToInt64(a.ObjectSize) != 5<<20+777 || a.Checksum == nil || aws.ToString(a.Checksum.ChecksumXXHASH128) != composite ||
		a.Checksum.ChecksumType != types.ChecksumTypeComposite || op == nil || aws.ToInt32(op.TotalPartsCount) != 2 || len(op.Parts) != 2 {
		t.Fatalf("attributes of a multipart object: %+v checksum %+v parts %+v", a, a.Checksum, op)
	}
	for i, p := range op.Parts {
		if aws.ToInt64(p.Size) != int64(len(parts[i])) || aws.ToString(p.ChecksumXXHASH128) != algSum(checksum.XXHASH128, parts[i]) {
			t.Errorf("part %d: size %d checksum %q", i+1, aws.ToInt64(p.Size), aws.ToString(p.ChecksumXXHASH128))
		}
	}
}

const boto3AlgsScript = `
import json, sys
import boto3
from botocore.config import Config

endpoint, ak, sk, ca, bucket, sums = sys.argv[1:7]
sums = json.loads(sums)
sent = []
def record(request, **kwargs):
    sent.append({k.lower(): (v.decode() if isinstance(v, bytes) else v) for k, v in request.headers.items()})
c = boto3.client("s3", endpoint_url=endpoint, aws_access_key_id=ak, aws_secret_access_key=sk,
                 region_name="us-east-1", verify=(ca or None),
                 config=Config(signature_version="s3v4", s3={"addressing_style": "path"},
                               retries={"max_attempts": 1, "mode": "standard"}))
c.meta.events.register("before-send.s3.PutObject", record)
c.create_bucket(Bucket=bucket)
body = bytes((i * 7) % 251 for i in range(100003))
native = {"CRC32", "SHA1", "SHA256", "SHA512"}  # botocore computes these without the CRT
out = {"puts": []}
for alg, want in sums["single"].items():
    key = "boto-" + alg.lower()
    args = {"ChecksumAlgorithm": alg} if alg in native else {"Checksum" + alg: want}
    put = c.put_object(Bucket=bucket, Key=key, Body=body, **args)
    head = c.head_object(Bucket=bucket, Key=key, ChecksumMode="ENABLED")
    get = c.get_object(Bucket=bucket, Key=key)
    out["puts"].append({"alg": alg, "want": want, "put": put.get("Checksum" + alg, ""), "put_type": put.get("ChecksumType", ""),
                        "head": head.get("Checksum" + alg, ""), "head_type": head.get("ChecksumType", ""),
                        "same": get["Body"].read() == body, "trailer": sent[-1].get("x-amz-trailer", ""),
                        "header": sent[-1].get("x-amz-checksum-" + alg.lower(), "")})
try:
    c.put_object(Bucket=bucket, Key="boto-bad", Body=body, ChecksumXXHASH128=sums["bad128"])
    out["bad"] = "accepted"
except c.exceptions.ClientError as e:
    out["bad"] = e.response["Error"]["Code"] + ": " + e.response["Error"]["Message"]
up = c.create_multipart_upload(Bucket=bucket, Key="boto-mp", ChecksumAlgorithm="SHA512")
parts = [bytes((i * 3) % 251 for i in range(5 << 20)), b"tail"]
done = []
for i, p in enumerate(parts, 1):
    r = c.upload_part(Bucket=bucket, Key="boto-mp", UploadId=up["UploadId"], PartNumber=i, Body=p, ChecksumAlgorithm="SHA512")
    done.append({"PartNumber": i, "ETag": r["ETag"], "ChecksumSHA512": r["ChecksumSHA512"]})
comp = c.complete_multipart_upload(Bucket=bucket, Key="boto-mp", UploadId=up["UploadId"], MultipartUpload={"Parts": done})
attrs = c.get_object_attributes(Bucket=bucket, Key="boto-mp", ObjectAttributes=["ETag", "Checksum", "ObjectParts", "ObjectSize", "StorageClass"])
single = c.get_object_attributes(Bucket=bucket, Key="boto-md5", ObjectAttributes=["ETag", "Checksum", "ObjectSize"])
out["mp"] = {"complete": comp.get("ChecksumSHA512", ""), "complete_type": comp.get("ChecksumType", ""),
             "size": attrs["ObjectSize"], "checksum": attrs["Checksum"], "parts": attrs["ObjectParts"],
             "etag": attrs["ETag"], "class": attrs["StorageClass"]}
out["single"] = {"size": single["ObjectSize"], "checksum": single["Checksum"], "etag": single["ETag"]}
print(json.dumps(out))
`

// TestChecksumAlgorithmsBoto3 round-trips every algorithm with boto3 over
// HTTPS and plain HTTP: botocore computes CRC32, SHA1, SHA256 and SHA512
// itself (in a trailer over HTTPS), the others (it needs the CRT for them)
// are given as values; a wrong value is BadDigest; an SHA512 multipart
// upload completes COMPOSITE and GetObjectAttributes gives its parts.
func TestChecksumAlgorithmsBoto3(t *testing.T) {
	t.Parallel()
	py := requireBoto3(t)
	tt := newTestTLS(t)
	body := make([]byte, 100003)
	for i := range body {
		body[i] = byte(i * 7 % 251)
	}
	sums := map[string]string{}
	for _, a := range checksum.Algorithms {
		sums[string(a)] = algSum(a, body)
	}
	parts := [][]byte{make([]byte, 5<<20), []byte("tail")}
	for i := range parts[0] {
		parts[0][i] = byte(i * 3 % 251)
	}
	var raw []byte
	for _, p := range parts {
		h := checksum.NewHasher(checksum.SHA512)
		h.Write(p)
		raw = append(raw, h.Sum()...)
	}
	arg, _ := json.Marshal(map[string]any{"single": sums, "bad128": algSum(checksum.XXHASH128, []byte("other"))})
	for _, tls := range []bool{true, false} {
		name := map[bool]string{true: "https", false: "http"}[tls]
		t.Run(name, func(t *testing.T) {
			var p *sealProc
			ca := ""
			if tls {
				p, ca = startTLSS3seal(t, tt, sealOpts{}), tt.CAFile
			} else {
				p = startS3seal(t, sealOpts{})
			}
			dir := t.TempDir()
			script := writeFile(t, dir, "boto3_algs.py", []byte(boto3AlgsScript))
			env := isolatedPythonEnv(dir, "AWS_EC2_METADATA_DISABLED=true")
			out := runTool(t, env, py, script, p.Endpoint, p.AccessKey, p.SecretKey, ca, "boto-algs-"+name, string(arg))
			var res struct {
				Puts []struct {
					Alg, Want, Put, Head, Trailer, Header string
					PutType                               string `json:"put_type"`
					HeadType                              string `json:"head_type"`
					Same                                  bool
				}
				Bad string
				MP  struct {
					Complete     string
					CompleteType string `json:"complete_type"`
					Size         int64
					Checksum     map[string]string
					Parts        struct {
						TotalPartsCount int
						Parts           []map[string]any
					}
					ETag  string
					Class string
				}
				Single struct {
					Size     int64
					Checksum map[string]string
					ETag     string
				}
			}
			if err := json.Unmarshal([]byte(out), &res); err != nil || len(res.Puts) != len(checksum.Algorithms) {
				t.Fatalf("boto3 output %q: %v", out, err)
			}
			for _, r := range res.Puts {
				if !r.Same || r.Put != r.Want || r.Head != r.Want || r.PutType != "FULL_OBJECT" || r.HeadType != "FULL_OBJECT" {
					t.Errorf("boto3 %s over %s: %+v", r.Alg, name, r)
				}
				native := r.Alg == "CRC32" || r.Alg == "SHA1" || r.Alg == "SHA256" || r.Alg == "SHA512"
				if tls && native && !strings.EqualFold(r.Trailer, "x-amz-checksum-"+strings.ToLower(r.Alg)) {
					t.Errorf("boto3 %s over HTTPS: trailer %q (not the trailer path)", r.Alg, r.Trailer)
				}
				if !native && r.Header != r.Want {
					t.Errorf("boto3 %s: header %q", r.Alg, r.Header)
				}
			}
			if !strings.HasPrefix(res.Bad, "BadDigest: The XXHASH128 you specified did not match the calculated checksum.") {
				t.Errorf("wrong XXHASH128: %q", res.Bad)
			}
			composite := algSum(checksum.SHA512, raw)
			mp := res.MP
			if mp.Complete != composite+"-2" || mp.CompleteType != "COMPOSITE" || mp.Size != 5<<20+4 ||
				mp.Checksum["ChecksumSHA512"] != composite || mp.Checksum["ChecksumType"] != "COMPOSITE" ||
				mp.Parts.TotalPartsCount != 2 || len(mp.Parts.Parts) != 2 || mp.Class != "STANDARD" {
				t.Errorf("boto3 multipart: %+v", mp)
			}
			for i, part := range mp.Parts.Parts {
				if part["ChecksumSHA512"] != algSum(checksum.SHA512, parts[i]) || part["Size"] != float64(len(parts[i])) {
					t.Errorf("boto3 part %d: %v", i+1, part)
				}
			}
			if res.Single.Size != int64(len(body)) || res.Single.ETag != md5Hex(body) || res.Single.Checksum["ChecksumMD5"] != sums["MD5"] {
				t.Errorf("boto3 single attributes: %+v", res.Single)
			}
		})
	}
}
