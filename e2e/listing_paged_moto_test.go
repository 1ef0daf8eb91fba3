package e2e

import (
	"fmt"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
)

// trickyListKeys are keys whose byte order differs from a naive path walk:
// siblings around '/' (0x2f) such as "a-b", "a.b", "a/", "a0"; bytes below
// '/' ('!', ' ', '-', '.'), unicode, markers ending in '/', a marker beside
// keys under it, percent and plus signs, a long segment, and a key like
// s3seal's own prefix. None is refused by the embedded store (no empty,
// "." or ".." segment, no object that is also a prefix of other keys).
var trickyListKeys = []string{
	"!", "! x", " lead", "-", "-x/y", ".b", ".a", ".s3seal0", ".s3sealx/y",
	"a!", "a b", "a-", "a--/b", "a-b", "a.b", "a.bc/d", "a/", "a/!", "a/ b", "a/-",
	"a/--/c", "a/.x", "a/b", "a/b-", "a/b.c", "a/b0", "a/bb/", "a/bb/c", "a/bb/cc/d",
	"a/bb/c0", "a0", "a1/x", "ab", "abab", "abc/ab", "b/", "b/c", "b/d/", "c%20d",
	"c+d", "c%2F", "é", "éé/ü", "éa", "日本/語", "z~", strings.Repeat("L", 200) + "/x",
}

// listedAll pages a listing to its end as a client does (V1: NextMarker,
// else the last key; V2: the continuation token) and returns every key and
// common prefix in the order given, "P:" before prefixes.
func listedAll(t *testing.T, c *s3.Client, bucket, prefix, delim, start string, maxKeys int32, v2 bool) ([]string, error) {
	t.Helper()
	ctx := ctxT(t)
	var out []string
	marker, token := start, ""
	for pages := 0; pages < 500; pages++ {
		var items []string
		var truncated bool
		var next string
		if v2 {
			in := &s3.ListObjectsV2Input{Bucket: aws.String(bucket), MaxKeys: aws.Int32(maxKeys)}
			if prefix != "" {
				in.Prefix = aws.String(prefix)
			}
			if delim != "" {
				in.Delimiter = aws.String(delim)
			}
			if token != "" {
				in.ContinuationToken = aws.String(token)
			} else if start != "" {
				in.StartAfter = aws.String(start)
			}
			res, err := c.ListObjectsV2(ctx, in)
			if err != nil {
				return out, err
			}
			items = mergeListed(res.Contents, res.CommonPrefixes)
			if int32(len(items)) != aws.ToInt32(res.KeyCount) {
				return out, fmt.Errorf("KeyCount %d, items %d", aws.ToInt32(res.KeyCount), len(items))
			}
			truncated, next = aws.ToBool(res.IsTruncated), aws.ToString(res.NextContinuationToken)
			if truncated && next == "" {
				return out, fmt.Errorf("V2 page truncated without a continuation token")
			}
			token = next
		} else {
			in := &s3.ListObjectsInput{Bucket: aws.String(bucket), MaxKeys: aws.Int32(maxKeys)}
			if prefix != "" {
				in.Prefix = aws.String(prefix)
			}
			if delim != "" {
				in.Delimiter = aws.String(delim)
			}
			if marker != "" {
				in.Marker = aws.String(marker)
			}
			res, err := c.ListObjects(ctx, in)
			if err != nil {
				return out, err
			}
			items = mergeListed(res.Contents, res.CommonPrefixes)
			truncated = aws.ToBool(res.IsTruncated)
			next = aws.ToString(res.NextMarker)
			if next == "" && len(items) > 0 {
				next = strings.TrimPrefix(items[len(items)-1], "P:")
			}
			if truncated && next == "" {
				return out, fmt.Errorf("V1 page truncated with nothing to continue from")
			}
			marker = next
		}
		out = append(out, items...)
		if !truncated || maxKeys == 0 {
			return out, nil
		}
	}
	return out, fmt.Errorf("listing does not end")
}

// mergeListed is a page's keys and prefixes in S3's order.
func mergeListed(objs []types.Object, cps []types.CommonPrefix) []string {
	var items []string
	for _, o := range objs {
		items = append(items, aws.ToString(o.Key))
	}
	for _, p := range cps {
		items = append(items, "P:"+aws.ToString(p.Prefix))
	}
	slices.SortStableFunc(items, func(a, b string) int {
		return strings.Compare(strings.TrimPrefix(a, "P:"), strings.TrimPrefix(b, "P:"))
	})
	return items
}

