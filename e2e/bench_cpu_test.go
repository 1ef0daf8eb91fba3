//go:build linux

package e2e

import (
	"bytes"
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/md5"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"hash"
	"hash/crc32"
	"io"
	"os"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/minio/crc64nvme"

	"github.com/s3seal/s3seal/backend/embedded"
)

// BenchmarkCPUPerGiB drives the s3seal binary with the SDK over HTTP and
// reads s3seal's own CPU time (utime + stime of /proc/PID/stat) around
// each path, per GiB of plaintext, beside the floor: the sum of the
// one-core times of the hashes and the cipher that path must compute,
// measured in the same run. The store is embedded in the benchmark
// process (its CPU is not s3seal's); both it and s3seal's data directory
// are on tmpfs (/dev/shm) when there is one.
//
// The client signs its payloads (SHA-256) and declares a CRC64NVME in a
// header. Paths:
//
//   - PUT streamed: 256 MiB PUTs with Content-MD5 as well, which s3seal
//     seals straight to the store: MD5, SHA-256, CRC64NVME, AES-GCM.
//
//   - PUT spooled: the same without Content-MD5, sealed into the spool
//     and sent from it: the same, plus CRC32C of the ciphertext.
//
//   - multipart PUT: 16 MiB parts, no checksum (s3seal computes the
//     default CRC64NVME): MD5, SHA-256, CRC64NVME, AES-GCM, CRC32C.
//
//   - GET: the whole object: AES-GCM.
//
//     scripts/bench.sh cpu   (S3SEAL_BENCH_CPU_MIB: plaintext per path, default 1024)
func BenchmarkCPUPerGiB(b *testing.B) {
	total := int64(envInt("S3SEAL_BENCH_CPU_MIB", 1024)) << 20
	const objSize, partSize = 256 << 20, 16 << 20
	tmp := "/dev/shm"
	if _, err := os.Stat(tmp); err != nil {
		tmp = ""
	}
	dir, err := os.MkdirTemp(tmp, "s3seal-bench-cpu-")
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { os.RemoveAll(dir) })
	emb, err := embedded.Start(dir + "/store")
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { emb.Close() })
	ecfg := emb.Config()
	p := startS3seal(b, sealOpts{DataDir: dir + "/s3seal", AccessKey: "bench", SecretKey: "bench-secret-key", Args: []string{
		"--backend-endpoint", ecfg.Endpoint, "--backend-path-style", "--backend-access-key", ecfg.AccessKey,
		"--backend-secret-key", ecfg.SecretKey, "--key", randomKey(b)}})
	cl := newSDKClient(b, p.Endpoint, p.AccessKey, p.SecretKey, true)
	ctx := context.Background()
	if _, err := cl.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String("cpu")}); err != nil {
		b.Fatal(err)
	}
	data := make([]byte, objSize)
	for i := range data {
		data[i] = byte(i*7 + i>>13)
	}
	sum := md5.Sum(data)
	contentMD5 := base64.StdEncoding.EncodeToString(sum[:])
	n := max(int(total/objSize), 1)
	put := func(key string, withMD5 bool) error {
		in := &s3.PutObjectInput{Bucket: aws.String("cpu"), Key: aws.String(key), Body: bytes.NewReader(data),
			ChecksumAlgorithm: types.ChecksumAlgorithmCrc64nvme}
		if withMD5 {
			in.ContentMD5 = aws.String(contentMD5)
		}
		_, err := cl.PutObject(ctx, in)
		return err
	}
	// Warm up pools and connections, and both PUT paths: the first
	// spooled body of a process also carries Content-MD5, until the store
	// has confirmed the CRC32C it is sent.
	for _, md5 := range []bool{true, false} {
		if err := put("warm", md5); err != nil {
			b.Fatal(err)
		}
	}

	b.ResetTimer()
	cpu := map[string]float64{}
	gib := float64(int64(n)*objSize) / (1 << 30)
	measure := func(name string, run func() error) {
		before := procCPU(b, p.PID())
		if err := run(); err != nil {
			b.Fatalf("%s: %v", name, err)
		}
		cpu[name] = (procCPU(b, p.PID()) - before) / gib
	}
	measure("PUT streamed", func() error {
		for i := range n {
			if err := put(fmt.Sprintf("s%d", i), true); err != nil {
				return err
			}
		}
		return nil
	})
	measure("PUT spooled", func() error {
		for i := range n {
			if err := put(fmt.Sprintf("p%d", i), false); err != nil {
				return err
			}
		}
		return nil
	})
	measure("multipart PUT", func() error {
		for i := range n {
			if err := uploadParts(ctx, cl, fmt.Sprintf("m%d", i), data, partSize); err != nil {
				return err
			}
		}
		return nil
	})
	measure("GET", func() error {
		for i := range n {
			out, err := cl.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String("cpu"), Key: aws.String(fmt.Sprintf("s%d", i))})
			if err != nil {
				return err
			}
			h := md5.New()
			_, err = io.Copy(h, out.Body)
			out.Body.Close()
			if err == nil && !bytes.Equal(h.Sum(nil), sum[:]) {
				err = fmt.Errorf("object s%d read back other bytes", i)
			}
			if err != nil {
				return err
			}
		}
		return nil
	})
	b.StopTimer()

	// The floor: one core's seconds per GiB of each pass.
	rate := map[string]float64{
		"MD5": hashSecPerGiB(md5.New()), "SHA-256": hashSecPerGiB(sha256.New()),
		"CRC64NVME": hashSecPerGiB(crc64nvme.New()), "CRC32C": hashSecPerGiB(crc32.New(crc32.MakeTable(crc32.Castagnoli))),
		"AES-256-GCM": gcmSecPerGiB(),
	}
	passes := map[string][]string{
		"PUT streamed":  {"MD5", "SHA-256", "CRC64NVME", "AES-256-GCM"},
		"PUT spooled":   {"MD5", "SHA-256", "CRC64NVME", "AES-256-GCM", "CRC32C"},
		"multipart PUT": {"MD5", "SHA-256", "CRC64NVME", "AES-256-GCM", "CRC32C"},
		"GET":           {"AES-256-GCM"},
	}
	fmt.Printf("one core, s/GiB:")
	for _, k := range []string{"MD5", "SHA-256", "CRC64NVME", "AES-256-GCM", "CRC32C"} {
		fmt.Printf(" %s %.3f", k, rate[k])
	}
	fmt.Printf("\n%-14s %12s %12s %8s  %s\n", "path", "s3seal s/GiB", "floor s/GiB", "ratio", "floor's passes")
	for _, path := range []string{"PUT streamed", "PUT spooled", "multipart PUT", "GET"} {
		floor := 0.0
		for _, h := range passes[path] {
			floor += rate[h]
		}
		fmt.Printf("%-14s %12.3f %12.3f %8.2f  %s\n", path, cpu[path], floor, cpu[path]/floor, strings.Join(passes[path], " + "))
		b.ReportMetric(cpu[path]/floor, strings.ReplaceAll(path, " ", "-")+"/floor")
	}
}

