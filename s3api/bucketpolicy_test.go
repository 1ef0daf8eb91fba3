package s3api

import (
	"context"
	"fmt"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/smithy-go/middleware"
	smithyhttp "github.com/aws/smithy-go/transport/http"
)

// TestBucketPolicyJudged: s3seal refuses a malformed bucket policy itself
// with AWS's MalformedPolicy and words, before the store sees it (moto
// and the embedded store take nearly anything), and answers a policy it
// passes on with AWS's 204. A missing bucket is NoSuchBucket first.
func TestBucketPolicyJudged(t *testing.T) {
	fw := &fakeForwarder{}
	creds := Credentials{"admin": {AccessKey: "admin", SecretKey: "as", Read: []string{"*"}, Write: []string{"*"}, Admin: true}}
	srv := newTestServerFw(t, Config{Credentials: creds}, fw)
	ctx := context.Background()
	c := sdkClient(srv.URL, "admin", "as")
	const b = "pol-bucket"
	if _, err := c.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String(b)}); err != nil {
		t.Fatal(err)
	}
	doc := func(effect, principal, action, resource string) string {
		return fmt.Sprintf(`{"Statement":[{"Effect":"%s","Principal":%s,"Action":%s,"Resource":%s}]}`, effect, principal, action, resource)
	}
	bkt, objs := `"arn:aws:s3:::`+b+`"`, `"arn:aws:s3:::`+b+`/*"`
	version := func(v string) string {
		return `{"Version":"` + v + `","Statement":[{"Effect":"Deny","Principal":"admin","Action":"s3:GetObject","Resource":"arn:aws:s3:::` + b + `/obj"}]}`
	}
	for _, tc := range []struct{ policy, msg string }{
		{"{true}", "This policy contains invalid Json"},
		{`{"Principal": "*" `, "This policy contains invalid Json"},
		{"false", "Policies must be valid JSON and the first byte must be '{'"},
		{`"Statement": []}`, "Policies must be valid JSON and the first byte must be '{'"},
		{`{}`, "Missing required field Statement"},
		{`{"Statement": []}`, "Could not parse the policy: Statement is empty!"},
		{doc("invalid_effect", `"*"`, `"s3:*"`, `"arn:aws:s3:::*"`), "Invalid effect: invalid_effect"},
		{doc("Allow", `""`, `"s3:*"`, `"arn:aws:s3:::*"`), "Invalid principal in policy"},
		{doc("Allow", `[]`, `"s3:*"`, `"arn:aws:s3:::*"`), "Invalid principal in policy"},
		{doc("Allow", `{"AWS": ""}`, `"s3:*"`, `"arn:aws:s3:::*"`), "Invalid principal in policy"},
		{doc("Allow", `{"AWS": []}`, `"s3:*"`, `"arn:aws:s3:::*"`), "Invalid principal in policy"},
		{doc("Allow", `["*", "grt1"]`, `"s3:*"`, `"arn:aws:s3:::*"`), "Invalid principal in policy"},
		{doc("Allow", `["no_such_user_1"]`, `"s3:*"`, `"arn:aws:s3:::*"`), "Invalid principal in policy"},
		{doc("Allow", `"*"`, `"s4:GetObject"`, objs), "Policy has invalid action"},
		{doc("Allow", `"*"`, `"s3:????"`, objs), "Policy has invalid action"},
		{doc("Allow", `["*"]`, `"s3:*"`, `""`), "Policy has invalid resource"},
		{doc("Allow", `["*"]`, `"s3:*"`, `[]`), "Policy has invalid resource"},
		{doc("Allow", `["*"]`, `"s3:*"`, `"arn:aws:iam:::`+b+`"`), "Policy has invalid resource"},
		{doc("Allow", `["*"]`, `"s3:*"`, `"arn:aws:s3:::/`+b+`"`), "Policy has invalid resource"},
		{doc("Allow", `["*"]`, `"s3:*"`, `"arn:aws:s3:::prefix-`+b+`"`), "Policy has invalid resource"},
		{doc("Allow", `["*"]`, `"s3:GetObjec?"`, bkt), "Action does not apply to any resource(s) in statement"},
		{doc("Allow", `["*"]`, `"s3:*Multipart*"`, bkt), "Action does not apply to any resource(s) in statement"},
		{doc("Allow", `["*"]`, `"s3:ListBucket"`, objs), "Action does not apply to any resource(s) in statement"},
		{doc("Allow", `["*"]`, `"s3:*Bucket*"`, objs), "Action does not apply to any resource(s) in statement"},
		{version(""), "The policy must contain a valid version string"},
		{version("2012-10-16"), "The policy must contain a valid version string"},
	} {
		_, before := fw.last()
		_, err := c.PutBucketPolicy(ctx, &s3.PutBucketPolicyInput{Bucket: aws.String(b), Policy: aws.String(tc.policy)})
		if _, after := fw.last(); apiCode(err) != "MalformedPolicy" || httpStatus(err) != 400 || apiMessage(err) != tc.msg || after != before {
			t.Errorf("%s: %v (forwarded: %v), want MalformedPolicy %q", tc.policy, err, after != before, tc.msg)
		}
	}
	for _, p := range []string{
		version("2008-10-17"), version("2012-10-17"),
		doc("Allow", `"*"`, `"s3:GetObject"`, objs),
		doc("Deny", `{"AWS": "*"}`, `"s3:DeleteBucket"`, bkt),
		doc("Allow", `{"AWS": ["arn:aws:iam::123456789012:root", "123456789012"]}`, `["s3:ListBucket", "s3:GetObject"]`, `[`+bkt+`,`+objs+`]`),
		doc("Allow", `"*"`, `"s3:Get*"`, objs),
		doc("Allow", `"*"`, `["S3:getobject", "s3:GetBucketCors"]`, `[`+bkt+`,`+objs+`]`),
		`{"Version":"2012-10-17","Statement":[{"Sid":"s","Effect":"Deny","NotPrincipal":{"AWS":"arn:aws:iam::123456789012:root"},"Action":"s3:*",` +
			`"Resource":"arn:aws:s3:::` + b + `/*","Condition":{"Bool":{"aws:SecureTransport":"false"}}}]}`,
		doc("Allow", `"*"`, `"s3:*"`, `[`+bkt+`,`+bkt+`]`),
	} {
		var status int
		_, err := c.PutBucketPolicy(ctx, &s3.PutBucketPolicyInput{Bucket: aws.String(b), Policy: aws.String(p)},
			s3.WithAPIOptions(func(st *middleware.Stack) error {
				return st.Deserialize.Add(middleware.DeserializeMiddlewareFunc("status", func(ctx context.Context, in middleware.DeserializeInput, next middleware.DeserializeHandler) (middleware.DeserializeOutput, middleware.Metadata, error) {
					out, md, err := next.HandleDeserialize(ctx, in)
					if r, ok := out.RawResponse.(*smithyhttp.Response); ok {
						status = r.StatusCode
					}
					return out, md, err
				}), middleware.After)
			}))
		if err != nil || status != 204 {
			t.Errorf("%s: %v, status %d, want 204", p, err, status)
		}
	}
	_, err := c.PutBucketPolicy(ctx, &s3.PutBucketPolicyInput{Bucket: aws.String("no-such-bucket"), Policy: aws.String(doc("Allow", `"*"`, `"s3:GetObject"`, objs))})
	if apiCode(err) != "NoSuchBucket" {
		t.Errorf("missing bucket: %v", err)
	}
}
