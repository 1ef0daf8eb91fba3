package e2e

import (
	"bufio"
	"context"
	"crypto/md5"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
)

const (
	bigObjectSize   = 2 << 30  // 2 GiB
	maxMemoryGrowth = 64 << 20 // allowed growth of s3seal's peak RSS
)

// patternReader is a seekable, deterministic pseudo-random stream of size
// bytes: block i (1 MiB) comes from ChaCha8 seeded with (seed, i), so any
// offset can be regenerated without holding the stream in memory.
type patternReader struct {
	size, off int64
	seed      uint64
	block     []byte
	blockIdx  int64
}

const patBlock = 1 << 20

func newPatternReader(seed uint64, size int64) *patternReader {
	return &patternReader{size: size, seed: seed, blockIdx: -1, block: make([]byte, patBlock)}
}

func (r *patternReader) Read(p []byte) (int, error) {
	if r.off >= r.size {
		return 0, io.EOF
	}
	bi := r.off / patBlock
	if bi != r.blockIdx {
		var s [32]byte
		for i := range 8 {
			s[i] = byte(r.seed >> (8 * i))
			s[8+i] = byte(bi >> (8 * i))
		}
		_, _ = rand.NewChaCha8(s).Read(r.block)
		r.blockIdx = bi
	}
	end := min(int64(patBlock), r.size-bi*patBlock)
	n := copy(p, r.block[r.off%patBlock:end])
	r.off += int64(n)
	return n, nil
}

func (r *patternReader) Seek(offset int64, whence int) (int64, error) {
	switch whence {
	case io.SeekStart:
	case io.SeekCurrent:
		offset += r.off
	case io.SeekEnd:
		offset += r.size
	default:
		return 0, errors.New("patternReader: bad whence")
	}
	if offset < 0 {
		return 0, errors.New("patternReader: negative offset")
	}
	r.off = offset
	return offset, nil
}

// procMemory returns VmRSS and VmHWM (peak RSS) of pid in bytes.
func procMemory(t testing.TB, pid int) (rss, hwm int64) {
	t.Helper()
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatalf("read process status: %v", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		name, val, ok := strings.Cut(sc.Text(), ":")
		if !ok || (name != "VmRSS" && name != "VmHWM") {
			continue
		}
		kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(val), " kB"), 10, 64)
		if err != nil {
			t.Fatalf("parse %s %q: %v", name, val, err)
		}
		if name == "VmRSS" {
			rss = kb << 10
		} else {
			hwm = kb << 10
		}
	}
	if rss == 0 || hwm == 0 {
		t.Fatalf("no VmRSS/VmHWM in /proc/%d/status", pid)
	}
	return rss, hwm
}

// TestMemoryBigObject streams a 2 GiB object through the s3seal process
// (embedded store: its files live on disk) and checks that s3seal's peak
// RSS grows by less than 64 MiB.
func TestMemoryBigObject(t *testing.T) {
	if testing.Short() {
		t.Skip("2 GiB streaming test skipped with -short")
	}
	p, c := startWithBucket(t, sealOpts{}, mustCreateBucket, "big")
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()

	// Warm up buffers and pools with a 16 MiB object first.
	warm := newPatternReader(1, 16<<20)
	if _, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("big"), Key: aws.String("warm"), Body: warm, ContentLength: aws.Int64(16 << 20)}); err != nil {
		t.Fatalf("warm-up PUT: %v", err)
	}
	rssBefore, hwmBefore := procMemory(t, p.PID())
	t.Logf("before: VmRSS %d MiB, VmHWM %d MiB", rssBefore>>20, hwmBefore>>20)

	wantMD5 := make(chan string, 1)
	go func() {
		h := md5.New()
		_, _ = io.Copy(h, newPatternReader(2, bigObjectSize))
		wantMD5 <- hex.EncodeToString(h.Sum(nil))
	}()

	start := time.Now()
	put, err := c.PutObject(ctx, &s3.PutObjectInput{
		Bucket: aws.String("big"), Key: aws.String("2g"),
		Body: newPatternReader(2, bigObjectSize), ContentLength: aws.Int64(bigObjectSize),
	})
	if err != nil {
		t.Fatalf("PUT 2 GiB: %v", err)
	}
	putTime := time.Since(start)
	rssPut, hwmPut := procMemory(t, p.PID())
	t.Logf("after PUT (%v): VmRSS %d MiB, VmHWM %d MiB", putTime.Round(time.Millisecond), rssPut>>20, hwmPut>>20)
	want := <-wantMD5
	if unquote(put.ETag) != want {
		t.Errorf("PUT ETag %s, want MD5 %s", unquote(put.ETag), want)
	}

	start = time.Now()
	get, err := c.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String("big"), Key: aws.String("2g")})
	if err != nil {
		t.Fatalf("GET 2 GiB: %v", err)
	}
	h := md5.New()
	n, err := io.Copy(h, get.Body)
	get.Body.Close()
	if err != nil {
		t.Fatalf("GET 2 GiB body after %d bytes: %v", n, err)
	}
	rssGet, hwmGet := procMemory(t, p.PID())
	t.Logf("after GET (%v): VmRSS %d MiB, VmHWM %d MiB", time.Since(start).Round(time.Millisecond), rssGet>>20, hwmGet>>20)

	if n != bigObjectSize || hex.EncodeToString(h.Sum(nil)) != want {
		t.Errorf("GET returned %d bytes with MD5 %x, want %d bytes MD5 %s", n, h.Sum(nil), int64(bigObjectSize), want)
	}
	if unquote(get.ETag) != want || aws.ToInt64(get.ContentLength) != bigObjectSize {
		t.Errorf("GET ETag %s Content-Length %d", unquote(get.ETag), aws.ToInt64(get.ContentLength))
	}
	if growth := hwmGet - rssBefore; growth > maxMemoryGrowth {
		t.Errorf("s3seal peak RSS grew by %d MiB (VmRSS before %d MiB, VmHWM after PUT %d MiB, after GET %d MiB), limit %d MiB",
			growth>>20, rssBefore>>20, hwmPut>>20, hwmGet>>20, maxMemoryGrowth>>20)
	}
}
