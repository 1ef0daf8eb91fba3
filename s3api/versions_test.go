package s3api

import (
	"crypto/md5"
	"encoding/xml"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
)

// Conditional deletes are decided on the plaintext ETag and size; a
// failed condition deletes nothing.
func TestConditionalDelete(t *testing.T) {
	_, ctx, c := newBucketServer(t, SingleCredential("ak", "sk"))
	for _, k := range []string{"a", "b", "c", "d"} {
		if err := put(ctx, c, "bkt", k); err != nil {
			t.Fatal(err)
		}
	}
	etag := fmt.Sprintf(`"%x"`, md5.Sum([]byte("data")))
	del := func(k string, f func(*s3.DeleteObjectInput)) error {
		in := &s3.DeleteObjectInput{Bucket: aws.String("bkt"), Key: aws.String(k)}
		f(in)
		_, err := c.DeleteObject(ctx, in)
		return err
	}
	for name, f := range map[string]func(*s3.DeleteObjectInput){
		"if-match":      func(in *s3.DeleteObjectInput) { in.IfMatch = aws.String(`"0123"`) },
		"size":          func(in *s3.DeleteObjectInput) { in.IfMatchSize = aws.Int64(5) },
		"ciphertext":    func(in *s3.DeleteObjectInput) { in.IfMatchSize = aws.Int64(4 + 16 + 32) },
		"etag and size": func(in *s3.DeleteObjectInput) { in.IfMatch = aws.String(etag); in.IfMatchSize = aws.Int64(3) },
	} {
		if err := del("a", f); apiCode(err) != "PreconditionFailed" || httpStatus(err) != http.StatusPreconditionFailed {
			t.Errorf("%s: %v, want 412 PreconditionFailed", name, err)
		}
	}
	if got := readObject(t, c, "bkt", "a"); got != "data" {
		t.Fatalf("after failed conditions: %q", got)
	}
	if err := del("a", func(in *s3.DeleteObjectInput) { in.IfMatch = aws.String(etag); in.IfMatchSize = aws.Int64(4) }); err != nil {
		t.Fatalf("matching delete: %v", err)
	}
	if err := get(ctx, c, "bkt", "a"); apiCode(err) != "NoSuchKey" {
		t.Fatalf("after matching delete: %v", err)
	}
	if err := del("a", func(in *s3.DeleteObjectInput) { in.IfMatch = aws.String(etag) }); apiCode(err) != "NoSuchKey" {
		t.Fatalf("if-match on a missing key: %v, want NoSuchKey", err)
	}
	if err := del("b", func(in *s3.DeleteObjectInput) { in.IfMatch = aws.String("*") }); err != nil {
		t.Fatalf("if-match *: %v", err)
	}

	// DeleteObjects: each entry's condition on its own.
	out, err := c.DeleteObjects(ctx, &s3.DeleteObjectsInput{Bucket: aws.String("bkt"), Delete: &types.Delete{Objects: []types.ObjectIdentifier{
		{Key: aws.String("c"), ETag: aws.String(`"0123"`)},
		{Key: aws.String("d"), ETag: aws.String(etag), Size: aws.Int64(4)},
	}}})
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Errors) != 1 || aws.ToString(out.Errors[0].Key) != "c" || aws.ToString(out.Errors[0].Code) != "PreconditionFailed" {
		t.Fatalf("errors = %+v", out.Errors)
	}
	if len(out.Deleted) != 1 || aws.ToString(out.Deleted[0].Key) != "d" {
		t.Fatalf("deleted = %+v", out.Deleted)
	}
	if got := readObject(t, c, "bkt", "c"); got != "data" {
		t.Fatalf("c after failed condition: %q", got)
	}
	if err := get(ctx, c, "bkt", "d"); apiCode(err) != "NoSuchKey" {
		t.Fatalf("d after matching delete: %v", err)
	}
}

