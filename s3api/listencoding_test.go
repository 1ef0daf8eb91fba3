package s3api

import (
	"reflect"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
)

func TestS3URLEncode(t *testing.T) {
	for in, want := range map[string]string{
		"foo/":         "foo/",
		"quux ab/thud": "quux%20ab/thud",
		"foo+1/bar":    "foo%2B1/bar",
		"a~b_c-d.e":    "a~b_c-d.e",
		"é&=?*":        "%C3%A9%26%3D%3F%2A",
	} {
		if got := s3URLEncode(in); got != want {
			t.Errorf("s3URLEncode(%q) = %q, want %q", in, got, want)
		}
	}
}

// As s3-tests test_bucket_list_encoding_basic and its V2 twin: '/' stays,
// ' ' and '+' are percent-encoded, in every element S3 encodes.
func TestListEncodingURL(t *testing.T) {
	_, ctx, c := newBucketServer(t, adminCreds())
	b := aws.String("bkt")
	for _, k := range []string{"foo+1/bar", "foo/bar/xyzzy", "quux ab/thud", "asdf+b", "foo/x y"} {
		if _, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: b, Key: aws.String(k), Body: strings.NewReader("x")}); err != nil {
			t.Fatal(err)
		}
	}
	prefixes := func(cps []types.CommonPrefix) (out []string) {
		for _, p := range cps {
			out = append(out, aws.ToString(p.Prefix))
		}
		return out
	}
	v2, err := c.ListObjectsV2(ctx, &s3.ListObjectsV2Input{Bucket: b, Delimiter: aws.String("/"), EncodingType: types.EncodingTypeUrl})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := prefixes(v2.CommonPrefixes), []string{"foo%2B1/", "foo/", "quux%20ab/"}; !reflect.DeepEqual(got, want) {
		t.Errorf("V2 common prefixes %q, want %q", got, want)
	}
	if len(v2.Contents) != 1 || aws.ToString(v2.Contents[0].Key) != "asdf%2Bb" || aws.ToString(v2.Delimiter) != "/" {
		t.Errorf("V2 contents %v delimiter %q", v2.Contents, aws.ToString(v2.Delimiter))
	}
	v2, err = c.ListObjectsV2(ctx, &s3.ListObjectsV2Input{Bucket: b, Prefix: aws.String("foo/"), StartAfter: aws.String("foo/bar/z z"),
		EncodingType: types.EncodingTypeUrl})
	if err != nil {
		t.Fatal(err)
	}
	if aws.ToString(v2.Prefix) != "foo/" || aws.ToString(v2.StartAfter) != "foo/bar/z%20z" ||
		len(v2.Contents) != 1 || aws.ToString(v2.Contents[0].Key) != "foo/x%20y" {
		t.Errorf("V2 prefix %q start-after %q contents %v", aws.ToString(v2.Prefix), aws.ToString(v2.StartAfter), v2.Contents)
	}
	v1, err := c.ListObjects(ctx, &s3.ListObjectsInput{Bucket: b, Prefix: aws.String("foo/"), Marker: aws.String("foo/a b"),
		MaxKeys: aws.Int32(1), EncodingType: types.EncodingTypeUrl})
	if err != nil {
		t.Fatal(err)
	}
	if aws.ToString(v1.Prefix) != "foo/" || aws.ToString(v1.Marker) != "foo/a%20b" || aws.ToString(v1.NextMarker) != "foo/bar/xyzzy" ||
		len(v1.Contents) != 1 || aws.ToString(v1.Contents[0].Key) != "foo/bar/xyzzy" {
		t.Errorf("V1 prefix %q marker %q next %q contents %v", aws.ToString(v1.Prefix), aws.ToString(v1.Marker), aws.ToString(v1.NextMarker), v1.Contents)
	}
	if _, err := c.CreateMultipartUpload(ctx, &s3.CreateMultipartUploadInput{Bucket: b, Key: aws.String("up load/k+1")}); err != nil {
		t.Fatal(err)
	}
	mu, err := c.ListMultipartUploads(ctx, &s3.ListMultipartUploadsInput{Bucket: b, Prefix: aws.String("up load/"), EncodingType: types.EncodingTypeUrl})
	if err != nil {
		t.Fatal(err)
	}
	if aws.ToString(mu.Prefix) != "up%20load/" || mu.EncodingType != types.EncodingTypeUrl || len(mu.Uploads) != 1 ||
		aws.ToString(mu.Uploads[0].Key) != "up%20load/k%2B1" {
		t.Errorf("uploads prefix %q encoding %q uploads %v", aws.ToString(mu.Prefix), mu.EncodingType, mu.Uploads)
	}
}

// As s3-tests test_bucket_list_prefix_unreadable: V1's Prefix comes back
// as sent even with encoding-type=url (botocore, which asks for url
// encoding on every V1 listing, does not decode it), while V2 encodes it.
func TestListV1PrefixNotEncoded(t *testing.T) {
	_, ctx, c := newBucketServer(t, adminCreds())
	b := aws.String("bkt")
	for _, p := range []string{"\n", "a b/"} {
		v1, err := c.ListObjects(ctx, &s3.ListObjectsInput{Bucket: b, Prefix: aws.String(p), EncodingType: types.EncodingTypeUrl})
		if err != nil {
			t.Fatal(err)
		}
		if aws.ToString(v1.Prefix) != p || len(v1.Contents) != 0 {
			t.Errorf("V1 prefix %q came back as %q", p, aws.ToString(v1.Prefix))
		}
	}
	v2, err := c.ListObjectsV2(ctx, &s3.ListObjectsV2Input{Bucket: b, Prefix: aws.String("a b/"), EncodingType: types.EncodingTypeUrl})
	if err != nil || aws.ToString(v2.Prefix) != "a%20b/" {
		t.Errorf("V2 prefix %q, %v, want a%%20b/", aws.ToString(v2.Prefix), err)
	}
}
