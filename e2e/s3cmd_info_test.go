package e2e

import (
	"context"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
)

// TestS3cmdInfoReader: `s3cmd info` by a credential that is not an admin,
// on moto: the bucket policy, s3seal's own (not the store's), is read as
// its admin put it, CORS and the ACL are read, the ACL without the backend
// account's identity (its owner is the caller).
func TestS3cmdInfoReader(t *testing.T) {
	t.Parallel()
	requireTool(t, "s3cmd")
	_, p, user, admin := lockSetup(t)
	ctx := context.Background()
	mustCreateBucket(t, user, "infobkt")
	policy := `{"Version":"2012-10-17","Statement":[{"Effect":"Deny","Principal":"*","Action":"s3:GetObject","Resource":"arn:aws:s3:::infobkt/nothing"}]}`
	if _, err := admin.PutBucketPolicy(ctx, &s3.PutBucketPolicyInput{Bucket: aws.String("infobkt"), Policy: &policy}); err != nil {
		t.Fatal(err)
	}
	s3cmd := s3cmdFor(t, &sealProc{Addr: p.Addr, AccessKey: "user", SecretKey: "user-secret-key"}, t.TempDir())
	info := s3cmd("info", "s3://infobkt")
	for _, want := range []string{"infobkt/nothing", "CORS:      none", "ACL:       user: FULL_CONTROL"} {
		if !strings.Contains(info, want) {
			t.Errorf("s3cmd info as a reader: no %q in\n%s", want, info)
		}
	}
}
