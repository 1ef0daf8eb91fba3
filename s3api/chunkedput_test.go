package s3api

import (
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

// A PUT whose body is HTTP-chunked (Transfer-Encoding: chunked, no
// Content-Length, not aws-chunked) is answered as S3 answers it: 501
// NotImplemented naming the Transfer-Encoding header, on PutObject and
// UploadPart alike; nothing is stored.
func TestHTTPChunkedPutNotImplemented(t *testing.T) {
	url, ctx, c := newBucketServer(t, SingleCredential("ak", "sk"))
	mp, err := c.CreateMultipartUpload(ctx, &s3.CreateMultipartUploadInput{Bucket: aws.String("bkt"), Key: aws.String("m")})
	if err != nil {
		t.Fatal(err)
	}
	for _, target := range []string{"/bkt/k", "/bkt/m?partNumber=1&uploadId=" + aws.ToString(mp.UploadId)} {
		const body = "bar"
		req, err := http.NewRequest("PUT", url+target, io.NopCloser(strings.NewReader(body)))
		if err != nil {
			t.Fatal(err)
		}
		req.ContentLength = -1 // sent chunked
		sum := sha256.Sum256([]byte(body))
		hash := hex.EncodeToString(sum[:])
		req.Header.Set("X-Amz-Content-Sha256", hash)
		if err := v4.NewSigner().SignHTTP(context.Background(), aws.Credentials{AccessKeyID: "ak", SecretAccessKey: "sk"},
			req, hash, "s3", "us-east-1", time.Now()); err != nil {
			t.Fatal(err)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		got, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 501 || !strings.Contains(string(got), "<Code>NotImplemented</Code>") ||
			!strings.Contains(string(got), "<Header>Transfer-Encoding</Header>") {
			t.Errorf("PUT %s chunked: %d %s, want 501 NotImplemented naming Transfer-Encoding", target, resp.StatusCode, got)
		}
	}
	if _, err := c.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String("bkt"), Key: aws.String("k")}); err == nil {
		t.Error("the chunked PUT stored an object")
	}
}
