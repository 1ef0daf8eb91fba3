package s3api

import (
	"context"
	"crypto/md5"
	"encoding/base64"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/aws/smithy-go/middleware"
	smithyhttp "github.com/aws/smithy-go/transport/http"
	"github.com/s3seal/s3seal/backend"
)

// objectOpsServer is a test server with bucket "bkt" holding "src"
// ("hello", with a SHA-256 checksum) and "empty" (no bytes, SHA-256).
func objectOpsServer(t *testing.T) (context.Context, *s3.Client) {
	t.Helper()
	ctx := context.Background()
	c := sdkClient(newTestServer(t, SingleCredential("ak", "sk")), "ak", "sk")
	if _, err := c.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String("bkt")}); err != nil {
		t.Fatal(err)
	}
	for key, body := range map[string]string{"src": "hello", "empty": ""} {
		if _, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("bkt"), Key: aws.String(key),
			Body: strings.NewReader(body), ChecksumAlgorithm: types.ChecksumAlgorithmSha256}); err != nil {
			t.Fatal(err)
		}
	}
	return ctx, c
}

// withoutContentType drops the Content-Type the SDK sets on every body
// (application/octet-stream) before signing, as a client sending none.
func withoutContentType(o *s3.Options) {
	o.APIOptions = append(o.APIOptions, func(st *middleware.Stack) error {
		return st.Build.Add(middleware.BuildMiddlewareFunc("dropContentType",
			func(ctx context.Context, in middleware.BuildInput, next middleware.BuildHandler) (middleware.BuildOutput, middleware.Metadata, error) {
				if req, ok := in.Request.(*smithyhttp.Request); ok {
					req.Header.Del("Content-Type")
				}
				return next.HandleBuild(ctx, in)
			}), middleware.After)
	})
}

// An object written without Content-Type is reported as S3 reports it,
// binary/octet-stream, whatever the backend defaults to: on PUT and on a
// copy that replaces the metadata.
func TestDefaultContentType(t *testing.T) {
	ctx, c := objectOpsServer(t)
	if _, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("bkt"), Key: aws.String("noct"), Body: strings.NewReader("x")}, withoutContentType); err != nil {
		t.Fatal(err)
	}
	if _, err := c.CopyObject(ctx, &s3.CopyObjectInput{Bucket: aws.String("bkt"), Key: aws.String("repl"), CopySource: aws.String("bkt/src"),
		MetadataDirective: types.MetadataDirectiveReplace}); err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{"noct", "repl"} {
		out, err := c.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String("bkt"), Key: aws.String(key)})
		if err != nil || aws.ToString(out.ContentType) != "binary/octet-stream" {
			t.Errorf("%s: Content-Type %q (%v), want binary/octet-stream", key, aws.ToString(out.ContentType), err)
		}
	}
}

// A range on an empty object: a suffix range gives the whole (empty)
// object, 200 without Content-Range; any other is InvalidRange, worded as
// AWS words it. HEAD with partNumber=1 reports the checksum of the whole.
func TestEmptyObjectRanges(t *testing.T) {
	ctx, c := objectOpsServer(t)
	for _, rng := range []string{"bytes=-1", "bytes=abc"} {
		out, err := c.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String("bkt"), Key: aws.String("empty"), Range: aws.String(rng)})
		if err != nil {
			t.Errorf("GET %s: %v", rng, err)
			continue
		}
		data, _ := io.ReadAll(out.Body)
		out.Body.Close()
		if len(data) != 0 || aws.ToInt64(out.ContentLength) != 0 || out.ContentRange != nil {
			t.Errorf("GET %s: %d bytes, length %d, range %v", rng, len(data), aws.ToInt64(out.ContentLength), out.ContentRange)
		}
		head, err := c.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String("bkt"), Key: aws.String("empty"), Range: aws.String(rng)})
		if err != nil || aws.ToInt64(head.ContentLength) != 0 {
			t.Errorf("HEAD %s: %v", rng, err)
		}
	}
	for _, rng := range []string{"bytes=0-", "bytes=0-0", "bytes=-0"} {
		_, err := c.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String("bkt"), Key: aws.String("empty"), Range: aws.String(rng)})
		checkErr(t, "GET "+rng, err, "InvalidRange", "The requested range is not satisfiable")
	}
	head, err := c.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String("bkt"), Key: aws.String("empty"),
		PartNumber: aws.Int32(1), ChecksumMode: types.ChecksumModeEnabled})
	if err != nil || aws.ToString(head.ChecksumSHA256) != "47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=" || head.ContentRange != nil {
		t.Errorf("HEAD partNumber=1 of an empty object: sha256 %q range %v (%v)", aws.ToString(head.ChecksumSHA256), head.ContentRange, err)
	}
}

