package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
)

// TestLFSBucketIsLFSs: the LFS bucket belongs to LFS. Two accounts whose
// lists reach every bucket ("*"), one of them an admin, can neither list
// it, read a blob, overwrite or delete it, change its ACL, nor put a
// policy that refuses LFS's presign credential; a credential whose lists
// name the bucket (the operator's grant) lists it but cannot put a
// policy either; the presigned download LFS hands out still returns the
// blob as produced.
func TestLFSBucketIsLFSs(t *testing.T) {
	dir := t.TempDir()
	creds := writeJSON(t, dir, "creds.json", map[string]any{"credentials": []map[string]any{
		{"access_key": "alice", "secret_key": "alice-secret", "read": []string{"*"}, "write": []string{"*"}, "admin": true,
			"account": "111111111111"},
		{"access_key": "bob", "secret_key": "bob-secret", "read": []string{"*"}, "write": []string{"*"}, "account": "222222222222"},
		{"access_key": "keeper", "secret_key": "keeper-secret", "read": []string{"lfs"}, "write": []string{"lfs"}, "admin": true},
	}})
	p, base := startLFS(t, sealOpts{CredentialsFile: creds, Args: []string{"--lfs-dev-kafka", fmt.Sprintf("127.0.0.1:%d", freePort(t))}})
	blob := bytes.Repeat([]byte("kafka blob "), 1000)
	code, body := lfsPost(t, base+"/lfs/produce", map[string]string{"X-Kafka-Topic": "orders"}, bytes.NewReader(blob))
	if code != 200 {
		t.Fatalf("produce: %d %s", code, body)
	}
	var env envelope
	if err := json.Unmarshal(body, &env); err != nil {
		t.Fatal(err)
	}
	ctx := ctxT(t)
	codeOf := func(err error) string { c, _ := apiCode(err); return c }
	b, k := aws.String(env.Bucket), aws.String(env.Key)
	deny := `{"Version":"2012-10-17","Statement":[{"Effect":"Deny","Principal":"*","Action":"s3:GetObject","Resource":"arn:aws:s3:::` + env.Bucket + `/*"}]}`
	for _, name := range []string{"alice", "bob"} {
		c := newSDKClient(t, p.Endpoint, name, name+"-secret", true)
		for what, call := range map[string]func() error{
			"ListObjects": func() error { _, err := c.ListObjects(ctx, &s3.ListObjectsInput{Bucket: b}); return err },
			"GetObject":   func() error { _, err := c.GetObject(ctx, &s3.GetObjectInput{Bucket: b, Key: k}); return err },
			"PutObject": func() error {
				_, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: b, Key: k, Body: strings.NewReader("forged")})
				return err
			},
			"DeleteObject": func() error { _, err := c.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: b, Key: k}); return err },
			"PutBucketAcl": func() error {
				_, err := c.PutBucketAcl(ctx, &s3.PutBucketAclInput{Bucket: b, ACL: types.BucketCannedACLPublicReadWrite})
				return err
			},
			"PutBucketPolicy": func() error {
				_, err := c.PutBucketPolicy(ctx, &s3.PutBucketPolicyInput{Bucket: b, Policy: aws.String(deny)})
				return err
			},
		} {
			if err := call(); codeOf(err) != "AccessDenied" {
				t.Errorf("%s's %s on the LFS bucket: %v, want AccessDenied", name, what, err)
			}
		}
	}
	// The operator's grant: a credential whose lists name the bucket lists
	// and reads it, but cannot put a policy that would block LFS.
	keeper := newSDKClient(t, p.Endpoint, "keeper", "keeper-secret", true)
	if out, err := keeper.ListObjectsV2(ctx, &s3.ListObjectsV2Input{Bucket: b}); err != nil || len(out.Contents) != 1 {
		t.Errorf("the named credential's listing of the LFS bucket: %v, %v; want the one blob", out, err)
	}
	if _, err := keeper.PutBucketPolicy(ctx, &s3.PutBucketPolicyInput{Bucket: b, Policy: aws.String(deny)}); codeOf(err) != "AccessDenied" {
		t.Errorf("the named credential's PutBucketPolicy on the LFS bucket: %v, want AccessDenied", err)
	}
	code, body = lfsPost(t, base+"/lfs/download", nil, strings.NewReader(fmt.Sprintf(`{"bucket":%q,"key":%q,"mode":"presign"}`, env.Bucket, env.Key)))
	if code != 200 {
		t.Fatalf("presign: %d %s", code, body)
	}
	var pre struct {
		URL string `json:"url"`
	}
	if err := json.Unmarshal(body, &pre); err != nil {
		t.Fatal(err)
	}
	resp, err := http.Get(pre.URL)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !bytes.Equal(got, blob) {
		t.Errorf("presigned download after the other accounts' attempts: %d, %d bytes (want the %d produced)", resp.StatusCode, len(got), len(blob))
	}
}