// procCPU is the CPU seconds (user and system) process pid has used.
func procCPU(t testing.TB, pid int) float64 {
	t.Helper()
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		t.Fatal(err)
	}
	// Fields after the command's closing parenthesis: state is field 3,
	// utime 14 and stime 15, in clock ticks (100 a second on Linux).
	f := strings.Fields(string(raw[bytes.LastIndexByte(raw, ')')+1:]))
	ut, _ := strconv.ParseFloat(f[11], 64)
	st, _ := strconv.ParseFloat(f[12], 64)
	return (ut + st) / 100
}

// hashSecPerGiB is h's one-core time per GiB, from 64 KiB writes.
func hashSecPerGiB(h hash.Hash) float64 {
	buf := make([]byte, 64<<10)
	return timedSecPerGiB(len(buf), func() { h.Write(buf) })
}

// gcmSecPerGiB is AES-256-GCM's one-core time per GiB, sealing 64 KiB
// segments in place as s3seal does.
func gcmSecPerGiB() float64 {
	blk, _ := aes.NewCipher(make([]byte, 32))
	aead, _ := cipher.NewGCM(blk)
	buf := make([]byte, 64<<10, 64<<10+16)
	nonce := make([]byte, 12)
	return timedSecPerGiB(len(buf), func() { aead.Seal(buf[:0], nonce, buf, nil) })
}

// timedSecPerGiB runs op, which handles n bytes, for half a second, and
// gives its seconds per GiB of its thread's CPU time (RUSAGE_THREAD), so
// that other processes on the machine do not slow the floor down:
// the best of three. (testing.Benchmark cannot run inside a benchmark.)
func timedSecPerGiB(n int, op func()) float64 {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	best := 0.0
	for range 3 {
		start, cpu0, runs := time.Now(), threadCPU(), 0
		for time.Since(start) < 500*time.Millisecond {
			for range 16 {
				op()
			}
			runs += 16
		}
		s := (threadCPU() - cpu0) / (float64(runs) * float64(n)) * (1 << 30)
		if best == 0 || s < best {
			best = s
		}
	}
	return best
}

// threadCPU is the calling thread's CPU seconds, user and system.
func threadCPU() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(1 /* RUSAGE_THREAD */, &ru); err != nil {
		panic(err)
	}
	return float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e9
}

// uploadParts uploads data as one multipart object in parts of partSize,
// sent one after another.
func uploadParts(ctx context.Context, cl *s3.Client, key string, data []byte, partSize int) error {
	cr, err := cl.CreateMultipartUpload(ctx, &s3.CreateMultipartUploadInput{Bucket: aws.String("cpu"), Key: aws.String(key)})
	if err != nil {
		return err
	}
	var parts []types.CompletedPart
	for i := 0; i*partSize < len(data); i++ {
		end := min((i+1)*partSize, len(data))
		out, err := cl.UploadPart(ctx, &s3.UploadPartInput{Bucket: aws.String("cpu"), Key: aws.String(key), UploadId: cr.UploadId,
			PartNumber: aws.Int32(int32(i + 1)), Body: bytes.NewReader(data[i*partSize : end])})
		if err != nil {
			return err
		}
		parts = append(parts, types.CompletedPart{PartNumber: aws.Int32(int32(i + 1)), ETag: out.ETag})
	}
	_, err = cl.CompleteMultipartUpload(ctx, &s3.CompleteMultipartUploadInput{Bucket: aws.String("cpu"), Key: aws.String(key),
		UploadId: cr.UploadId, MultipartUpload: &types.CompletedMultipartUpload{Parts: parts}})
	return err
}
