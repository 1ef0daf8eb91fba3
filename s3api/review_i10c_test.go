package s3api

// Review I10c: proving tests. They FAIL on purpose while the finding stands.

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/aws/smithy-go/middleware"
	smithyhttp "github.com/aws/smithy-go/transport/http"
)

// TestReviewI10cBypassHeaderSmuggledToRetention (FAILS on purpose): a
// non-admin's PutObjectRetention is refused only when its
// x-amz-bypass-governance-retention says "true" (trimmed, any case); any
// other value passes checkBypass and is then forwarded to the backend
// as sent (subres.go copies sr.headers verbatim). Backends read the header
// their own way: Ceph RGW url-decodes it before comparing with "true"
// (RGWPutObjRetention_ObjStore_S3::get_params), so "%74rue" is a bypass
// there; OpenIO's swift s3api takes the header's mere presence as one
// ("false" included). s3seal must pass the header only from admins (or
// only the literal "true" it checked), never a value it did not judge.
func TestReviewI10cBypassHeaderSmuggledToRetention(t *testing.T) {
	fw := &fakeForwarder{}
	creds := Credentials{"user": {AccessKey: "user", SecretKey: "us", Read: []string{"*"}, Write: []string{"*"}}}
	srv := newTestServerWith(t, Config{Credentials: creds, Forwarder: fw})
	ctx := context.Background()
	future := time.Now().Add(time.Hour)
	for _, v := range []string{"%74rue", "false", "1"} {
		user := s3.New(s3.Options{BaseEndpoint: aws.String(srv.URL), Region: "us-east-1", UsePathStyle: true,
			Credentials: sdkClient(srv.URL, "user", "us").Options().Credentials,
			APIOptions:  []func(*middleware.Stack) error{smithyhttp.AddHeaderValue("X-Amz-Bypass-Governance-Retention", v)}})
		_, before := fw.last()
		_, err := user.PutObjectRetention(ctx, &s3.PutObjectRetentionInput{Bucket: aws.String("bkt"), Key: aws.String("k"),
			Retention: &types.ObjectLockRetention{Mode: types.ObjectLockRetentionModeGovernance, RetainUntilDate: &future}})
		got, after := fw.last()
		if after != before {
			if h := got.Header.Values("X-Amz-Bypass-Governance-Retention"); len(h) > 0 {
				t.Errorf("FINDING: a non-admin's PutObjectRetention with x-amz-bypass-governance-retention: %q was forwarded to the backend with that header %q (err %v)", v, h, err)
			}
		}
	}
}

// TestReviewI10cReaderSeesBackendAccount (FAILS on purpose; low): GET
// ?acl (bucket and object) and GET ?policy are now open to read-only
// credentials, and the answers carry the backend account's identity as the
// store gives it: the ACL's Owner ID and DisplayName and every grantee's
// canonical ID and e-mail, the policy's principal ARNs (account ids) and
// conditions verbatim. Everywhere else s3seal shows no account ids
// (DESIGN: "s3seal has no account ids to show"; owners are "s3seal").
func TestReviewI10cReaderSeesBackendAccount(t *testing.T) {
	fw := &fakeForwarder{}
	creds := Credentials{"reader": {AccessKey: "reader", SecretKey: "rs", Read: []string{"*"}}}
	srv := newTestServerWith(t, Config{Credentials: creds, Forwarder: fw})
	ctx := context.Background()
	reader := sdkClient(srv.URL, "reader", "rs")
	const canon = "79a59df900b949e55d96a1e698fbacedfd6e09d98eacf8f8d5218e7cd47ef2be"
	fw.body = `<AccessControlPolicy><Owner><ID>` + canon + `</ID><DisplayName>backend-root</DisplayName></Owner><AccessControlList>` +
		`<Grant><Grantee xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xsi:type="AmazonCustomerByEmail"><EmailAddress>ops@backend.example</EmailAddress></Grantee><Permission>READ</Permission></Grant>` +
		`</AccessControlList></AccessControlPolicy>`
	out, err := reader.GetBucketAcl(ctx, &s3.GetBucketAclInput{Bucket: aws.String("bkt")})
	if err == nil && out.Owner != nil && aws.ToString(out.Owner.ID) == canon {
		t.Errorf("FINDING: a read-only credential gets the backend account's canonical id %s (%s) and grantee %v from GET ?acl",
			aws.ToString(out.Owner.ID), aws.ToString(out.Owner.DisplayName), aws.ToString(out.Grants[0].Grantee.EmailAddress))
	}
	fw.body = `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Principal":{"AWS":"arn:aws:iam::123456789012:role/s3seal-backend"},"Action":"s3:*","Resource":"arn:aws:s3:::bkt/*","Condition":{"IpAddress":{"aws:SourceIp":"10.1.2.0/24"}}}]}`
	pol, err := reader.GetBucketPolicy(ctx, &s3.GetBucketPolicyInput{Bucket: aws.String("bkt")})
	if err == nil && strings.Contains(aws.ToString(pol.Policy), "123456789012") {
		t.Errorf("FINDING: a read-only credential gets the backend's bucket policy verbatim: %s", aws.ToString(pol.Policy))
	}
}
