package s3api

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	"github.com/aws/aws-sdk-go-v2/service/s3"
)

// sendSigned sends body to url, signed with the test credential for the
// payload hash of signedFor (which may differ from body).
func sendSigned(t *testing.T, method, url string, body, signedFor []byte) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, url, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(signedFor)
	hash := hex.EncodeToString(sum[:])
	req.Header.Set("X-Amz-Content-Sha256", hash)
	if err := v4.NewSigner().SignHTTP(context.Background(), aws.Credentials{AccessKeyID: "ak", SecretAccessKey: "sk"},
		req, hash, "s3", "us-east-1", time.Now()); err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		// The server may close the connection on an oversized body
		// before reading it all; that is a refusal too.
		return 0, err.Error()
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func deleteBody(keys ...string) []byte {
	var b strings.Builder
	b.WriteString("<Delete>")
	for _, k := range keys {
		b.WriteString("<Object><Key>" + k + "</Key></Object>")
	}
	b.WriteString("</Delete>")
	return []byte(b.String())
}

// A DeleteObjects body is acted on only once it was read to a clean end:
// a body past the limit deletes nothing, whether its signature holds or
// fails only after the limit, and neither does trailing content.
func TestDeleteObjectsBodyReadToEnd(t *testing.T) {
	url, ctx, c := newBucketServer(t, SingleCredential("ak", "sk"))
	for _, k := range []string{"victim", "other"} {
		if err := put(ctx, c, "bkt", k); err != nil {
			t.Fatal(err)
		}
	}
	padded := append(deleteBody("victim"), bytes.Repeat([]byte(" "), maxXMLBody)...)
	cases := []struct {
		name            string
		body, signedFor []byte
		wantCode        string
	}{
		{"over the limit, validly signed", padded, padded, "MaxMessageLengthExceeded"},
		{"over the limit, signed for another list", padded, deleteBody("other"), ""},
		{"trailing element", append(deleteBody("victim"), deleteBody("other")...), nil, "MalformedXML"},
	}
	for _, tc := range cases {
		signed := tc.signedFor
		if signed == nil {
			signed = tc.body
		}
		status, body := sendSigned(t, http.MethodPost, url+"/bkt?delete", tc.body, signed)
		if status == http.StatusOK {
			t.Errorf("%s: answered 200: %s", tc.name, body)
		}
		if tc.wantCode != "" && !strings.Contains(body, "<Code>"+tc.wantCode+"</Code>") {
			t.Errorf("%s: %d %s, want %s", tc.name, status, body, tc.wantCode)
		}
		for _, k := range []string{"victim", "other"} {
			if err := get(ctx, c, "bkt", k); err != nil {
				t.Fatalf("%s: %s was deleted: %v", tc.name, k, err)
			}
		}
	}
	// The same body without padding, signed, works.
	if status, body := sendSigned(t, http.MethodPost, url+"/bkt?delete", deleteBody("victim"), deleteBody("victim")); status != 200 {
		t.Fatalf("plain delete: %d %s", status, body)
	}
}

// CreateBucket reads its body through the same helper: an oversized or
// unimplemented configuration creates nothing.
func TestCreateBucketBody(t *testing.T) {
	url := newTestServerWith(t, Config{Credentials: SingleCredential("ak", "sk"), Region: "eu-central-1"}).URL
	cfg := []byte(`<CreateBucketConfiguration><LocationConstraint>eu-central-1</LocationConstraint></CreateBucketConfiguration>`)
	padded := append(cfg, bytes.Repeat([]byte(" "), maxXMLBody)...)
	if status, body := sendSigned(t, http.MethodPut, url+"/big", padded, padded); status == 200 {
		t.Fatalf("oversized configuration accepted: %s", body)
	}
	tagged := []byte(`<CreateBucketConfiguration><Tags><Tag><Key>a</Key><Value>b</Value></Tag></Tags></CreateBucketConfiguration>`)
	if status, body := sendSigned(t, http.MethodPut, url+"/tagged", tagged, tagged); status != 501 {
		t.Fatalf("tags: %d %s, want 501", status, body)
	}
	if status, body := sendSigned(t, http.MethodPut, url+"/located", cfg, cfg); status != 200 {
		t.Fatalf("location constraint: %d %s", status, body)
	}
	c := sdkClient(url, "ak", "sk")
	out, err := c.ListBuckets(context.Background(), &s3.ListBucketsInput{})
	if err != nil || len(out.Buckets) != 1 || aws.ToString(out.Buckets[0].Name) != "located" {
		t.Fatalf("buckets %+v %v, want only located", out, err)
	}
}

// An aws-chunked body is for object uploads only; a bucket configuration
// sent as one is refused as S3 refuses it, before the store sees it.
func TestStreamingBodyOnlyForUploads(t *testing.T) {
	url := newTestServer(t, SingleCredential("ak", "sk"))
	if resp, body := doSigned(t, "PUT", url+"/bkt", nil, ""); resp.StatusCode != 200 {
		t.Fatalf("create bucket: %d %s", resp.StatusCode, body)
	}
	send := func(path string) (int, string) {
		req, _ := http.NewRequest("PUT", url+path, strings.NewReader("5\r\nabcde\r\n0\r\n\r\n"))
		req.Header.Set("X-Amz-Content-Sha256", "STREAMING-UNSIGNED-PAYLOAD-TRAILER")
		req.Header.Set("X-Amz-Decoded-Content-Length", "5")
		req.Header.Set("Content-Encoding", "aws-chunked")
		if err := v4.NewSigner().SignHTTP(context.Background(), aws.Credentials{AccessKeyID: "ak", SecretAccessKey: "sk"},
			req, "STREAMING-UNSIGNED-PAYLOAD-TRAILER", "s3", "us-east-1", time.Now()); err != nil {
			t.Fatal(err)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	for _, sub := range []string{"cors", "tagging", "object-lock", "ownershipControls", "versioning", "policy"} {
		status, body := send("/bkt?" + sub)
		if status != 400 || !strings.Contains(body, "<Code>InvalidRequest</Code><Message>The value of x-amz-content-sha256 header is invalid.</Message>") {
			t.Errorf("PUT ?%s: HTTP %d %s", sub, status, body)
		}
	}
	if status, body := send("/bkt/obj"); status != 200 {
		t.Errorf("PutObject with an aws-chunked body: HTTP %d %s", status, body)
	}
}