// Object operations' refusals, code and message as AWS gives them.
func TestObjectOpsErrorWording(t *testing.T) {
	ctx, c := objectOpsServer(t)
	b := aws.String("bkt")
	_, err := c.GetObject(ctx, &s3.GetObjectInput{Bucket: b, Key: aws.String("src"), Range: aws.String("bytes=0-1"), PartNumber: aws.Int32(1)})
	checkErr(t, "range and partNumber", err, "InvalidRequest", "Cannot specify both Range header and partNumber query parameter")
	long := map[string]string{strings.Repeat("s", 2048): "value"}
	_, err = c.PutObject(ctx, &s3.PutObjectInput{Bucket: b, Key: aws.String("k"), Body: strings.NewReader("x"), Metadata: long})
	checkErr(t, "put long metadata", err, "MetadataTooLarge", "Your metadata headers exceed the maximum allowed metadata size")
	_, err = c.CopyObject(ctx, &s3.CopyObjectInput{Bucket: b, Key: aws.String("k"), CopySource: aws.String("bkt/src"), Metadata: long})
	checkErr(t, "copy long metadata", err, "MetadataTooLarge", "Your metadata headers exceed the maximum allowed metadata size")
	_, err = c.PutObject(ctx, &s3.PutObjectInput{Bucket: b, Key: aws.String("k"), Body: strings.NewReader("x"), ContentMD5: aws.String("invalid_md5")})
	checkErr(t, "bad Content-MD5", err, "InvalidDigest", "The Content-MD5 you specified was invalid.")
	_, err = c.PutObject(ctx, &s3.PutObjectInput{Bucket: b, Key: aws.String("k"), Body: strings.NewReader("x"), ObjectLockLegalHoldStatus: types.ObjectLockLegalHoldStatusOn})
	checkErr(t, "lock without lock configuration", err, "InvalidRequest", "Bucket is missing ObjectLockConfiguration")
	_, err = c.CopyObject(ctx, &s3.CopyObjectInput{Bucket: b, Key: aws.String("k"), CopySource: aws.String("bkt/src"), ChecksumAlgorithm: "nope"})
	checkErr(t, "copy checksum algorithm", err, "InvalidRequest",
		"Checksum algorithm provided is unsupported. Please try again with any of the valid types: [CRC32, CRC32C, CRC64NVME, MD5, SHA1, SHA256, SHA512, XXHASH128, XXHASH3, XXHASH64]")
	_, err = c.ListObjects(ctx, &s3.ListObjectsInput{Bucket: b, MaxKeys: aws.Int32(-5)})
	checkErr(t, "negative max-keys", err, "InvalidArgument", "Argument -5 must be an integer between 0 and 2147483647")
	_, err = c.PutObject(ctx, &s3.PutObjectInput{Bucket: b, Key: aws.String("src"), Body: strings.NewReader("x"), IfNoneMatch: aws.String(`"etag"`)})
	checkErr(t, "If-None-Match with an ETag", err, "NotImplemented", "A header you provided implies functionality that is not implemented.")
	_, err = c.PutObject(ctx, &s3.PutObjectInput{Bucket: b, Key: aws.String("src"), Body: strings.NewReader("x"), IfNoneMatch: aws.String("*"), IfMatch: aws.String(`"etag"`)})
	checkErr(t, "If-Match and If-None-Match", err, "NotImplemented", "A header you provided implies functionality that is not implemented.")
	_, err = c.GetObjectAttributes(ctx, &s3.GetObjectAttributesInput{Bucket: aws.String("nobucket"), Key: aws.String("src"), ObjectAttributes: []types.ObjectAttributes{}})
	checkErr(t, "attributes of a missing bucket", err, "NoSuchBucket", "The specified bucket does not exist.")
	_, err = c.GetObjectAttributes(ctx, &s3.GetObjectAttributesInput{Bucket: b, Key: aws.String("src"), ObjectAttributes: []types.ObjectAttributes{}})
	checkErr(t, "no attributes", err, "InvalidRequest", "The x-amz-object-attributes header specifying the attributes to be retrieved is either missing or empty")
	if got := readObject(t, c, "bkt", "src"); got != "hello" {
		t.Fatalf("refused writes changed the object: %q", got)
	}
}

