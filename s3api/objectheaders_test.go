package s3api

import (
	"context"
	"maps"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
)

// Headers an object keeps through every kind of write.

// TestUnderscoreMetadata: metadata with "_" through PUT, COPY (COPY and
// REPLACE directives), multipart, HEAD, GET.
func TestUnderscoreMetadata(t *testing.T) {
	_, ctx, c := newBucketServer(t, SingleCredential("ak", "sk"))
	b := aws.String("bkt")
	m1 := map[string]string{"a_b": "1", "plain": "2", "md5chksum": "x"}
	if _, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: b, Key: aws.String("o"), Body: strings.NewReader("hello"), Metadata: m1}); err != nil {
		t.Fatal(err)
	}
	check := func(key string, want map[string]string) {
		t.Helper()
		h, err := c.HeadObject(ctx, &s3.HeadObjectInput{Bucket: b, Key: aws.String(key)})
		if err != nil || !maps.Equal(h.Metadata, want) {
			t.Errorf("HEAD %s: %v %v, want %v", key, h.Metadata, err, want)
		}
		g, err := c.GetObject(ctx, &s3.GetObjectInput{Bucket: b, Key: aws.String(key)})
		if err != nil || !maps.Equal(g.Metadata, want) {
			t.Errorf("GET %s: %v %v, want %v", key, g.Metadata, err, want)
		}
	}
	check("o", m1)
	if _, err := c.CopyObject(ctx, &s3.CopyObjectInput{Bucket: b, Key: aws.String("c1"), CopySource: aws.String("bkt/o")}); err != nil {
		t.Fatal(err)
	}
	check("c1", m1)
	m2 := map[string]string{"x_y": "3", "q": "4"}
	if _, err := c.CopyObject(ctx, &s3.CopyObjectInput{Bucket: b, Key: aws.String("c2"), CopySource: aws.String("bkt/o"),
		MetadataDirective: types.MetadataDirectiveReplace, Metadata: m2}); err != nil {
		t.Fatal(err)
	}
	check("c2", m2)
	// Copy onto itself with REPLACE.
	if _, err := c.CopyObject(ctx, &s3.CopyObjectInput{Bucket: b, Key: aws.String("o"), CopySource: aws.String("bkt/o"),
		MetadataDirective: types.MetadataDirectiveReplace, Metadata: m2}); err != nil {
		t.Fatal(err)
	}
	check("o", m2)
	cu, err := c.CreateMultipartUpload(ctx, &s3.CreateMultipartUploadInput{Bucket: b, Key: aws.String("mp"), Metadata: m1})
	if err != nil {
		t.Fatal(err)
	}
	p, err := c.UploadPart(ctx, &s3.UploadPartInput{Bucket: b, Key: aws.String("mp"), UploadId: cu.UploadId, PartNumber: aws.Int32(1), Body: strings.NewReader("abc")})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.CompleteMultipartUpload(ctx, &s3.CompleteMultipartUploadInput{Bucket: b, Key: aws.String("mp"), UploadId: cu.UploadId,
		MultipartUpload: &types.CompletedMultipartUpload{Parts: []types.CompletedPart{{PartNumber: aws.Int32(1), ETag: p.ETag}}}}); err != nil {
		t.Fatal(err)
	}
	check("mp", m1)
	if _, err := c.CopyObject(ctx, &s3.CopyObjectInput{Bucket: b, Key: aws.String("mpc"), CopySource: aws.String("bkt/mp")}); err != nil {
		t.Fatal(err)
	}
	check("mpc", m1)
	// REPLACE with no sealed entries: the source's sealed ones must not
	// come back (self-copy, copy to another key, of a plain and a
	// multipart source).
	m3 := map[string]string{"only": "5"}
	for _, src := range []string{"c1", "mp"} {
		for _, dst := range []string{src, src + "-r"} {
			if _, err := c.CopyObject(ctx, &s3.CopyObjectInput{Bucket: b, Key: aws.String(dst), CopySource: aws.String("bkt/" + src),
				MetadataDirective: types.MetadataDirectiveReplace, Metadata: m3}); err != nil {
				t.Fatal(err)
			}
			check(dst, m3)
		}
	}
}

