package e2e

// Review s11b (SSE-C). These tests proved a finding against the code
// before its fix (user metadata carrying the plaintext's MD5 reached the
// store); they now assert it is sealed (sealstore.SealedMetaKeys).

import (
	"context"
	"crypto/md5"
	"encoding/base64"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
)

// TestReviewS11bRcloneMD5ReachesStore (regression). docs/FORMAT.md
// says the plaintext's MD5 is not visible to the provider ("sealed with
// the data key") and docs/DESIGN.md says of SSE-C objects "The MD5 is
// sealed under the DEK, so the provider does not see it". rclone, a
// supported client, stores the MD5 of what it uploads in the user
// metadata X-Amz-Meta-Md5chksum; s3seal passes user metadata to the store
// verbatim, so the store holds the plaintext MD5 of every object rclone
// writes, SSE-C ones included: the "does this bucket hold a file I know"
// confirmation the design means to deny.
func TestReviewS11bRcloneMD5ReachesStore(t *testing.T) {
	t.Parallel()
	requireRclone(t)
	m := startMoto(t)
	tt := newTestTLS(t)
	p := startTLSS3seal(t, tt, sealOpts{Backend: m})
	ck := make([]byte, 32)
	for i := range ck {
		ck[i] = byte(i + 1)
	}
	dir := t.TempDir()
	small := []byte(strings.Repeat("a file the provider already knows\n", 3000)) // ~100 KB, single PUT
	big := make([]byte, 12<<20)                                                  // multipart
	for i := range big {
		big[i] = byte(i * 7)
	}
	writeFile(t, dir, "src/small.txt", small)
	writeFile(t, dir, "src/big.bin", big)
	env := cleanEnv([]string{"AWS_CA_BUNDLE"},
		"RCLONE_CONFIG="+filepath.Join(t.TempDir(), "rclone.conf"),
		"RCLONE_CONFIG_S3SEAL_TYPE=s3",
		"RCLONE_CONFIG_S3SEAL_PROVIDER=Other",
		"RCLONE_CONFIG_S3SEAL_ENDPOINT="+p.Endpoint,
		"RCLONE_CONFIG_S3SEAL_ACCESS_KEY_ID="+p.AccessKey,
		"RCLONE_CONFIG_S3SEAL_SECRET_ACCESS_KEY="+p.SecretKey,
		"RCLONE_CONFIG_S3SEAL_REGION=us-east-1",
		"RCLONE_CONFIG_S3SEAL_FORCE_PATH_STYLE=true",
		"RCLONE_CONFIG_S3SEAL_SSE_CUSTOMER_ALGORITHM=AES256",
		"RCLONE_CONFIG_S3SEAL_SSE_CUSTOMER_KEY_BASE64="+base64.StdEncoding.EncodeToString(ck),
		"RCLONE_CA_CERT="+tt.CAFile,
		"HOME="+t.TempDir(),
	)
	rc := func(args ...string) string {
		return runTool(t, env, rcloneBin, append([]string{"--retries", "1", "--low-level-retries", "1", "--s3-upload-cutoff", "8M", "--s3-chunk-size", "5M"}, args...)...)
	}
	rc("mkdir", "s3seal:mdbkt")
	rc("copy", filepath.Join(dir, "src"), "s3seal:mdbkt")
	if got := rc("cat", "s3seal:mdbkt/small.txt"); got != string(small) {
		t.Fatalf("rclone read back %d bytes", len(got))
	}
	// rclone knows a multipart object's MD5 only from its md5chksum:
	// s3seal gives it back opened.
	if got, sum := rc("md5sum", "s3seal:mdbkt/big.bin"), fmt.Sprintf("%x", md5.Sum(big)); !strings.Contains(got, sum) {
		t.Errorf("rclone md5sum of the multipart object: %q, want %s", got, sum)
	}
	be := motoClient(t, m)
	ctx := context.Background()
	for name, data := range map[string][]byte{"small.txt": small, "big.bin": big} {
		h, err := be.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String("mdbkt"), Key: aws.String(name)})
		if err != nil {
			t.Fatal(err)
		}
		if h.Metadata["s3seal-ssec"] == "" {
			t.Fatalf("%s is not an SSE-C object: %v", name, h.Metadata)
		}
		sum := md5.Sum(data)
		b64, hexsum := base64.StdEncoding.EncodeToString(sum[:]), fmt.Sprintf("%x", sum)
		for k, v := range h.Metadata {
			if strings.Contains(v, b64) || strings.Contains(v, hexsum) {
				t.Errorf("the store holds the plaintext MD5 of SSE-C object %s in user metadata %s=%s", name, k, v)
			}
		}
	}
}

// TestReviewS11bS3cmdMD5ReachesStore (regression, same cause as the
// rclone one; s3cmd gets its attributes back through s3seal). s3cmd's default --preserve stores x-amz-meta-s3cmd-attrs,
// which holds "md5:<hex of the plaintext>": the store holds the plaintext
// MD5 docs/FORMAT.md says it never sees.
func TestReviewS11bS3cmdMD5ReachesStore(t *testing.T) {
	t.Parallel()
	requireTool(t, "s3cmd")
	m := startMoto(t)
	p := startS3seal(t, sealOpts{Backend: m})
	dir := t.TempDir()
	s3c := s3cmdFor(t, p, dir)
	data := []byte(strings.Repeat("a file the provider already knows\n", 100))
	src := writeFile(t, dir, "f.txt", data)
	s3c("mb", "s3://mdbkt2")
	s3c("put", src, "s3://mdbkt2/f.txt")
	h, err := motoClient(t, m).HeadObject(context.Background(), &s3.HeadObjectInput{Bucket: aws.String("mdbkt2"), Key: aws.String("f.txt")})
	if err != nil {
		t.Fatal(err)
	}
	sum := fmt.Sprintf("%x", md5.Sum(data))
	for k, v := range h.Metadata {
		if strings.Contains(v, sum) {
			t.Errorf("the store holds the plaintext MD5 in user metadata %s=%s", k, v)
		}
	}
	sh, err := sdkFor(t, p).HeadObject(context.Background(), &s3.HeadObjectInput{Bucket: aws.String("mdbkt2"), Key: aws.String("f.txt")})
	if err != nil || !strings.Contains(sh.Metadata["s3cmd-attrs"], "md5:"+sum) {
		t.Errorf("s3seal does not give s3cmd its attributes back: %v, %v", sh, err)
	}
}
