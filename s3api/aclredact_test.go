package s3api

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/smithy-go"

	"github.com/s3seal/s3seal/backend"
)

// GET ?acl and GET ?policy are open to read-only credentials, and the
// store's answers carry the backend account's identity (the ACL's owner
// and grantees' ids and e-mails, the policy's principal ARNs): a
// read-only credential gets neither, as s3seal shows no account ids
// anywhere (DESIGN: "s3seal has no account ids to show").
func TestReaderSeesNoBackendAccount(t *testing.T) {
	fw := &fakeForwarder{}
	creds := Credentials{"reader": {AccessKey: "reader", SecretKey: "rs", Read: []string{"*"}}}
	srv := newTestServerFw(t, Config{Credentials: creds}, fw)
	ctx := context.Background()
	reader := sdkClient(srv.URL, "reader", "rs")
	const canon = "79a59df900b949e55d96a1e698fbacedfd6e09d98eacf8f8d5218e7cd47ef2be"
	fw.body = `<AccessControlPolicy><Owner><ID>` + canon + `</ID><DisplayName>backend-root</DisplayName></Owner><AccessControlList>` +
		`<Grant><Grantee xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xsi:type="AmazonCustomerByEmail"><EmailAddress>ops@backend.example</EmailAddress></Grantee><Permission>READ</Permission></Grant>` +
		`</AccessControlList></AccessControlPolicy>`
	out, err := reader.GetBucketAcl(ctx, &s3.GetBucketAclInput{Bucket: aws.String("bkt")})
	if err == nil && out.Owner != nil && aws.ToString(out.Owner.ID) == canon {
		t.Errorf("a read-only credential gets the backend account's canonical id %s (%s) and grantee %v from GET ?acl",
			aws.ToString(out.Owner.ID), aws.ToString(out.Owner.DisplayName), aws.ToString(out.Grants[0].Grantee.EmailAddress))
	}
	fw.body = `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Principal":{"AWS":"arn:aws:iam::123456789012:role/s3seal-backend"},"Action":"s3:*","Resource":"arn:aws:s3:::bkt/*","Condition":{"IpAddress":{"aws:SourceIp":"10.1.2.0/24"}}}]}`
	pol, err := reader.GetBucketPolicy(ctx, &s3.GetBucketPolicyInput{Bucket: aws.String("bkt")})
	if err == nil && strings.Contains(aws.ToString(pol.Policy), "123456789012") {
		t.Errorf("a read-only credential gets the backend's bucket policy verbatim: %s", aws.ToString(pol.Policy))
	}
}

// awsDenyStore answers every request as AWS S3 answers a denied one since
// 2024: a 403 AccessDenied whose message names the caller's ARN, and so
// the backend account id.
const leakedAccount = "123456789012"

func awsDenyStore(t *testing.T) *httptest.Server {
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/xml")
		w.WriteHeader(http.StatusForbidden)
		_, _ = io.WriteString(w, `<?xml version="1.0" encoding="UTF-8"?><Error><Code>AccessDenied</Code>`+
			`<Message>User: arn:aws:iam::`+leakedAccount+`:user/s3seal-backend is not authorized to perform: s3:GetObjectAcl on resource: "arn:aws:s3:::bkt/k" because no identity-based policy allows the s3:GetObjectAcl action</Message>`+
			`<RequestId>R</RequestId><HostId>H</HostId></Error>`)
	}))
	t.Cleanup(ts.Close)
	return ts
}

// TestForwardedErrorHidesAccount: a non-admin reader's GET ?acl
// (and a writer's owner-only PUT ?acl, which s3seal answers by a GET ?acl
// of its own) get the store's 4xx message verbatim (forwardErr), while
// every other path blanks AccessDenied's message (fromBackend). On AWS
// that message names the backend account (and IAM user).
func TestForwardedErrorHidesAccount(t *testing.T) {
	store := awsDenyStore(t)
	fw, err := backend.NewS3(backend.S3Config{Endpoint: store.URL, AccessKey: "a", SecretKey: "s", PathStyle: true, MaxAttempts: 1})
	if err != nil {
		t.Fatal(err)
	}
	creds := Credentials{
		"reader": {AccessKey: "reader", SecretKey: "rs", Read: []string{"*"}},
		"writer": {AccessKey: "writer", SecretKey: "ws", Read: []string{"*"}, Write: []string{"*"}},
	}
	srv := newTestServerFw(t, Config{Credentials: creds}, fw)
	ctx := context.Background()
	reader, writer := sdkClient(srv.URL, "reader", "rs"), sdkClient(srv.URL, "writer", "ws")
	b, k := aws.String("bkt"), aws.String("k")
	check := func(what string, err error) {
		t.Helper()
		var ae smithy.APIError
		if err == nil {
			t.Errorf("%s: no error", what)
			return
		}
		msg := err.Error()
		if errors.As(err, &ae) {
			msg = ae.ErrorMessage()
		}
		if strings.Contains(msg, leakedAccount) {
			t.Errorf("%s: a non-admin learns the backend account id: %q", what, msg)
		}
	}
	_, err = reader.GetObjectAcl(ctx, &s3.GetObjectAclInput{Bucket: b, Key: k})
	check("reader GET object ?acl", err)
	_, err = reader.GetBucketAcl(ctx, &s3.GetBucketAclInput{Bucket: b})
	check("reader GET bucket ?acl", err)
	_, err = writer.PutObjectAcl(ctx, &s3.PutObjectAclInput{Bucket: b, Key: k, ACL: "private"})
	check("writer owner-only PUT object ?acl", err)
	_, err = reader.GetObjectTagging(ctx, &s3.GetObjectTaggingInput{Bucket: b, Key: k})
	check("reader GET ?tagging", err)
}
