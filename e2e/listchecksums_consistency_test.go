package e2e

// Every listing's
// ChecksumAlgorithm/ChecksumType agrees with HEAD (checksum mode) after
// overwrites, copies onto the same key with another algorithm, deletes and
// re-creates, multipart completions (repeated), versions, and a second
// s3seal process writing behind the first one's cache.

import (
	"bytes"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
)

func headSums(t *testing.T, c *s3.Client, b, k, vid string) listedSum {
	t.Helper()
	in := &s3.HeadObjectInput{Bucket: aws.String(b), Key: aws.String(k), ChecksumMode: types.ChecksumModeEnabled}
	if vid != "" {
		in.VersionId = aws.String(vid)
	}
	h, err := c.HeadObject(ctxT(t), in)
	if err != nil {
		t.Fatalf("head %s %s: %v", k, vid, err)
	}
	var algs []string
	v := reflect.ValueOf(h).Elem()
	for i := range v.NumField() {
		n := v.Type().Field(i).Name
		if strings.HasPrefix(n, "Checksum") && n != "ChecksumType" {
			if s, ok := v.Field(i).Interface().(*string); ok && s != nil {
				algs = append(algs, strings.TrimPrefix(n, "Checksum"))
			}
		}
	}
	sort.Strings(algs)
	return listedSum{strings.Join(algs, ","), string(h.ChecksumType)}
}

func listV2Sums(t *testing.T, c *s3.Client, b string) map[string]listedSum {
	t.Helper()
	out, err := c.ListObjectsV2(ctxT(t), &s3.ListObjectsV2Input{Bucket: aws.String(b)})
	if err != nil {
		t.Fatal(err)
	}
	m := map[string]listedSum{}
	for _, o := range out.Contents {
		var algs []string
		for _, a := range o.ChecksumAlgorithm {
			algs = append(algs, string(a))
		}
		sort.Strings(algs)
		m[*o.Key] = listedSum{strings.Join(algs, ","), string(o.ChecksumType)}
	}
	v1, err := c.ListObjects(ctxT(t), &s3.ListObjectsInput{Bucket: aws.String(b)})
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range v1.Contents {
		var algs []string
		for _, a := range o.ChecksumAlgorithm {
			algs = append(algs, string(a))
		}
		sort.Strings(algs)
		if g := (listedSum{strings.Join(algs, ","), string(o.ChecksumType)}); g != m[*o.Key] {
			t.Errorf("%s: V1 lists %+v, V2 %+v", *o.Key, g, m[*o.Key])
		}
	}
	return m
}

func checkListAgrees(t *testing.T, what string, lister, header *s3.Client, b string) {
	t.Helper()
	for k, got := range listV2Sums(t, lister, b) {
		if want := headSums(t, header, b, k, ""); got != want {
			t.Errorf("%s: %s listed %+v, HEAD says %+v", what, k, got, want)
		}
	}
}

