package s3api

import (
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
)

// TestRequestPaymentIsBucketOwner: GetBucketRequestPayment answers
// BucketOwner; PutBucketRequestPayment takes BucketOwner and answers
// Requester with 501; a missing bucket is NoSuchBucket.
func TestRequestPaymentIsBucketOwner(t *testing.T) {
	_, ctx, c := newBucketServer(t, SingleCredential("ak", "sk"))
	got, err := c.GetBucketRequestPayment(ctx, &s3.GetBucketRequestPaymentInput{Bucket: aws.String("bkt")})
	if err != nil {
		t.Fatal(err)
	}
	if got.Payer != types.PayerBucketOwner {
		t.Fatalf("GetBucketRequestPayment: %q", got.Payer)
	}
	put := func(bucket string, payer types.Payer) error {
		_, err := c.PutBucketRequestPayment(ctx, &s3.PutBucketRequestPaymentInput{Bucket: aws.String(bucket),
			RequestPaymentConfiguration: &types.RequestPaymentConfiguration{Payer: payer}})
		return err
	}
	if err := put("bkt", types.PayerBucketOwner); err != nil {
		t.Fatalf("Payer BucketOwner: %v", err)
	}
	if err := put("bkt", types.PayerRequester); apiCode(err) != "NotImplemented" {
		t.Fatalf("Payer Requester: %v", err)
	}
	if err := put("bkt", "Someone"); apiCode(err) != "MalformedXML" {
		t.Fatalf("Payer Someone: %v", err)
	}
	if _, err := c.GetBucketRequestPayment(ctx, &s3.GetBucketRequestPaymentInput{Bucket: aws.String("nosuch")}); apiCode(err) != "NoSuchBucket" {
		t.Fatalf("missing bucket: %v", err)
	}
}
