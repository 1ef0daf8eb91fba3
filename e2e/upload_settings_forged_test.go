package e2e

import (
	"context"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
)

// TestForgedUploadStateAlgorithmAWSCLI: the store, here a write to moto behind
// s3seal's back, adds checksum-algorithm=sha1 to the plain metadata of the
// state of an upload created without an algorithm. `aws s3api
// list-multipart-uploads` through s3seal must still list none: s3seal
// reads the upload's sealed settings.
func TestForgedUploadStateAlgorithmAWSCLI(t *testing.T) {
	m := startMoto(t)
	p, c := startWithBucket(t, sealOpts{Backend: m}, mustCreateBucket, "forged-state")
	if _, err := c.CreateMultipartUpload(ctxT(t), &s3.CreateMultipartUploadInput{Bucket: aws.String("forged-state"), Key: aws.String("plain")}); err != nil {
		t.Fatal(err)
	}
	// The hostile store: rewrite the state object's user metadata.
	rewriteUploadState(ctxT(t), t, motoClient(t, m), "forged-state", func(meta map[string]string) {
		meta["checksum-algorithm"], meta["checksum-type"] = "sha1", "COMPOSITE"
	})
	a := newAWSCLI(t, p)
	out := a.run("s3api", "list-multipart-uploads", "--bucket", "forged-state")
	if strings.Contains(out, "SHA1") {
		t.Errorf("aws s3api list-multipart-uploads lists the store's forged algorithm for an upload created without one:\n%s", out)
	}
}

// rewriteUploadState is the hostile store editing, behind s3seal's back,
// the metadata of the state object of the one upload in bucket b of moto
// m: edit gets the metadata and changes it in place.
func rewriteUploadState(ctx context.Context, t *testing.T, mc *s3.Client, b string, edit func(map[string]string)) {
	t.Helper()
	lo, err := mc.ListObjectsV2(ctx, &s3.ListObjectsV2Input{Bucket: aws.String(b), Prefix: aws.String(".s3seal/uploads/")})
	if err != nil {
		t.Fatal(err)
	}
	var info string
	for _, o := range lo.Contents {
		if strings.HasSuffix(aws.ToString(o.Key), "/info") {
			info = aws.ToString(o.Key)
		}
	}
	if info == "" {
		t.Fatalf("no upload state in moto: %+v", lo.Contents)
	}
	h, err := mc.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String(b), Key: aws.String(info)})
	if err != nil {
		t.Fatal(err)
	}
	meta := h.Metadata
	edit(meta)
	if _, err := mc.CopyObject(ctx, &s3.CopyObjectInput{Bucket: aws.String(b), Key: aws.String(info),
		CopySource: aws.String(b + "/" + info), Metadata: meta, MetadataDirective: types.MetadataDirectiveReplace}); err != nil {
		t.Fatal(err)
	}
}