// listAllModel is S3's whole listing of keys, brute force: keys after
// start under prefix, rolled up at the first delimiter after the prefix;
// a common prefix at or before start is not listed (as S3 and Ceph skip
// the prefix holding the marker).
func listAllModel(keys []string, prefix, delim, start string) []string {
	keys = slices.Sorted(slices.Values(keys))
	var out []string
	for _, k := range keys {
		if k <= start || !strings.HasPrefix(k, prefix) {
			continue
		}
		if delim != "" {
			if i := strings.Index(k[len(prefix):], delim); i >= 0 {
				cp := k[:len(prefix)+i+len(delim)]
				if cp <= start || (len(out) > 0 && out[len(out)-1] == "P:"+cp) {
					continue
				}
				out = append(out, "P:"+cp)
				continue
			}
		}
		out = append(out, k)
	}
	return out
}

// TestListingPagedEmbeddedMatchesMoto lists tricky keys through s3seal on
// its embedded store and on moto, V1 and V2 page by page, over prefixes
// ending mid-segment, delimiters other than "/" (multi-byte, appearing in
// the prefix), start markers that are not keys or lie inside a common
// prefix, and max-keys 1, 2 and 1000: every whole listing must equal the
// brute-force model on the embedded store, and moto's, listed in pages
// of 1000 (moto's small pages cost a minute more), must equal it.
func TestListingPagedEmbeddedMatchesMoto(t *testing.T) {
	t.Parallel()
	emb := sdkFor(t, startS3seal(t, sealOpts{}))
	moto := sdkFor(t, startS3seal(t, sealOpts{Backend: startMoto(t)}))
	const bucket = "tricky"
	for _, c := range []*s3.Client{emb, moto} {
		mustCreateBucket(t, c, bucket)
		for _, k := range trickyListKeys {
			putObj(t, c, bucket, k, []byte(k))
		}
	}
	prefixes := []string{"", "a", "a/", "a/b", "a-", "é", ".s3", "L"}
	delims := []string{"", "/", "-", "b", "ab", "/b", "é"}
	starts := []string{"", "a", "a/", "a/b", "a/ba", "a/bb/c", "a-a", "a0", ".s3seal/", "zz"}
	motoDiffers := 0
	for _, prefix := range prefixes {
		for _, delim := range delims {
			for _, start := range starts {
				want := listAllModel(trickyListKeys, prefix, delim, start)
				for _, mk := range []int32{1, 2, 1000} {
					for _, v2 := range []bool{false, true} {
						name := fmt.Sprintf("prefix %q delimiter %q start %q max-keys %d v2 %v", prefix, delim, start, mk, v2)
						got, err := listedAll(t, emb, bucket, prefix, delim, start, mk, v2)
						if err != nil || !slices.Equal(got, want) {
							t.Errorf("embedded %s: %v\ngot  %q\nwant %q", name, err, got, want)
						}
						if mk != 1000 {
							continue // moto is slow: a page of 1000 compares what it lists, the embedded store's pages are checked against the model
						}
						mgot, err := listedAll(t, moto, bucket, prefix, delim, start, mk, v2)
						if err != nil || !slices.Equal(mgot, got) {
							motoDiffers++
							if motoDiffers <= 20 {
								t.Errorf("moto differs, %s: %v\nmoto     %q\nembedded %q\nmodel    %q", name, err, mgot, got, want)
							}
						}
					}
				}
			}
		}
	}
	if motoDiffers > 0 {
		t.Errorf("%d listings where moto differs from the embedded store", motoDiffers)
	}
}

// TestListingMaxKeysZeroEmbeddedMatchesMoto: max-keys 0 (V1 and V2, with
// and without a delimiter) answers as moto does through s3seal.
func TestListingMaxKeysZeroEmbeddedMatchesMoto(t *testing.T) {
	t.Parallel()
	emb := sdkFor(t, startS3seal(t, sealOpts{}))
	moto := sdkFor(t, startS3seal(t, sealOpts{Backend: startMoto(t)}))
	const bucket = "zero"
	for _, c := range []*s3.Client{emb, moto} {
		mustCreateBucket(t, c, bucket)
		for _, k := range []string{"a", "b/c", "d"} {
			putObj(t, c, bucket, k, []byte(k))
		}
	}
	ctx := ctxT(t)
	for _, delim := range []string{"", "/"} {
		var answers [2]string
		for i, c := range []*s3.Client{emb, moto} {
			v1, err := c.ListObjects(ctx, &s3.ListObjectsInput{Bucket: aws.String(bucket), MaxKeys: aws.Int32(0), Delimiter: optStr(delim)})
			if err != nil {
				t.Fatal(err)
			}
			v2, err := c.ListObjectsV2(ctx, &s3.ListObjectsV2Input{Bucket: aws.String(bucket), MaxKeys: aws.Int32(0), Delimiter: optStr(delim)})
			if err != nil {
				t.Fatal(err)
			}
			answers[i] = fmt.Sprintf("V1 %d items truncated %v next %q; V2 %d items keycount %d truncated %v token %v",
				len(v1.Contents)+len(v1.CommonPrefixes), aws.ToBool(v1.IsTruncated), aws.ToString(v1.NextMarker),
				len(v2.Contents)+len(v2.CommonPrefixes), aws.ToInt32(v2.KeyCount), aws.ToBool(v2.IsTruncated), v2.NextContinuationToken != nil)
		}
		if answers[0] != answers[1] {
			t.Errorf("delimiter %q, max-keys 0:\nembedded %s\nmoto     %s", delim, answers[0], answers[1])
		}
	}
}

