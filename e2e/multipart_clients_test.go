package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/s3/manager"
	"github.com/aws/aws-sdk-go-v2/service/s3"
)

// newMultipartCLI is the aws CLI with its default multipart settings
// (threshold and chunk size 8 MiB), path style.
func newMultipartCLI(t *testing.T, p *sealProc) *awsCLI {
	t.Helper()
	a := newAWSCLI(t, p)
	cfg := writeFile(t, t.TempDir(), "config", []byte("[default]\nregion = us-east-1\noutput = json\ns3 =\n    addressing_style = path\n"))
	a.env = append(a.env, "AWS_CONFIG_FILE="+cfg)
	return a
}

// headETagSize runs aws s3api head-object and returns ETag and size.
func (a *awsCLI) headETagSize(bucket, key string) (string, int64) {
	a.t.Helper()
	var head struct {
		ETag          string
		ContentLength int64
	}
	if err := json.Unmarshal([]byte(a.run("s3api", "head-object", "--bucket", bucket, "--key", key)), &head); err != nil {
		a.t.Fatalf("head-object JSON: %v", err)
	}
	return strings.Trim(head.ETag, `"`), head.ContentLength
}

// TestMultipartAWSCLI: aws s3 cp of 100 MiB goes up in 13 parts of 8 MiB
// and comes down in ranged GETs, on both backends.
func TestMultipartAWSCLI(t *testing.T) {
	t.Parallel()
	for _, be := range []string{"embedded", "moto"} {
		t.Run(be, func(t *testing.T) {
			t.Parallel()
			p := startBackend(t, be)
			a := newMultipartCLI(t, p)
			data := patternBytes(500, 100*mib)
			src := writeFile(t, t.TempDir(), "big.bin", data)
			a.run("s3", "mb", "s3://mpcli")
			a.run("s3", "cp", "--no-progress", src, "s3://mpcli/dir/big.bin")
			etag, size := a.headETagSize("mpcli", "dir/big.bin")
			if want := splitETag(data, 8*mib); etag != want || size != int64(len(data)) {
				t.Errorf("head-object: ETag %s size %d, want %s %d", etag, size, want, len(data))
			}
			if ls := a.run("s3", "ls", "s3://mpcli/dir/"); !containsLineSuffix(ls, fmt.Sprintf("%d big.bin", len(data))) {
				t.Errorf("aws s3 ls:\n%s", ls)
			}
			dst := filepath.Join(t.TempDir(), "down.bin")
			a.run("s3", "cp", "--no-progress", "s3://mpcli/dir/big.bin", dst)
			if got := readFile(t, dst); !bytes.Equal(got, data) {
				t.Errorf("aws s3 cp down: %d bytes, want %d identical", len(got), len(data))
			}
		})
	}
}