// x-amz-copy-source is parsed as S3 parses it: bad encoding, a bad
// bucket name and a missing or climbing key each have their own answer.
func TestCopySourceRefusals(t *testing.T) {
	ctx, c := objectOpsServer(t)
	for src, msg := range map[string]string{
		"bucket/%ZZ":                   "Invalid copy source encoding",
		"bucket/%C3%":                  "Invalid copy source encoding",
		"100%/foo":                     "Invalid copy source encoding",
		"192.168.1.1/foo":              "Invalid copy source bucket name",
		"my-buc@k&()t/obj":             "Invalid copy source bucket name",
		"2001:db8::1/something":        "Invalid copy source bucket name",
		"bucket":                       "Invalid copy source object key",
		"bucket/":                      "Invalid copy source object key",
		"bucket/.":                     "Invalid copy source object key",
		"bucket/../":                   "Invalid copy source object key",
		"bucket/foo/ba/../../../r/baz": "Invalid copy source object key",
	} {
		_, err := c.CopyObject(ctx, &s3.CopyObjectInput{Bucket: aws.String("bkt"), Key: aws.String("k"), CopySource: aws.String(src)})
		checkErr(t, src, err, "InvalidArgument", msg)
	}
	for _, src := range []string{"bkt/src", "/bkt/src", "bkt/s%72c"} {
		if _, err := c.CopyObject(ctx, &s3.CopyObjectInput{Bucket: aws.String("bkt"), Key: aws.String("k"), CopySource: aws.String(src)}); err != nil {
			t.Errorf("%s: %v", src, err)
		}
	}
}

// A copy's ETag condition decides over its date counterpart, as S3
// documents: if-match true copies though if-unmodified-since is false,
// if-none-match true copies though if-modified-since is false.
func TestCopyConditionPrecedence(t *testing.T) {
	ctx, c := objectOpsServer(t)
	src, err := c.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String("bkt"), Key: aws.String("src")})
	if err != nil {
		t.Fatal(err)
	}
	past, future := time.Now().AddDate(0, 0, -3), time.Now().Add(time.Hour)
	copyWith := func(f func(*s3.CopyObjectInput)) error {
		in := &s3.CopyObjectInput{Bucket: aws.String("bkt"), Key: aws.String("dst"), CopySource: aws.String("bkt/src")}
		f(in)
		_, err := c.CopyObject(ctx, in)
		return err
	}
	if err := copyWith(func(in *s3.CopyObjectInput) {
		in.CopySourceIfMatch, in.CopySourceIfUnmodifiedSince = src.ETag, &past
	}); err != nil {
		t.Errorf("if-match true, if-unmodified-since false: %v", err)
	}
	if err := copyWith(func(in *s3.CopyObjectInput) {
		in.CopySourceIfNoneMatch, in.CopySourceIfModifiedSince = aws.String(`"other"`), &future
	}); err != nil {
		t.Errorf("if-none-match true, if-modified-since false: %v", err)
	}
	err = copyWith(func(in *s3.CopyObjectInput) { in.CopySourceIfUnmodifiedSince = &past })
	checkErr(t, "if-unmodified-since false", err, "PreconditionFailed", "At least one of the pre-conditions you specified did not hold.")
	err = copyWith(func(in *s3.CopyObjectInput) { in.CopySourceIfNoneMatch, in.CopySourceIfModifiedSince = src.ETag, &past })
	checkErr(t, "if-none-match false", err, "PreconditionFailed", "At least one of the pre-conditions you specified did not hold.")
}

