package e2e

// What real clients write beside an object's bytes (rclone's mtime and
// md5chksum, s3cmd's attrs, the aws CLI's --metadata and content headers,
// restic's content type) reaches the store only sealed (docs/FORMAT.md,
// format 2), and comes back to the client as written.

import (
	"context"
	"crypto/md5"
	"encoding/base64"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/s3seal/s3seal/crypto"
)

// storeSeesNothing fails unless every object under prefix in the store
// (moto) holds s3seal's metadata alone, in format 2, and none of the
// secrets in its metadata or content headers. s3seal's own objects (under
// .s3seal/) must not hold the secrets either.
func storeSeesNothing(t *testing.T, m *motoServer, bucket, prefix string, secrets ...string) {
	t.Helper()
	be, ctx := motoClient(t, m), context.Background()
	list, err := be.ListObjectsV2(ctx, &s3.ListObjectsV2Input{Bucket: aws.String(bucket), Prefix: aws.String(prefix)})
	if err != nil || len(list.Contents) == 0 {
		t.Fatalf("store listing of %s/%s: %d objects, %v", bucket, prefix, len(list.Contents), err)
	}
	for _, o := range list.Contents {
		h, err := be.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String(bucket), Key: o.Key})
		if err != nil {
			t.Fatal(err)
		}
		seen := []string{aws.ToString(h.ContentType), aws.ToString(h.ContentEncoding), aws.ToString(h.ContentDisposition),
			aws.ToString(h.ContentLanguage), aws.ToString(h.CacheControl), aws.ToString(h.ExpiresString), aws.ToString(h.WebsiteRedirectLocation)}
		own := strings.HasPrefix(aws.ToString(o.Key), ".s3seal/")
		for k, v := range h.Metadata {
			if !crypto.IsReservedMetaKey(k) && !own {
				t.Errorf("%s: the store holds user metadata %s=%s", aws.ToString(o.Key), k, v)
			}
			seen = append(seen, v)
		}
		if h.Metadata[crypto.MetaVersion] != "2" && !own {
			t.Errorf("%s: format %q", aws.ToString(o.Key), h.Metadata[crypto.MetaVersion])
		}
		for _, v := range seen {
			for _, s := range secrets {
				if s != "" && strings.Contains(v, s) {
					t.Errorf("%s: the store sees %q in %q", aws.ToString(o.Key), s, v)
				}
			}
		}
	}
}

