package e2e

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"mime/multipart"
	"net"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
)

// boto3PostScript prints three browser-upload forms made by boto3's
// generate_presigned_post (SigV4): one valid for 10 minutes and one
// expired a minute ago, for keys up/${filename}, and one with a tagging
// field for the key "tagged".
const boto3PostScript = `
import json, sys
import boto3
from botocore.config import Config

endpoint, ak, sk, bucket = sys.argv[1:5]
c = boto3.client("s3", endpoint_url=endpoint, aws_access_key_id=ak, aws_secret_access_key=sk,
                 region_name="us-east-1", config=Config(signature_version="s3v4", s3={"addressing_style": "path"}))
conds = [{"success_action_status": "201"}, ["starts-with", "$Content-Type", "text/"],
         ["content-length-range", 1, 65536]]
out = {}
for name, exp in (("ok", 600), ("expired", -60)):
    out[name] = c.generate_presigned_post(bucket, "up/${filename}", ExpiresIn=exp, Conditions=list(conds),
                                          Fields={"success_action_status": "201", "Content-Type": "text/plain"})
tagging = "<Tagging><TagSet><Tag><Key>env</Key><Value>test</Value></Tag></TagSet></Tagging>"
out["tagged"] = c.generate_presigned_post(bucket, "tagged", ExpiresIn=600, Conditions=[{"tagging": tagging}],
                                          Fields={"tagging": tagging})
print(json.dumps(out))
`

type postForm struct {
	URL    string            `json:"url"`
	Fields map[string]string `json:"fields"`
}

func boto3PostForms(t *testing.T, p *sealProc, bucket string) (ok, expired, tagged postForm) {
	t.Helper()
	py := requireBoto3(t)
	dir := t.TempDir()
	script := writeFile(t, dir, "post.py", []byte(boto3PostScript))
	env := isolatedPythonEnv(dir)
	out := runTool(t, env, py, script, p.Endpoint, p.AccessKey, p.SecretKey, bucket)
	var forms map[string]postForm
	if err := json.Unmarshal([]byte(out), &forms); err != nil {
		t.Fatalf("boto3 output %q: %v", out, err)
	}
	if forms["ok"].Fields["x-amz-signature"] == "" {
		t.Fatalf("boto3 made no SigV4 POST form: %s", out)
	}
	return forms["ok"], forms["expired"], forms["tagged"]
}

// curlPost uploads data as filename with curl -F, the fields first (in a
// fixed order), the file last.
func curlPost(t *testing.T, f postForm, filename string, data []byte) rawResp {
	t.Helper()
	path := writeFile(t, t.TempDir(), "upload.bin", data)
	var args []string
	for _, k := range slices.Sorted(func(yield func(string) bool) {
		for k := range f.Fields {
			if !yield(k) {
				return
			}
		}
	}) {
		args = append(args, "--form-string", k+"="+f.Fields[k])
	}
	args = append(args, "-F", "file=@"+path+";filename="+filename, f.URL)
	return curlResp(t, args...)
}

func (f postForm) with(k, v string) postForm {
	g := postForm{URL: f.URL, Fields: map[string]string{}}
	for a, b := range f.Fields {
		g.Fields[a] = b
	}
	g.Fields[k] = v
	return g
}