// x-amz-tagging is refused as S3 refuses it: bad encoding (a pair
// without a key, a stray %, a key twice) is InvalidArgument, a key or
// value with a character S3 does not allow or too long is InvalidTag; a
// PutObjectTagging document's tags are checked alike.
func TestTagRefusals(t *testing.T) {
	ctx, c := objectOpsServer(t)
	const enc = "The header 'x-amz-tagging' shall be encoded as UTF-8 then URLEncoded URL query parameters without tag name duplicates."
	for tagging, want := range map[string][2]string{
		"=":               {"InvalidArgument", enc},
		"key%":            {"InvalidArgument", enc},
		"key=val&key=val": {"InvalidArgument", enc},
		"key?=val":        {"InvalidTag", "The TagKey you have provided is invalid"},
		"key!=val":        {"InvalidTag", "The TagKey you have provided is invalid"},
		"key=val#":        {"InvalidTag", "The TagValue you have provided is invalid"},
		"key=val(":        {"InvalidTag", "The TagValue you have provided is invalid"},
	} {
		_, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("bkt"), Key: aws.String("t"), Body: strings.NewReader("x"), Tagging: aws.String(tagging)})
		checkErr(t, tagging, err, want[0], want[1])
	}
	if _, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("bkt"), Key: aws.String("t"), Body: strings.NewReader("x"),
		Tagging: aws.String("key@=val@&a-b_c.d/e+f=g:h&k%20k=v%2Fv")}); err != nil {
		t.Errorf("allowed characters: %v", err)
	}
	// PutObjectTagging goes to a forwarder; its document is checked first.
	fw := &fakeForwarder{}
	srv := newTestServerFw(t, Config{Credentials: SingleCredential("ak", "sk")}, fw)
	fc := sdkClient(srv.URL, "ak", "sk")
	for name, tag := range map[string][3]string{
		"percent key": {"data%20", "v", "The TagKey you have provided is invalid"},
		"long key":    {strings.Repeat("k", 129), "v", "The TagKey you have provided is invalid"},
		"comma value": {"k", "comma,separated", "The TagValue you have provided is invalid"},
		"long value":  {"k", strings.Repeat("v", 257), "The TagValue you have provided is invalid"},
	} {
		_, err := fc.PutObjectTagging(ctx, &s3.PutObjectTaggingInput{Bucket: aws.String("bkt"), Key: aws.String("src"),
			Tagging: &types.Tagging{TagSet: []types.Tag{{Key: aws.String(tag[0]), Value: aws.String(tag[1])}}}})
		checkErr(t, name, err, "InvalidTag", tag[2])
	}
	if len(fw.reqs) != 0 {
		t.Errorf("refused tag documents were forwarded: %d", len(fw.reqs))
	}
}

// x-amz-expected-bucket-owner (and a copy's source counterpart) is the
// caller's access key id, the owner s3seal shows it: that passes, any
// other is AccessDenied and nothing is done.
func TestExpectedBucketOwner(t *testing.T) {
	ctx, c := objectOpsServer(t)
	b, k := aws.String("bkt"), aws.String("src")
	if _, err := c.HeadObject(ctx, &s3.HeadObjectInput{Bucket: b, Key: k, ExpectedBucketOwner: aws.String("ak")}); err != nil {
		t.Errorf("HEAD, own id: %v", err)
	}
	if _, err := c.CopyObject(ctx, &s3.CopyObjectInput{Bucket: b, Key: aws.String("c"), CopySource: aws.String("bkt/src"),
		ExpectedBucketOwner: aws.String("ak"), ExpectedSourceBucketOwner: aws.String("ak")}); err != nil {
		t.Errorf("copy, own id: %v", err)
	}
	wrong := aws.String("123456789012")
	_, err := c.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: b, Key: k, ExpectedBucketOwner: wrong})
	checkErr(t, "delete, other owner", err, "AccessDenied", "Access Denied.")
	_, err = c.PutObject(ctx, &s3.PutObjectInput{Bucket: b, Key: k, Body: strings.NewReader("x"), ExpectedBucketOwner: wrong})
	checkErr(t, "put, other owner", err, "AccessDenied", "Access Denied.")
	_, err = c.CopyObject(ctx, &s3.CopyObjectInput{Bucket: b, Key: k, CopySource: aws.String("bkt/c"), ExpectedSourceBucketOwner: wrong})
	checkErr(t, "copy, other source owner", err, "AccessDenied", "Access Denied.")
	if got := readObject(t, c, "bkt", "src"); got != "hello" {
		t.Fatalf("refused requests changed the object: %q", got)
	}
	if _, err := c.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: b, Key: k, ExpectedBucketOwner: aws.String("ak")}); err != nil {
		t.Errorf("delete, own id: %v", err)
	}
	if _, err := c.HeadObject(ctx, &s3.HeadObjectInput{Bucket: b, Key: k}); httpStatus(err) != http.StatusNotFound {
		t.Errorf("after the delete: %v", err)
	}
}