// TestMultipartRclone: rclone copies 300 MiB in 10 MiB parts, 4 at once,
// then rclone check (sizes and hashes) and check --download (bytes) pass,
// on both backends.
func TestMultipartRclone(t *testing.T) {
	t.Parallel()
	requireRclone(t)
	src := t.TempDir()
	f, err := os.Create(filepath.Join(src, "big.bin"))
	if err != nil {
		t.Fatal(err)
	}
	const size = 300 * mib
	var parts [][]byte
	for off := 0; off < size; off += 50 * mib {
		chunk := patternBytes(uint64(600+off/mib), 50*mib)
		if _, err := f.Write(chunk); err != nil {
			t.Fatal(err)
		}
		for i := 0; i < len(chunk); i += 10 * mib {
			parts = append(parts, chunk[i:i+10*mib])
		}
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	wantETag := mpETag(parts...)
	parts = nil
	for _, be := range []string{"embedded", "moto"} {
		t.Run(be, func(t *testing.T) {
			t.Parallel()
			p := startBackend(t, be)
			env := append(rcloneEnv(t, p), "RCLONE_CONFIG_S3SEAL_LIST_VERSION=1")
			rc := func(args ...string) string {
				t.Helper()
				return runTool(t, env, rcloneBin, append([]string{"--retries", "1", "--low-level-retries", "1"}, args...)...)
			}
			rc("mkdir", "s3seal:mprclone")
			rc("copy", "--s3-chunk-size", "10M", "--s3-upload-concurrency", "4", "--s3-upload-cutoff", "10M", src, "s3seal:mprclone/dir")
			for _, extra := range [][]string{nil, {"--download"}} {
				args := append([]string{"check"}, extra...)
				out, errOut, err := tryTool(t, env, rcloneBin, append(args, src, "s3seal:mprclone/dir")...)
				all := out + errOut
				if err != nil || !strings.Contains(all, "1 matching files") || !strings.Contains(all, "0 differences found") {
					t.Errorf("rclone %v: %v\n%s", args, err, all)
				}
				if extra == nil && (strings.Contains(all, "No common hash") || strings.Contains(all, "no hashes in common")) {
					t.Errorf("rclone check did not compare hashes:\n%s", all)
				}
			}
			if ls := rc("lsl", "s3seal:mprclone/dir"); !strings.Contains(ls, fmt.Sprint(size)) {
				t.Errorf("rclone lsl:\n%s", ls)
			}
			h, err := sdkFor(t, p).HeadObject(ctxT(t), &s3.HeadObjectInput{Bucket: aws.String("mprclone"), Key: aws.String("dir/big.bin")})
			if err != nil || unquote(h.ETag) != wantETag || aws.ToInt64(h.ContentLength) != size {
				t.Errorf("HEAD after rclone copy: err %v, ETag %s size %d, want %s %d (30 parts of 10 MiB)", err, unquote(h.ETag), aws.ToInt64(h.ContentLength), wantETag, size)
			}
		})
	}
}

// TestMultipartS3cmd: s3cmd puts 20 MiB + 3 in 5 MiB parts and gets it
// back, on both backends.
func TestMultipartS3cmd(t *testing.T) {
	t.Parallel()
	requireTool(t, "s3cmd")
	for _, be := range []string{"embedded", "moto"} {
		t.Run(be, func(t *testing.T) {
			t.Parallel()
			p := startBackend(t, be)
			dir := t.TempDir()
			s3cmd := s3cmdFor(t, p, dir)
			data := patternBytes(700, 20*mib+3)
			src := writeFile(t, dir, "src.bin", data)
			s3cmd("mb", "s3://mps3cmd")
			s3cmd("put", "--multipart-chunk-size-mb=5", src, "s3://mps3cmd/obj.bin")
			dst := filepath.Join(dir, "dst.bin")
			s3cmd("get", "--force", "s3://mps3cmd/obj.bin", dst)
			if got := readFile(t, dst); !bytes.Equal(got, data) {
				t.Errorf("s3cmd get: %d bytes, want %d identical", len(got), len(data))
			}
			c := sdkFor(t, p)
			checkObject(t, c, "mps3cmd", "obj.bin", data, splitETag(data, 5*mib))
		})
	}
}

// TestMultipartSDKManager: the Go SDK's upload manager sends 40 MiB + 123
// in 5 MiB parts, its downloader reads it back in 5 MiB ranges, on both
// backends.
func TestMultipartSDKManager(t *testing.T) {
	t.Parallel()
	for _, be := range []string{"embedded", "moto"} {
		t.Run(be, func(t *testing.T) {
			t.Parallel()
			c := sdkFor(t, startBackend(t, be))
			mustCreateBucket(t, c, "mpmgr")
			data := patternBytes(800, 40*mib+123)
			//lint:ignore SA1019 users still run the SDK's feature/s3/manager; this test covers them, not its successor
			up := manager.NewUploader(c, func(u *manager.Uploader) { u.PartSize = 5 * mib; u.Concurrency = 3 })
			//lint:ignore SA1019 users still run the SDK's feature/s3/manager; this test covers them, not its successor
			out, err := up.Upload(ctxT(t), &s3.PutObjectInput{Bucket: aws.String("mpmgr"), Key: aws.String("obj"), Body: bytes.NewReader(data)})
			if err != nil {
				t.Fatalf("upload manager: %v", err)
			}
			want := splitETag(data, 5*mib)
			if unquote(out.ETag) != want || out.UploadID == "" {
				t.Errorf("upload manager: ETag %s upload id %q, want %s after a multipart upload", unquote(out.ETag), out.UploadID, want)
			}
			//lint:ignore SA1019 users still run the SDK's feature/s3/manager; this test covers them, not its successor
			down := manager.NewDownloader(c, func(d *manager.Downloader) { d.PartSize = 5 * mib; d.Concurrency = 3 })
			buf := manager.NewWriteAtBuffer(make([]byte, 0, len(data)))
			//lint:ignore SA1019 users still run the SDK's feature/s3/manager; this test covers them, not its successor
			n, err := down.Download(ctxT(t), buf, &s3.GetObjectInput{Bucket: aws.String("mpmgr"), Key: aws.String("obj")})
			if err != nil || n != int64(len(data)) || !bytes.Equal(buf.Bytes(), data) {
				t.Errorf("downloader: err %v, %d bytes, want %d identical", err, n, len(data))
			}
			checkObject(t, c, "mpmgr", "obj", data, want)
			checkPartGet(t, c, "mpmgr", "obj", 9, data[8*5*mib:], 9)
		})
	}
}
