package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
)

// listCacheLookups is the count of listing cache lookups /metrics gives
// for result (hit or miss).
func listCacheLookups(t *testing.T, p *sealProc, result string) int {
	t.Helper()
	code, body := httpGet(t, p.Endpoint+"/metrics")
	if code != 200 {
		t.Fatalf("/metrics: %d", code)
	}
	m := regexp.MustCompile(`(?m)^s3seal_list_cache_lookups_total\{result="` + result + `"\} (\d+)$`).FindStringSubmatch(body)
	if m == nil {
		return 0
	}
	n, _ := strconv.Atoi(m[1])
	return n
}

// TestListAfterRestartFromSavedCache: serve saves its listing cache in the
// data dir when it stops (SIGTERM), and the next serve on that data dir
// lists what the first one wrote from it: every listed object a hit, none
// resolved by a HEAD. The file holds no key or ETag in the clear.
func TestListAfterRestartFromSavedCache(t *testing.T) {
	t.Parallel()
	p, c := startWithBucket(t, sealOpts{}, mustCreateBucket, "restart")
	ctx := ctxT(t)
	const n = 40
	etags := map[string]string{}
	for i := range n {
		key := fmt.Sprintf("obj/%02d", i)
		out, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("restart"), Key: aws.String(key),
			Body: strings.NewReader(strings.Repeat("y", i))})
		if err != nil {
			t.Fatal(err)
		}
		etags[key] = aws.ToString(out.ETag)
	}
	p.Stop()
	raw, err := os.ReadFile(filepath.Join(p.DataDir, "list-cache"))
	if err != nil {
		t.Fatalf("no listing cache saved at shutdown: %v", err)
	}
	if strings.Contains(string(raw), "obj/07") || strings.Contains(string(raw), strings.Trim(etags["obj/07"], `"`)) {
		t.Error("the saved listing cache shows a key or an ETag in the clear")
	}

	again := startS3seal(t, sealOpts{DataDir: p.DataDir})
	out, err := sdkFor(t, again).ListObjectsV2(ctx, &s3.ListObjectsV2Input{Bucket: aws.String("restart")})
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Contents) != n {
		t.Fatalf("listed %d objects, want %d", len(out.Contents), n)
	}
	for i, o := range out.Contents {
		if aws.ToString(o.ETag) != etags[aws.ToString(o.Key)] || aws.ToInt64(o.Size) != int64(i) {
			t.Errorf("%s listed with ETag %s and %d bytes; PUT answered %s, %d bytes", aws.ToString(o.Key), aws.ToString(o.ETag), aws.ToInt64(o.Size), etags[aws.ToString(o.Key)], i)
		}
	}
	if hits, misses := listCacheLookups(t, again, "hit"), listCacheLookups(t, again, "miss"); hits != n || misses != 0 {
		t.Errorf("the listing after the restart: %d cache hits and %d misses, want %d and none", hits, misses, n)
	}
}