// TestDefaultContentTypeEveryWrite: binary/octet-stream for every write made
// without a Content-Type (PUT, multipart, copy with REPLACE); COPY keeps
// the source's.
func TestDefaultContentTypeEveryWrite(t *testing.T) {
	url := newTestServer(t, SingleCredential("ak", "sk"))
	ctx := context.Background()
	c := sdkClient(url, "ak", "sk")
	b := aws.String("ctbkt")
	if _, err := c.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: b}); err != nil {
		t.Fatal(err)
	}
	ct := func(key string) string {
		h, err := c.HeadObject(ctx, &s3.HeadObjectInput{Bucket: b, Key: aws.String(key)})
		if err != nil {
			t.Fatal(err)
		}
		return aws.ToString(h.ContentType)
	}
	// A raw PUT without Content-Type (the SDK always sends one).
	req, _ := http.NewRequest(http.MethodPut, url+"/ctbkt/p", strings.NewReader("x"))
	req.Header.Set("X-Amz-Content-Sha256", "UNSIGNED-PAYLOAD")
	if err := v4.NewSigner().SignHTTP(ctx, aws.Credentials{AccessKeyID: "ak", SecretAccessKey: "sk"}, req, "UNSIGNED-PAYLOAD", "s3", "us-east-1", time.Now()); err != nil {
		t.Fatal(err)
	}
	if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != 200 {
		t.Fatalf("raw PUT: %v %v", resp, err)
	}
	if _, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: b, Key: aws.String("t"), Body: strings.NewReader("x"), ContentType: aws.String("text/plain")}); err != nil {
		t.Fatal(err)
	}
	cu, err := c.CreateMultipartUpload(ctx, &s3.CreateMultipartUploadInput{Bucket: b, Key: aws.String("mp")})
	if err != nil {
		t.Fatal(err)
	}
	p, err := c.UploadPart(ctx, &s3.UploadPartInput{Bucket: b, Key: aws.String("mp"), UploadId: cu.UploadId, PartNumber: aws.Int32(1), Body: strings.NewReader("abc")})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.CompleteMultipartUpload(ctx, &s3.CompleteMultipartUploadInput{Bucket: b, Key: aws.String("mp"), UploadId: cu.UploadId,
		MultipartUpload: &types.CompletedMultipartUpload{Parts: []types.CompletedPart{{PartNumber: aws.Int32(1), ETag: p.ETag}}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.CopyObject(ctx, &s3.CopyObjectInput{Bucket: b, Key: aws.String("tc"), CopySource: aws.String("ctbkt/t")}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.CopyObject(ctx, &s3.CopyObjectInput{Bucket: b, Key: aws.String("tr"), CopySource: aws.String("ctbkt/t"), MetadataDirective: types.MetadataDirectiveReplace}); err != nil {
		t.Fatal(err)
	}
	for k, want := range map[string]string{"p": "binary/octet-stream", "t": "text/plain", "mp": "binary/octet-stream", "tc": "text/plain", "tr": "binary/octet-stream"} {
		if got := ct(k); got != want {
			t.Errorf("%s: Content-Type %q, want %q", k, got, want)
		}
	}
	// Empty object: suffix range is the whole (empty) object, 200.
	if _, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: b, Key: aws.String("e"), Body: strings.NewReader("")}); err != nil {
		t.Fatal(err)
	}
	g, err := c.GetObject(ctx, &s3.GetObjectInput{Bucket: b, Key: aws.String("e"), Range: aws.String("bytes=-5")})
	if err != nil || aws.ToInt64(g.ContentLength) != 0 || g.ContentRange != nil {
		t.Errorf("GET bytes=-5 of an empty object: %+v %v", g, err)
	}
}
