package e2e

import (
	"bytes"
	"context"
	"io"
	"os/exec"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"

	"github.com/s3seal/s3seal/internal/localkms"
)

// BenchmarkKMS times PUTs and GETs of 4 KiB and 128 MiB objects through
// four s3seal processes on the embedded store, side by side in one run:
// a file key, a master key in a KMS (local-kms on this machine: a
// GenerateDataKey and the Decrypt that checks it per object written,
// reads from the cache of opened keys), the same with
// --kms-check-writes=false (the GenerateDataKey alone), and the KMS with
// bucket keys (the bucket's default encryption asks for them: no KMS call
// while the bucket key lives). scripts/bench.sh
// kms prints the ratios to the file key.
//
//	go test ./e2e -run '^$' -bench KMS -count 5
func BenchmarkKMS(b *testing.B) {
	kmsd := localkms.StartServer(b)
	requireTool(b, "aws")
	cmd := exec.Command("aws", "--endpoint-url", kmsd.Endpoint, "kms", "create-key", "--query", "KeyMetadata.Arn", "--output", "text")
	cmd.Env = cleanEnv([]string{"AWS_CA_BUNDLE"}, "AWS_ACCESS_KEY_ID=kms-test", "AWS_SECRET_ACCESS_KEY=kms-test",
		"AWS_DEFAULT_REGION="+localkms.Region, "AWS_EC2_METADATA_DISABLED=true", "HOME="+b.TempDir())
	out, err := cmd.Output()
	if err != nil {
		b.Skipf("aws kms create-key: %v: %s", err, out)
	}
	arn := strings.TrimSpace(string(out))
	env := kmsEnv(kmsd.Endpoint, localkms.Region)
	ctx := context.Background()
	fronts := []struct {
		name string
		cl   *s3.Client
	}{}
	for _, f := range []struct {
		name      string
		o         sealOpts
		bucketKey bool
	}{
		{"file", sealOpts{Env: env}, false},
		{"kms", sealOpts{KMSKey: "aws-kms://" + arn, Env: env}, false},
		{"kms-unchecked", sealOpts{KMSKey: "aws-kms://" + arn, Env: env, Args: []string{"--kms-check-writes=false"}}, false},
		{"kms-bucket-key", sealOpts{KMSKey: "aws-kms://" + arn, Env: env}, true},
	} {
		p := startS3seal(b, f.o)
		cl := newSDKClient(b, p.Endpoint, p.AccessKey, p.SecretKey, true)
		if _, err := cl.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String("bench")}); err != nil {
			b.Fatal(err)
		}
		if f.bucketKey {
			_, err := cl.PutBucketEncryption(ctx, &s3.PutBucketEncryptionInput{Bucket: aws.String("bench"),
				ServerSideEncryptionConfiguration: &types.ServerSideEncryptionConfiguration{Rules: []types.ServerSideEncryptionRule{{
					ApplyServerSideEncryptionByDefault: &types.ServerSideEncryptionByDefault{SSEAlgorithm: types.ServerSideEncryptionAwsKms},
					BucketKeyEnabled:                   aws.Bool(true)}}}})
			if err != nil {
				b.Fatal(err)
			}
		}
		fronts = append(fronts, struct {
			name string
			cl   *s3.Client
		}{f.name, cl})
	}
	for _, size := range []struct {
		name string
		n    int
	}{{"4KiB", 4 << 10}, {"128MiB", 128 << 20}} {
		body := patternBytes(1, size.n)
		for _, f := range fronts {
			b.Run("PUT-"+size.name+"/"+f.name, func(b *testing.B) {
				b.SetBytes(int64(size.n))
				for i := 0; b.Loop(); i++ {
					if _, err := f.cl.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("bench"), Key: aws.String(size.name),
						Body: bytes.NewReader(body)}); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
		for _, f := range fronts {
			b.Run("GET-"+size.name+"/"+f.name, func(b *testing.B) {
				b.SetBytes(int64(size.n))
				for b.Loop() {
					out, err := f.cl.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String("bench"), Key: aws.String(size.name)})
					if err != nil {
						b.Fatal(err)
					}
					io.Copy(io.Discard, out.Body)
					out.Body.Close()
				}
			})
		}
	}

}
