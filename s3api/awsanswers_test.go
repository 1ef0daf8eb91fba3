package s3api

import (
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/smithy-go"
)

func adminCreds() Credentials {
	return Credentials{"ak": {AccessKey: "ak", SecretKey: "sk", Read: []string{"*"}, Write: []string{"*"}}}
}

// apiMessage is the Message of an S3 error answer.
func apiMessage(err error) string {
	var ae smithy.APIError
	if errors.As(err, &ae) {
		return ae.ErrorMessage()
	}
	return ""
}

func TestAWSErrorMessagesWordForWord(t *testing.T) {
	_, ctx, c := newBucketServer(t, adminCreds())
	if _, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("bkt"), Key: aws.String("o"), Body: strings.NewReader("x")}); err != nil {
		t.Fatal(err)
	}
	_, err := c.ListObjectsV2(ctx, &s3.ListObjectsV2Input{Bucket: aws.String("nobucket")})
	checkErr(t, "list missing bucket", err, "NoSuchBucket", "The specified bucket does not exist.")
	_, err = c.DeleteBucket(ctx, &s3.DeleteBucketInput{Bucket: aws.String("bkt")})
	checkErr(t, "delete full bucket", err, "BucketNotEmpty", "The bucket you tried to delete is not empty.")
	_, err = c.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String("bkt"), Key: aws.String("missing")})
	checkErr(t, "get missing key", err, "NoSuchKey", "The specified key does not exist.")
	_, err = c.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String("bkt"), Key: aws.String("o"), IfMatch: aws.String(`"nope"`)})
	checkErr(t, "get If-Match", err, "PreconditionFailed", "At least one of the pre-conditions you specified did not hold.")
	_, err = c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("bkt"), Key: aws.String("o"), IfNoneMatch: aws.String("*"), Body: strings.NewReader("y")})
	checkErr(t, "put If-None-Match", err, "PreconditionFailed", "At least one of the pre-conditions you specified did not hold.")
	_, err = c.AbortMultipartUpload(ctx, &s3.AbortMultipartUploadInput{Bucket: aws.String("bkt"), Key: aws.String("o"), UploadId: aws.String("nope")})
	checkErr(t, "abort missing upload", err, "NoSuchUpload",
		"The specified multipart upload does not exist. The upload ID may be invalid, or the upload may have been aborted or completed.")
	long := strings.Repeat("k", 1025)
	_, err = c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("bkt"), Key: aws.String(long), Body: strings.NewReader("x")})
	checkErr(t, "put long key", err, "KeyTooLongError", "Your key is too long.")
	_, err = c.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String("bkt"), Key: aws.String(long)})
	checkErr(t, "get long key", err, "KeyTooLongError", "Your key is too long.")
}

func checkErr(t *testing.T, what string, err error, code, msg string) {
	t.Helper()
	if apiCode(err) != code || apiMessage(err) != msg {
		t.Errorf("%s: %q %q (%v), want %q %q", what, apiCode(err), apiMessage(err), err, code, msg)
	}
}

// A presigned URL's malformed X-Amz-Credential is reported as S3 words it.
func TestPresignedCredentialErrorWording(t *testing.T) {
	url := newTestServer(t, adminCreds())
	for cred, want := range map[string]string{
		"ak/20260101/us-east-1/sqs/aws4_request": `Error parsing the X-Amz-Credential parameter; incorrect service "sqs". This endpoint belongs to "s3".`,
		"ak/2026/us-east-1/s3/aws4_request":      `Error parsing the X-Amz-Credential parameter; incorrect date format "2026". This date in the credential must be in the format "yyyyMMdd".`,
		"ak/20260101/us-east-1/s3":               `Error parsing the X-Amz-Credential parameter; the Credential is mal-formed; expecting "<YOUR-AKID>/YYYYMMDD/REGION/SERVICE/aws4_request".`,
	} {
		q := "X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=" + strings.ReplaceAll(cred, "/", "%2F") +
			"&X-Amz-Date=20260101T000000Z&X-Amz-Expires=60&X-Amz-SignedHeaders=host&X-Amz-Signature=00"
		resp, err := http.Get(url + "/bkt/o?" + q)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 400 || !strings.Contains(string(body), "<Code>AuthorizationQueryParametersError</Code>") ||
			!strings.Contains(string(body), "<Message>"+xmlEscape(want)+"</Message>") {
			t.Errorf("credential %s: %d %s, want 400 with %s", cred, resp.StatusCode, body, want)
		}
	}
}

func xmlEscape(s string) string {
	return strings.NewReplacer(`"`, "&#34;", "<", "&lt;", ">", "&gt;").Replace(s)
}