// On the embedded store a bucket never versioned answers as S3's does
// (version "null"); once versioning is enabled, writes make versions that
// s3seal reads, lists and deletes by id.
func TestVersionsOnEmbeddedStore(t *testing.T) {
	_, ctx, c := newBucketServer(t, SingleCredential("ak", "sk"))
	for _, k := range []string{"a", "dir/b"} {
		if err := put(ctx, c, "bkt", k); err != nil {
			t.Fatal(err)
		}
	}
	gv, err := c.GetBucketVersioning(ctx, &s3.GetBucketVersioningInput{Bucket: aws.String("bkt")})
	if err != nil || gv.Status != "" {
		t.Fatalf("GetBucketVersioning = %v, %v; want no status", gv, err)
	}
	lv, err := c.ListObjectVersions(ctx, &s3.ListObjectVersionsInput{Bucket: aws.String("bkt")})
	if err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf(`"%x"`, md5.Sum([]byte("data")))
	if len(lv.Versions) != 2 || len(lv.DeleteMarkers) != 0 {
		t.Fatalf("versions = %+v", lv.Versions)
	}
	for _, v := range lv.Versions {
		if aws.ToString(v.VersionId) != "null" || !aws.ToBool(v.IsLatest) || aws.ToInt64(v.Size) != 4 || aws.ToString(v.ETag) != want {
			t.Errorf("version %s: id %s latest %v size %d etag %s", aws.ToString(v.Key), aws.ToString(v.VersionId),
				aws.ToBool(v.IsLatest), aws.ToInt64(v.Size), aws.ToString(v.ETag))
		}
	}
	// Paging by key marker, and a delimiter.
	lv, err = c.ListObjectVersions(ctx, &s3.ListObjectVersionsInput{Bucket: aws.String("bkt"), MaxKeys: aws.Int32(1)})
	if err != nil || !aws.ToBool(lv.IsTruncated) || aws.ToString(lv.NextKeyMarker) != "a" || len(lv.Versions) != 1 {
		t.Fatalf("page 1: %+v %v", lv, err)
	}
	lv, err = c.ListObjectVersions(ctx, &s3.ListObjectVersionsInput{Bucket: aws.String("bkt"), Delimiter: aws.String("/"),
		KeyMarker: lv.NextKeyMarker, VersionIdMarker: lv.NextVersionIdMarker})
	if err != nil || len(lv.Versions) != 0 || len(lv.CommonPrefixes) != 1 || aws.ToString(lv.CommonPrefixes[0].Prefix) != "dir/" {
		t.Fatalf("page 2: %+v %v", lv, err)
	}
	// versionId=null is the object; a malformed id is refused.
	g, err := c.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String("bkt"), Key: aws.String("a"), VersionId: aws.String("null")})
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(g.Body)
	g.Body.Close()
	if string(body) != "data" {
		t.Fatalf("GET versionId=null: %q", body)
	}
	if _, err := c.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String("bkt"), Key: aws.String("a"), VersionId: aws.String("v1")}); httpStatus(err) != http.StatusBadRequest {
		t.Fatalf("HEAD of a malformed version id: %v, want 400", err)
	}
	if _, err := c.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: aws.String("bkt"), Key: aws.String("a"), VersionId: aws.String("v1")}); apiCode(err) != "InvalidArgument" {
		t.Fatalf("DELETE of a malformed version id: %v, want InvalidArgument", err)
	}
	if got := readObject(t, c, "bkt", "a"); got != "data" {
		t.Fatalf("after delete of an unknown version: %q", got)
	}
	if _, err := c.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: aws.String("bkt"), Key: aws.String("a"), VersionId: aws.String("null")}); err != nil {
		t.Fatal(err)
	}
	if err := get(ctx, c, "bkt", "a"); apiCode(err) != "NoSuchKey" {
		t.Fatalf("after delete of version null: %v", err)
	}

	// Versioning enabled: two versions, a delete marker, reads by id.
	if _, err := c.PutBucketVersioning(ctx, &s3.PutBucketVersioningInput{Bucket: aws.String("bkt"),
		VersioningConfiguration: &types.VersioningConfiguration{Status: types.BucketVersioningStatusEnabled}}); err != nil {
		t.Fatalf("enable versioning: %v", err)
	}
	var ids []string
	for _, body := range []string{"one", "two"} {
		out, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("bkt"), Key: aws.String("v"), Body: strings.NewReader(body)})
		if err != nil || aws.ToString(out.VersionId) == "" {
			t.Fatalf("PUT %s: %v, version %q", body, err, aws.ToString(out.VersionId))
		}
		ids = append(ids, aws.ToString(out.VersionId))
	}
	del, err := c.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: aws.String("bkt"), Key: aws.String("v")})
	if err != nil || !aws.ToBool(del.DeleteMarker) {
		t.Fatalf("DELETE: %+v, %v; want a marker", del, err)
	}
	if err := get(ctx, c, "bkt", "v"); apiCode(err) != "NoSuchKey" {
		t.Fatalf("GET behind the marker: %v", err)
	}
	g, err = c.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String("bkt"), Key: aws.String("v"), VersionId: aws.String(ids[0])})
	if err != nil {
		t.Fatal(err)
	}
	body, _ = io.ReadAll(g.Body)
	g.Body.Close()
	if string(body) != "one" || aws.ToString(g.VersionId) != ids[0] {
		t.Fatalf("GET of the first version: %q (%s)", body, aws.ToString(g.VersionId))
	}
	lv, err = c.ListObjectVersions(ctx, &s3.ListObjectVersionsInput{Bucket: aws.String("bkt"), Prefix: aws.String("v")})
	if err != nil || len(lv.Versions) != 2 || len(lv.DeleteMarkers) != 1 || aws.ToString(lv.Versions[0].VersionId) != ids[1] ||
		aws.ToInt64(lv.Versions[0].Size) != 3 {
		t.Fatalf("versions: %+v, %v", lv, err)
	}
}