// TestPostObjectBoto3 uploads through forms made by boto3's
// generate_presigned_post, with curl, into s3seal on the embedded store and
// in front of moto: the object decrypts to the uploaded bytes (and moto
// holds ciphertext), a tagging field sets the object's tags, and an
// expired policy, a key outside the policy's
// prefix, a file above content-length-range, a field the policy does not
// cover, a tampered policy and a form cut mid-file each store nothing.
func TestPostObjectBoto3(t *testing.T) {
	t.Parallel()
	requireTool(t, "curl")
	for _, backend := range []string{"embedded", "moto"} {
		t.Run(backend, func(t *testing.T) {
			var m *motoServer
			if backend == "moto" {
				m = startMoto(t)
			}
			p, c := startWithBucket(t, sealOpts{Backend: m}, mustCreateBucket, "forms")
			ok, expired, tagged := boto3PostForms(t, p, "forms")
			data := patternBytes(7, 50000)

			r := curlPost(t, ok, "hello.txt", data)
			if r.Status != 201 || !bytes.Contains(r.Body, []byte("<Key>up/hello.txt</Key>")) || etagOf(r.Header) != md5Hex(data) {
				t.Fatalf("upload: HTTP %d %s", r.Status, r.Body)
			}
			if got := getObj(t, c, "forms", "up/hello.txt"); !bytes.Equal(got, data) {
				t.Fatalf("GET after POST: %d bytes differ", len(got))
			}
			if m != nil {
				raw := getObj(t, motoClient(t, m), "forms", "up/hello.txt")
				if len(raw) <= len(data) || bytes.Contains(raw, data[:64]) {
					t.Fatalf("moto holds %d bytes, want ciphertext", len(raw))
				}
			}

			// The tagging field's document becomes the object's tags.
			if r := curlPost(t, tagged, "t.txt", []byte("tagged")); r.Status != 204 {
				t.Fatalf("tagged upload: HTTP %d %s", r.Status, r.Body)
			}
			tags, err := c.GetObjectTagging(ctxT(t), &s3.GetObjectTaggingInput{Bucket: aws.String("forms"), Key: aws.String("tagged")})
			if err != nil || len(tags.TagSet) != 1 || aws.ToString(tags.TagSet[0].Key) != "env" || aws.ToString(tags.TagSet[0].Value) != "test" {
				t.Fatalf("tags of the POSTed object: %v %v", tags, err)
			}
			if _, err := c.DeleteObject(ctxT(t), &s3.DeleteObjectInput{Bucket: aws.String("forms"), Key: aws.String("tagged")}); err != nil {
				t.Fatal(err)
			}

			tampered := ok.with("policy", retamper(t, ok.Fields["policy"]))
			for _, tc := range []struct {
				name   string
				form   postForm
				data   []byte
				status int
				code   string
				msg    string
			}{
				{"expired", expired, data, 403, "AccessDenied", "Invalid according to Policy: Policy expired."},
				{"key prefix", ok.with("key", "down/${filename}"), data, 403, "AccessDenied", `Policy Condition failed: ["starts-with", "$key", "up/"]`},
				{"too large", ok, patternBytes(8, 65537), 400, "EntityTooLarge", "Your proposed upload exceeds the maximum allowed object size."},
				{"extra field", ok.with("x-amz-meta-extra", "1"), data, 403, "AccessDenied", "Invalid according to Policy: Extra input fields: x-amz-meta-extra"},
				{"tampered policy", tampered, data, 403, "SignatureDoesNotMatch", ""},
			} {
				r := curlPost(t, tc.form, "bad.txt", tc.data)
				code, msg := r.s3Error()
				if r.Status != tc.status || code != tc.code || !strings.Contains(msg, tc.msg) {
					t.Errorf("%s: HTTP %d %s %q, want %d %s %q", tc.name, r.Status, code, msg, tc.status, tc.code, tc.msg)
				}
				if tc.code == "EntityTooLarge" && !bytes.Contains(r.Body, []byte("<ProposedSize>65537</ProposedSize><MaxSizeAllowed>65536</MaxSizeAllowed>")) {
					t.Errorf("%s: S3 names the sizes: %s", tc.name, r.Body)
				}
			}
			if answer := postCutMidFile(t, p.Addr, ok, data); !strings.HasPrefix(answer, "HTTP/1.1 400 ") {
				t.Errorf("form cut mid-file: answer %q", answer)
			}
			out, err := c.ListObjectsV2(ctxT(t), &s3.ListObjectsV2Input{Bucket: aws.String("forms")})
			if err != nil {
				t.Fatal(err)
			}
			if len(out.Contents) != 1 || aws.ToString(out.Contents[0].Key) != "up/hello.txt" {
				for _, o := range out.Contents {
					t.Errorf("stored: %s", aws.ToString(o.Key))
				}
			}
		})
	}
}

// retamper widens the policy's key prefix, keeping the signature of the
// original.
func retamper(t *testing.T, b64 string) string {
	t.Helper()
	doc, err := base64.StdEncoding.DecodeString(b64)
	if err != nil || !bytes.Contains(doc, []byte(`"up/"`)) {
		t.Fatalf("boto3 policy %s: %v", doc, err)
	}
	return base64.StdEncoding.EncodeToString(bytes.Replace(doc, []byte(`"up/"`), []byte(`""`), 1))
}

// postCutMidFile sends the form with its Content-Length, but only half of
// its file before closing the connection for writing, and returns the
// answer.
func postCutMidFile(t *testing.T, addr string, f postForm, data []byte) string {
	t.Helper()
	var b bytes.Buffer
	mw := multipart.NewWriter(&b)
	for k, v := range f.Fields {
		_ = mw.WriteField(k, v)
	}
	w, _ := mw.CreateFormFile("file", "cut.txt")
	_, _ = w.Write(data)
	_ = mw.Close()
	body := b.Bytes()
	cut := body[:bytes.Index(body, data)+len(data)/2]
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(30 * time.Second))
	fmt.Fprintf(conn, "POST /forms HTTP/1.1\r\nHost: %s\r\nContent-Type: %s\r\nContent-Length: %d\r\n\r\n", addr, mw.FormDataContentType(), len(body))
	_, _ = conn.Write(cut)
	_ = conn.(*net.TCPConn).CloseWrite()
	answer, _ := io.ReadAll(conn)
	return string(answer)
}