func optStr(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// listedVersions pages ListObjectVersions to its end (NextKeyMarker,
// NextVersionIdMarker) and returns each version as key, latest and
// delete-marker flags and size ("P:" before common prefixes), version ids
// left out (each store draws its own).
func listedVersions(t *testing.T, c *s3.Client, bucket, prefix, delim string, maxKeys int32) ([]string, error) {
	t.Helper()
	ctx := ctxT(t)
	var out []string
	var km, vm *string
	for pages := 0; pages < 500; pages++ {
		in := &s3.ListObjectVersionsInput{Bucket: aws.String(bucket), MaxKeys: aws.Int32(maxKeys), KeyMarker: km, VersionIdMarker: vm}
		if prefix != "" {
			in.Prefix = aws.String(prefix)
		}
		if delim != "" {
			in.Delimiter = aws.String(delim)
		}
		res, err := c.ListObjectVersions(ctx, in)
		if err != nil {
			return out, err
		}
		type item struct {
			key, s string
			seq    int
		}
		var items []item
		for i, v := range res.Versions {
			items = append(items, item{aws.ToString(v.Key), fmt.Sprintf("%s latest=%v size=%d", aws.ToString(v.Key), aws.ToBool(v.IsLatest), aws.ToInt64(v.Size)), i})
		}
		for i, d := range res.DeleteMarkers {
			items = append(items, item{aws.ToString(d.Key), fmt.Sprintf("%s latest=%v marker", aws.ToString(d.Key), aws.ToBool(d.IsLatest)), 1000 + i})
		}
		for _, p := range res.CommonPrefixes {
			items = append(items, item{aws.ToString(p.Prefix), "P:" + aws.ToString(p.Prefix), 0})
		}
		// Within a key, newest first: versions and markers are given apart,
		// so order by the sequence the store gave only where it is known
		// (tests put each key's versions and markers so that all markers
		// are newest).
		slices.SortStableFunc(items, func(a, b item) int { return strings.Compare(a.key, b.key) })
		for _, it := range items {
			out = append(out, it.s)
		}
		if !aws.ToBool(res.IsTruncated) {
			return out, nil
		}
		km, vm = res.NextKeyMarker, res.NextVersionIdMarker
		if aws.ToString(km) == "" {
			return out, fmt.Errorf("truncated without NextKeyMarker")
		}
	}
	return out, fmt.Errorf("listing does not end")
}

// TestListObjectVersionsPagedEmbeddedMatchesMoto: versions of tricky keys
// (two versions each, some deleted: a delete marker newest) listed page
// by page through s3seal on the embedded store (which reads all versions
// under the prefix for each page) and on moto agree, with and without
// delimiters and prefixes, at max-keys 1, 3 and 1000.
func TestListObjectVersionsPagedEmbeddedMatchesMoto(t *testing.T) {
	t.Parallel()
	emb := sdkFor(t, startS3seal(t, sealOpts{}))
	moto := sdkFor(t, startS3seal(t, sealOpts{Backend: startMoto(t)}))
	const bucket = "trickyv"
	keys := []string{"!", "a!", "a b", "a-", "a-b", "a.b", "a/", "a/!", "a/b", "a/b-", "a/bb/c", "a0", "ab", "b/c", "é", "éé/ü"}
	for _, c := range []*s3.Client{emb, moto} {
		mustCreateVersionedBucket(t, c, bucket)
		for i, k := range keys {
			putObj(t, c, bucket, k, []byte(k))
			putObj(t, c, bucket, k, []byte(k+k))
			if i%3 == 0 {
				if _, err := c.DeleteObject(ctxT(t), &s3.DeleteObjectInput{Bucket: aws.String(bucket), Key: aws.String(k)}); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	for _, prefix := range []string{"", "a", "a/"} {
		for _, delim := range []string{"", "/", "-"} {
			for _, mk := range []int32{1, 3, 1000} {
				name := fmt.Sprintf("prefix %q delimiter %q max-keys %d", prefix, delim, mk)
				got, err := listedVersions(t, emb, bucket, prefix, delim, mk)
				if err != nil {
					t.Errorf("embedded %s: %v", name, err)
					continue
				}
				mgot, err := listedVersions(t, moto, bucket, prefix, delim, mk)
				if err != nil || !slices.Equal(got, mgot) {
					t.Errorf("%s: %v\nembedded %q\nmoto     %q", name, err, got, mgot)
				}
			}
		}
	}
}

// TestListingURLEncodedWithOwnerEmbeddedMatchesMoto: V2 with
// encoding-type=url and fetch-owner, and V1 with encoding-type=url, over
// keys needing encoding, page by page: the encoded keys, prefixes,
// markers and tokens' effect, and whether owners are given, agree with
// s3seal on moto.
func TestListingURLEncodedWithOwnerEmbeddedMatchesMoto(t *testing.T) {
	t.Parallel()
	emb := sdkFor(t, startS3seal(t, sealOpts{}))
	moto := sdkFor(t, startS3seal(t, sealOpts{Backend: startMoto(t)}))
	const bucket = "enc"
	keys := []string{"a b/c", "a+b", "a%2Fb", "a&b=c?", "é/ü", "x\ty", "~/!*'()", "c%20d/"}
	for _, c := range []*s3.Client{emb, moto} {
		mustCreateBucket(t, c, bucket)
		for _, k := range keys {
			putObj(t, c, bucket, k, []byte(k))
		}
	}
	ctx := ctxT(t)
	run := func(c *s3.Client, delim string, mk int32, v2 bool) (string, error) {
		var sb strings.Builder
		var token, marker *string
		for pages := 0; pages < 50; pages++ {
			if v2 {
				res, err := c.ListObjectsV2(ctx, &s3.ListObjectsV2Input{Bucket: aws.String(bucket), EncodingType: types.EncodingTypeUrl,
					FetchOwner: aws.Bool(true), MaxKeys: aws.Int32(mk), Delimiter: optStr(delim), ContinuationToken: token})
				if err != nil {
					return "", err
				}
				fmt.Fprintf(&sb, "enc=%s ", res.EncodingType)
				for _, o := range res.Contents {
					fmt.Fprintf(&sb, "%s owner=%v|", aws.ToString(o.Key), o.Owner != nil)
				}
				for _, p := range res.CommonPrefixes {
					fmt.Fprintf(&sb, "P:%s|", aws.ToString(p.Prefix))
				}
				if !aws.ToBool(res.IsTruncated) {
					return sb.String(), nil
				}
				token = res.NextContinuationToken
			} else {
				res, err := c.ListObjects(ctx, &s3.ListObjectsInput{Bucket: aws.String(bucket), EncodingType: types.EncodingTypeUrl,
					MaxKeys: aws.Int32(mk), Delimiter: optStr(delim), Marker: marker})
				if err != nil {
					return "", err
				}
				fmt.Fprintf(&sb, "enc=%s next=%s ", res.EncodingType, aws.ToString(res.NextMarker))
				last := ""
				for _, o := range res.Contents {
					fmt.Fprintf(&sb, "%s|", aws.ToString(o.Key))
					last = aws.ToString(o.Key)
				}
				for _, p := range res.CommonPrefixes {
					fmt.Fprintf(&sb, "P:%s|", aws.ToString(p.Prefix))
					if aws.ToString(p.Prefix) > last {
						last = aws.ToString(p.Prefix)
					}
				}
				if !aws.ToBool(res.IsTruncated) {
					return sb.String(), nil
				}
				next := aws.ToString(res.NextMarker)
				if next == "" {
					next = last
				}
				// The marker is sent as the key, decoded.
				dec, err := url.QueryUnescape(next)
				if err != nil {
					return "", err
				}
				marker = &dec
			}
		}
		return sb.String(), fmt.Errorf("does not end")
	}
	for _, delim := range []string{"", "/", " "} {
		for _, mk := range []int32{1, 3, 1000} {
			for _, v2 := range []bool{false, true} {
				a, err := run(emb, delim, mk, v2)
				if err != nil {
					t.Fatalf("embedded: %v", err)
				}
				b, err := run(moto, delim, mk, v2)
				if err != nil {
					t.Fatalf("moto: %v", err)
				}
				if a != b {
					t.Errorf("delimiter %q max-keys %d v2 %v:\nembedded %s\nmoto     %s", delim, mk, v2, a, b)
				}
			}
		}
	}
}
