package s3api

import (
	"context"
	"reflect"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
)

func TestListBucketsPagesByPrefix(t *testing.T) {
	// ro is a credential of ak's account (S3: an IAM user of the
	// account that owns the buckets), so it lists them within its lists.
	creds := adminCreds()
	ak := creds["ak"]
	ak.CanonicalID, ak.Account = "ak", "111111111111"
	creds["ak"] = ak
	creds["ro"] = Credential{AccessKey: "ro", SecretKey: "ro-secret", Read: []string{"logs-a", "logs-c"}, CanonicalID: "ro", Account: "111111111111"}
	url := newTestServer(t, creds)
	ctx := context.Background()
	c := sdkClient(url, "ak", "sk")
	for _, b := range []string{"logs-c", "logs-a", "data", "logs-b"} {
		if _, err := c.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String(b)}); err != nil {
			t.Fatal(err)
		}
	}
	var names []string
	var token *string
	pages := 0
	for {
		out, err := c.ListBuckets(ctx, &s3.ListBucketsInput{Prefix: aws.String("logs-"), MaxBuckets: aws.Int32(2), ContinuationToken: token})
		if err != nil {
			t.Fatal(err)
		}
		pages++
		if aws.ToString(out.Prefix) != "logs-" || aws.ToString(out.Owner.ID) != "ak" {
			t.Errorf("page %d: prefix %q owner %q", pages, aws.ToString(out.Prefix), aws.ToString(out.Owner.ID))
		}
		for _, b := range out.Buckets {
			names = append(names, aws.ToString(b.Name))
			if aws.ToString(b.BucketRegion) != "us-east-1" {
				t.Errorf("%s: region %q", aws.ToString(b.Name), aws.ToString(b.BucketRegion))
			}
		}
		// The token is the page's last name, as versitygw's suite has it.
		if pages == 1 && aws.ToString(out.ContinuationToken) != "logs-b" {
			t.Errorf("first page's token %q, want logs-b", aws.ToString(out.ContinuationToken))
		}
		if out.ContinuationToken == nil {
			break
		}
		token = out.ContinuationToken
	}
	if want := []string{"logs-a", "logs-b", "logs-c"}; !reflect.DeepEqual(names, want) || pages != 2 {
		t.Errorf("listed %v in %d pages, want %v in 2", names, pages, want)
	}
	// The owner is the caller, and only readable buckets are paged.
	out, err := sdkClient(url, "ro", "ro-secret").ListBuckets(ctx, &s3.ListBucketsInput{MaxBuckets: aws.Int32(1)})
	if err != nil || len(out.Buckets) != 1 || aws.ToString(out.Buckets[0].Name) != "logs-a" || out.ContinuationToken == nil ||
		aws.ToString(out.Owner.ID) != "ro" {
		t.Fatalf("ro: %+v (%v)", out, err)
	}
	_, err = c.ListBuckets(ctx, &s3.ListBucketsInput{MaxBuckets: aws.Int32(0)})
	if apiCode(err) != "InvalidArgument" {
		t.Errorf("max-buckets=0: %v, want InvalidArgument", err)
	}
}
