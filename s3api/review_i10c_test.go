package s3api

// Review I10c: proving tests. They FAIL on purpose while the finding stands.

import (
	"context"
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