// The listing XML is S3's: versions and delete markers in one sequence in
// the backend's order, a marker without ETag, Size or StorageClass, and
// keys encoded for encoding-type=url.
func TestListVersionsXML(t *testing.T) {
	size := int64(0)
	out := listVersionsResult{Xmlns: s3ns, Name: "b", MaxKeys: 1000, EncodingType: "url", Entries: []versionEntry{
		{XMLName: xml.Name{Local: "DeleteMarker"}, Key: "a%20b", VersionID: "m1", IsLatest: true, LastModified: "t", Owner: owner{ID: "s3seal", DisplayName: "s3seal"}},
		{XMLName: xml.Name{Local: "Version"}, Key: "a%20b", VersionID: "v1", LastModified: "t", ETag: `"e"`, Size: &size, StorageClass: "STANDARD", Owner: owner{ID: "s3seal", DisplayName: "s3seal"}},
	}}
	raw, err := xml.Marshal(out)
	if err != nil {
		t.Fatal(err)
	}
	s := string(raw)
	for _, want := range []string{
		`<ListVersionsResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><Name>b</Name>`,
		`<EncodingType>url</EncodingType><IsTruncated>false</IsTruncated><DeleteMarker><Key>a%20b</Key><VersionId>m1</VersionId><IsLatest>true</IsLatest><LastModified>t</LastModified><Owner>`,
		`</DeleteMarker><Version><Key>a%20b</Key><VersionId>v1</VersionId><IsLatest>false</IsLatest><LastModified>t</LastModified><ETag>&#34;e&#34;</ETag><Size>0</Size><StorageClass>STANDARD</StorageClass>`,
	} {
		if !strings.Contains(s, want) {
			t.Errorf("XML lacks %s:\n%s", want, s)
		}
	}
}