// failingForwarder answers every forwarded request as a store that fails
// (moto's 500 on DELETE ?tagging of a missing key).
type failingForwarder struct{}

func (failingForwarder) Forward(context.Context, backend.RawRequest) (*backend.RawResponse, error) {
	return nil, &backend.Error{Code: "InternalError", StatusCode: http.StatusInternalServerError, Message: "boom"}
}

// A store's 5xx on an object's sub-resource is NoSuchKey when the object
// is not there, as S3 answers; for an object that is there it stays the
// store's failure.
func TestSubresourceOfMissingObject(t *testing.T) {
	srv := newTestServerFw(t, Config{Credentials: SingleCredential("ak", "sk")}, failingForwarder{})
	ctx := context.Background()
	c := sdkClient(srv.URL, "ak", "sk")
	if _, err := c.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String("bkt")}); err != nil {
		t.Fatal(err)
	}
	if err := put(ctx, c, "bkt", "there"); err != nil {
		t.Fatal(err)
	}
	_, err := c.DeleteObjectTagging(ctx, &s3.DeleteObjectTaggingInput{Bucket: aws.String("bkt"), Key: aws.String("missing")})
	checkErr(t, "missing object", err, "NoSuchKey", "The specified key does not exist.")
	_, err = c.DeleteObjectTagging(ctx, &s3.DeleteObjectTaggingInput{Bucket: aws.String("bkt"), Key: aws.String("there")})
	if httpStatus(err) < 500 {
		t.Errorf("existing object: %v, want the store's failure", err)
	}
}

// A bad x-amz-object-lock-retain-until-date is named in the error, as
// S3's InvalidArgument names it (ArgumentName, ArgumentValue).
func TestRetainUntilDateArgumentNamed(t *testing.T) {
	url, _, _ := newBucketServer(t, SingleCredential("ak", "sk"))
	body := []byte("data")
	req, _ := http.NewRequest(http.MethodPut, url+"/bkt/k", strings.NewReader(string(body)))
	req.Header.Set("X-Amz-Object-Lock-Mode", "GOVERNANCE")
	req.Header.Set("X-Amz-Object-Lock-Retain-Until-Date", "invalid_date")
	signAt(t, req, hexSHA(body), time.Now())
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	want := "<Code>InvalidArgument</Code><Message>The retain until date must be provided in ISO 8601 format</Message>" +
		"<ArgumentName>x-amz-object-lock-retain-until-date</ArgumentName><ArgumentValue>invalid_date</ArgumentValue>"
	if resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(got), want) {
		t.Errorf("%d %s, want 400 with %s", resp.StatusCode, got, want)
	}
}

// A refused Content-MD5 is named as S3 names it: the value on
// InvalidDigest; on BadDigest the MD5 calculated (base64) and the one
// expected (hex).
func TestContentMD5Refusals(t *testing.T) {
	url, _, _ := newBucketServer(t, SingleCredential("ak", "sk"))
	body := []byte("dummy data")
	sum := md5.Sum(body)
	for md5h, want := range map[string]string{
		"invalid_md5":              "<Code>InvalidDigest</Code><Message>The Content-MD5 you specified was invalid.</Message>",
		"XrY7u+Ae7tCTyyK7j1rNww==": "<Code>BadDigest</Code>",
	} {
		req, _ := http.NewRequest(http.MethodPut, url+"/bkt/k", strings.NewReader(string(body)))
		req.Header.Set("Content-Md5", md5h)
		signAt(t, req, hexSHA(body), time.Now())
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		got, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		fields := "<Content-MD5>invalid_md5</Content-MD5>"
		if md5h != "invalid_md5" {
			fields = "<CalculatedDigest>" + base64.StdEncoding.EncodeToString(sum[:]) + "</CalculatedDigest>" +
				"<ExpectedDigest>5eb63bbbe01eeed093cb22bb8f5acdc3</ExpectedDigest>"
		}
		if resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(got), want) || !strings.Contains(string(got), fields) {
			t.Errorf("%s: %d %s, want %s and %s", md5h, resp.StatusCode, got, want, fields)
		}
	}
}
