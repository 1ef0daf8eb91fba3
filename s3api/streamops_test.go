package s3api

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
)

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
