package e2e

import (
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
)

// TestMultipartOverwriteDropsManifest: in a bucket without versioning on
// moto (which answers every write with version id "null" and a HEAD with
// none), a multipart object overwritten by another multipart upload, then
// by a PUT, leaves no manifest behind: each write removes the manifest of
// the object it replaced, and gc has nothing to find.
func TestMultipartOverwriteDropsManifest(t *testing.T) {
	t.Parallel()
	moto := startMoto(t)
	p := startS3seal(t, sealOpts{Backend: moto})
	c, mc := sdkFor(t, p), motoClient(t, moto)
	mustCreateBucket(t, c, "overwrite")
	manifests := func() int {
		t.Helper()
		out, err := mc.ListObjectsV2(ctxT(t), &s3.ListObjectsV2Input{Bucket: aws.String("overwrite"), Prefix: aws.String(".s3seal/manifests/")})
		if err != nil {
			t.Fatal(err)
		}
		return len(out.Contents)
	}
	for i := uint64(0); i < 3; i++ {
		parts := faultParts(300 + i)
		etag := mpUpload(t, c, "overwrite", "big", parts)
		checkObject(t, c, "overwrite", "big", joinParts(parts), etag)
		if n := manifests(); n != 1 {
			t.Fatalf("after multipart upload %d: %d manifests in the store, want 1 (the current object's)", i+1, n)
		}
	}
	putObj(t, c, "overwrite", "big", []byte("small now"))
	if n := manifests(); n != 0 {
		t.Fatalf("after a PUT over the multipart object: %d manifests, want 0", n)
	}
}