// TestClientMetaSealedRclone: rclone's mtime and md5chksum (on SSE-C
// objects, single and multipart) never reach the store; rclone gets both
// back (it keeps modification times, and checks a multipart object's MD5
// against md5chksum).
func TestClientMetaSealedRclone(t *testing.T) {
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
	mtime := time.Date(2021, 3, 4, 5, 6, 7, 0, time.UTC)
	for name, data := range map[string][]byte{"small.txt": small, "big.bin": big} {
		path := writeFile(t, dir, "src/"+name, data)
		if err := os.Chtimes(path, mtime, mtime); err != nil {
			t.Fatal(err)
		}
	}
	// The flags below override rcloneEnv's upload cutoff.
	env := append(rcloneEnv(t, p),
		"RCLONE_CONFIG_S3SEAL_SSE_CUSTOMER_ALGORITHM=AES256",
		"RCLONE_CONFIG_S3SEAL_SSE_CUSTOMER_KEY_BASE64="+base64.StdEncoding.EncodeToString(ck),
		"RCLONE_CA_CERT="+tt.CAFile,
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
	if got := rc("lsl", "s3seal:mdbkt"); strings.Count(got, "2021-03-04 05:06:07") != 2 {
		t.Errorf("rclone lost the modification times it stored:\n%s", got)
	}
	var secrets []string
	for _, data := range [][]byte{small, big} {
		sum := md5.Sum(data)
		secrets = append(secrets, base64.StdEncoding.EncodeToString(sum[:]), fmt.Sprintf("%x", sum))
	}
	secrets = append(secrets, fmt.Sprint(mtime.Unix()), "text/plain")
	storeSeesNothing(t, m, "mdbkt", "", secrets...)
}

// TestClientMetaSealedS3cmd: s3cmd's attributes (owner, mode, times and
// the plaintext MD5) never reach the store; s3cmd gets them back.
func TestClientMetaSealedS3cmd(t *testing.T) {
	t.Parallel()
	requireTool(t, "s3cmd")
	m := startMoto(t)
	p := startS3seal(t, sealOpts{Backend: m})
	dir := t.TempDir()
	s3c := s3cmdFor(t, p, dir)
	data := []byte(strings.Repeat("a file the provider already knows\n", 100))
	src := writeFile(t, dir, "f.txt", data)
	s3c("mb", "s3://mdbkt2")
	s3c("put", "--mime-type=text/x-s3cmd-secret", src, "s3://mdbkt2/f.txt")
	sum := fmt.Sprintf("%x", md5.Sum(data))
	storeSeesNothing(t, m, "mdbkt2", "", sum, "s3cmd", "text/x-s3cmd-secret")
	sh, err := sdkFor(t, p).HeadObject(context.Background(), &s3.HeadObjectInput{Bucket: aws.String("mdbkt2"), Key: aws.String("f.txt")})
	if err != nil || !strings.Contains(sh.Metadata["s3cmd-attrs"], "md5:"+sum) || aws.ToString(sh.ContentType) != "text/x-s3cmd-secret" {
		t.Errorf("s3seal does not give s3cmd its attributes back: %v, %v", sh, err)
	}
	if info := s3c("info", "s3://mdbkt2/f.txt"); !strings.Contains(info, "text/x-s3cmd-secret") || !strings.Contains(info, sum) {
		t.Errorf("s3cmd info:\n%s", info)
	}
}

// TestClientMetaSealedAWSCLI: `aws s3 cp --metadata diagnosis=influenza` with
// content headers: none of it reaches the store, all of it comes back.
// The metadata limit after sealing (crypto.MaxObjectMeta) is taken
// exactly and refused one byte past it with MetadataTooLarge.
func TestClientMetaSealedAWSCLI(t *testing.T) {
	t.Parallel()
	m := startMoto(t)
	p := startS3seal(t, sealOpts{Backend: m})
	a := newAWSCLI(t, p)
	src := writeFile(t, t.TempDir(), "report.bin", []byte("lab results"))
	a.run("s3", "mb", "s3://clinic")
	a.run("s3", "cp", src, "s3://clinic/patients/p1", "--metadata", "diagnosis=influenza,ward=seventh-b", "--content-type", "text/x-lab-report",
		"--content-disposition", `attachment; filename="p1-report.txt"`, "--content-language", "x-klingon", "--cache-control", "x-private")
	storeSeesNothing(t, m, "clinic", "patients/", "influenza", "diagnosis", "seventh-b", "lab-report", "p1-report", "klingon", "x-private")
	head := a.run("s3api", "head-object", "--bucket", "clinic", "--key", "patients/p1")
	for _, want := range []string{`"diagnosis": "influenza"`, `"ward": "seventh-b"`, `"ContentType": "text/x-lab-report"`, `p1-report.txt`, `"ContentLanguage": "x-klingon"`, `"CacheControl": "x-private"`} {
		if !strings.Contains(head, want) {
			t.Errorf("head-object lacks %s:\n%s", want, head)
		}
	}

	// The limit: 3 bytes, Content-Type's value plus 3, and the entry
	// "pad" plus 4 (docs/FORMAT.md).
	const ct = "application/octet-stream"
	pad := strings.Repeat("p", crypto.MaxObjectMeta-3-(3+len(ct))-(4+len("pad")))
	a.run("s3api", "put-object", "--bucket", "clinic", "--key", "at-limit", "--body", src, "--content-type", ct, "--metadata", "pad="+pad)
	if head := a.run("s3api", "head-object", "--bucket", "clinic", "--key", "at-limit"); !strings.Contains(head, pad) {
		t.Errorf("the entry at the limit did not come back:\n%s", head)
	}
	msg := a.fails("MetadataTooLarge", "s3api", "put-object", "--bucket", "clinic", "--key", "past-limit", "--body", src, "--content-type", ct, "--metadata", "pad="+pad+"p")
	if !strings.Contains(msg, fmt.Sprint(crypto.MaxObjectMeta)) {
		t.Errorf("the refusal does not state the limit: %s", msg)
	}
	a.fails("MetadataTooLarge", "s3api", "create-multipart-upload", "--bucket", "clinic", "--key", "past-limit", "--content-type", ct, "--metadata", "pad="+pad+"p")
}

// TestClientMetaSealedRestic: a restic repository written through s3seal
// leaves the store only s3seal's metadata. (The store sees the content
// type application/octet-stream, restic's, which is also what the backend
// client names for any body without one.)
func TestClientMetaSealedRestic(t *testing.T) {
	t.Parallel()
	bin := requireTool(t, resticBin)
	m := startMoto(t)
	p := startS3seal(t, sealOpts{Backend: m})
	mustCreateBucket(t, sdkFor(t, p), "restic-meta")
	env := cleanEnv([]string{"AWS_CA_BUNDLE"},
		"RESTIC_REPOSITORY=s3:"+p.Endpoint+"/restic-meta/repo",
		"RESTIC_PASSWORD=correct horse battery staple",
		"AWS_ACCESS_KEY_ID="+p.AccessKey, "AWS_SECRET_ACCESS_KEY="+p.SecretKey, "AWS_DEFAULT_REGION=us-east-1",
		"RESTIC_CACHE_DIR="+t.TempDir(), "HOME="+t.TempDir())
	src := t.TempDir()
	writeFile(t, src, "notes.txt", []byte("tuesday's notes"))
	runTool(t, env, bin, "--quiet", "init")
	runTool(t, env, bin, "--quiet", "backup", "--host", "h", src)
	dst := t.TempDir()
	runTool(t, env, bin, "--quiet", "restore", "latest", "--target", dst)
	if got, err := os.ReadFile(filepath.Join(dst, src, "notes.txt")); err != nil || string(got) != "tuesday's notes" {
		t.Fatalf("restore: %q, %v", got, err)
	}
	storeSeesNothing(t, m, "restic-meta", "repo/")
}
