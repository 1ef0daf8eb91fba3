package e2e

import (
	"encoding/json"
	"math/rand/v2"
	"path/filepath"
	"testing"
)

// A copy of a multipart object answers the same whether or not s3seal has
// the source's manifest cached: the aws CLI uploads an object in parts
// (with CRC32 checksums), then copies it twice with copy-object and once
// with its own UploadPartCopy copy (s3 cp). Each copy-object keeps the
// source's ETag and checksum, as one does in a process that never read
// the source; the s3 cp copy has a checksum, as it has in such a process.
func TestCopiesOfMultipartKeepChecksumWarm(t *testing.T) {
	t.Parallel()
	p := startS3seal(t, sealOpts{})
	a := awsCLIMultipart(t, p)
	dir := t.TempDir()
	big := make([]byte, 20<<20+5)
	rand.NewChaCha8([32]byte{9}).Read(big)
	writeFile(t, dir, "big", big)
	a.run("s3", "mb", "s3://warmcopies")
	a.run("s3", "cp", "--no-progress", filepath.Join(dir, "big"), "s3://warmcopies/big")
	type head struct {
		ETag          string
		ChecksumCRC32 string
		ChecksumType  string
	}
	headOf := func(key string) head {
		var h head
		if err := json.Unmarshal([]byte(a.run("s3api", "head-object", "--bucket", "warmcopies", "--key", key, "--checksum-mode", "ENABLED")), &h); err != nil {
			t.Fatal(err)
		}
		return h
	}
	src := headOf("big")
	if src.ChecksumCRC32 == "" {
		t.Skipf("the aws CLI gave the source no CRC32: %+v", src)
	}
	a.run("s3api", "copy-object", "--bucket", "warmcopies", "--key", "copy1", "--copy-source", "warmcopies/big")
	a.run("s3api", "copy-object", "--bucket", "warmcopies", "--key", "copy2", "--copy-source", "warmcopies/big")
	a.run("s3", "cp", "--no-progress", "s3://warmcopies/big", "s3://warmcopies/copy3")
	for _, k := range []string{"copy1", "copy2"} {
		if h := headOf(k); h != src {
			t.Errorf("%s: %+v; the source: %+v", k, h, src)
		}
	}
	// The CLI's own copy creates its upload without an algorithm: its
	// parts get the CRC64NVME s3seal keeps (as in a process that never
	// read the source), so the copy has an object checksum.
	var h3 struct{ ETag, ChecksumType, ChecksumCRC64NVME string }
	if err := json.Unmarshal([]byte(a.run("s3api", "head-object", "--bucket", "warmcopies", "--key", "copy3", "--checksum-mode", "ENABLED")), &h3); err != nil {
		t.Fatal(err)
	}
	if h3.ETag != src.ETag || h3.ChecksumType == "" {
		t.Errorf("copy3 (s3 cp): %+v, without a checksum; the source: %+v", h3, src)
	}
}