func TestListChecksumsStayCurrent(t *testing.T) {
	onEachStoreOpts(t, func(t *testing.T, o sealOpts) {
		const b = "listsum-current"
		_, c := startWithBucket(t, o, mustCreateBucket, b)
		ctx := ctxT(t)
		put := func(k string, alg types.ChecksumAlgorithm, body []byte) {
			t.Helper()
			if _, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String(b), Key: aws.String(k), Body: bytes.NewReader(body), ChecksumAlgorithm: alg}); err != nil {
				t.Fatal(err)
			}
		}
		body := patternBytes(9, 1000)
		put("over", types.ChecksumAlgorithmCrc32, body)
		put("copyself", types.ChecksumAlgorithmCrc32, body)
		put("del", types.ChecksumAlgorithmSha1, body)
		checkListAgrees(t, "initial", c, c, b)
		// overwrite, same body, another algorithm
		put("over", types.ChecksumAlgorithmSha256, body)
		// copy onto itself with another algorithm
		if _, err := c.CopyObject(ctx, &s3.CopyObjectInput{Bucket: aws.String(b), Key: aws.String("copyself"), CopySource: aws.String(b + "/copyself"),
			MetadataDirective: types.MetadataDirectiveReplace, ChecksumAlgorithm: types.ChecksumAlgorithmSha1}); err != nil {
			t.Fatal(err)
		}
		// delete and re-create
		if _, err := c.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: aws.String(b), Key: aws.String("del")}); err != nil {
			t.Fatal(err)
		}
		put("del", types.ChecksumAlgorithmCrc32c, body)
		// multipart without an algorithm, completed twice; then copied
		cr, err := c.CreateMultipartUpload(ctx, &s3.CreateMultipartUploadInput{Bucket: aws.String(b), Key: aws.String("mp")})
		if err != nil {
			t.Fatal(err)
		}
		var done []types.CompletedPart
		for i, d := range [][]byte{patternBytes(10, 5<<20), []byte("tail")} {
			up, err := c.UploadPart(ctx, &s3.UploadPartInput{Bucket: aws.String(b), Key: aws.String("mp"), UploadId: cr.UploadId,
				PartNumber: aws.Int32(int32(i + 1)), Body: bytes.NewReader(d), ChecksumAlgorithm: types.ChecksumAlgorithmCrc32})
			if err != nil {
				t.Fatal(err)
			}
			done = append(done, types.CompletedPart{PartNumber: aws.Int32(int32(i + 1)), ETag: up.ETag, ChecksumCRC32: up.ChecksumCRC32})
		}
		for range 2 {
			if _, err := c.CompleteMultipartUpload(ctx, &s3.CompleteMultipartUploadInput{Bucket: aws.String(b), Key: aws.String("mp"), UploadId: cr.UploadId,
				MultipartUpload: &types.CompletedMultipartUpload{Parts: done}}); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := c.CopyObject(ctx, &s3.CopyObjectInput{Bucket: aws.String(b), Key: aws.String("mpcopy"), CopySource: aws.String(b + "/mp")}); err != nil {
			t.Fatal(err)
		}
		checkListAgrees(t, "after changes", c, c, b)
		got := listV2Sums(t, c, b)
		for k, want := range map[string]listedSum{"over": {"SHA256", "FULL_OBJECT"}, "copyself": {"SHA1", "FULL_OBJECT"},
			"del": {"CRC32C", "FULL_OBJECT"}, "mp": {"CRC64NVME", "FULL_OBJECT"}} {
			if got[k] != want {
				t.Errorf("%s listed %+v, want %+v", k, got[k], want)
			}
		}
		t.Logf("listed: %+v", got)
	})
}

// Two s3seal processes on one moto: the first lists (filling its cache),
// the second overwrites with another algorithm, the first lists again.
func TestListChecksumsTwoProcesses(t *testing.T) {
	m := startMoto(t)
	key := randomKey(t)
	p1 := startS3seal(t, sealOpts{Backend: m, Key: key})
	p2 := startS3seal(t, sealOpts{Backend: m, Key: key})
	c1, c2 := sdkFor(t, p1), sdkFor(t, p2)
	const b = "listsum-two"
	mustCreateBucket(t, c1, b)
	body := patternBytes(11, 100)
	for _, alg := range []types.ChecksumAlgorithm{types.ChecksumAlgorithmCrc32, types.ChecksumAlgorithmSha256} {
		if _, err := c2.PutObject(ctxT(t), &s3.PutObjectInput{Bucket: aws.String(b), Key: aws.String("k"), Body: bytes.NewReader(body), ChecksumAlgorithm: alg}); err != nil {
			t.Fatal(err)
		}
		checkListAgrees(t, "p1 after p2 wrote "+string(alg), c1, c2, b)
	}
}

// Versions: each version lists its own algorithm.
func TestListVersionsChecksumsCurrent(t *testing.T) {
	onEachStoreOpts(t, func(t *testing.T, o sealOpts) {
		const b = "listsum-vers"
		_, c := startWithBucket(t, o, mustCreateVersionedBucket, b)
		body := patternBytes(12, 100)
		for _, alg := range []types.ChecksumAlgorithm{types.ChecksumAlgorithmCrc32, types.ChecksumAlgorithmSha256, types.ChecksumAlgorithmSha1} {
			if _, err := c.PutObject(ctxT(t), &s3.PutObjectInput{Bucket: aws.String(b), Key: aws.String("k"), Body: bytes.NewReader(body), ChecksumAlgorithm: alg}); err != nil {
				t.Fatal(err)
			}
		}
		out, err := c.ListObjectVersions(ctxT(t), &s3.ListObjectVersionsInput{Bucket: aws.String(b)})
		if err != nil {
			t.Fatal(err)
		}
		if len(out.Versions) != 3 {
			t.Fatalf("%d versions", len(out.Versions))
		}
		for _, v := range out.Versions {
			var algs []string
			for _, a := range v.ChecksumAlgorithm {
				algs = append(algs, string(a))
			}
			got := listedSum{strings.Join(algs, ","), string(v.ChecksumType)}
			if want := headSums(t, c, b, "k", *v.VersionId); got != want {
				t.Errorf("version %s listed %+v, HEAD says %+v", *v.VersionId, got, want)
			}
		}
		checkListAgrees(t, "versioned", c, c, b)
	})
}
