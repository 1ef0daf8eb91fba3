package s3api

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
)

// TestCreateBucketChecked: CreateBucket is judged by s3seal as AWS judges
// it, whatever the store would take: canned ACL, object ownership (and
// ACLs with BucketOwnerEnforced), location constraint, tags (AWS's
// words; the tags reach the new bucket), re-creating one's own bucket;
// the answer carries the bucket's ARN, HeadBucket its region.
func TestCreateBucketChecked(t *testing.T) {
	fw := &fakeForwarder{}
	creds := Credentials{"admin": {AccessKey: "admin", SecretKey: "as", Read: []string{"*"}, Write: []string{"*"}, Admin: true},
		"other": {AccessKey: "other", SecretKey: "os", Read: []string{"*"}, Write: []string{"*"}, Admin: true}}
	srv := newTestServerWith(t, Config{Credentials: creds, Forwarder: fw})
	ctx := context.Background()
	c := sdkClient(srv.URL, "admin", "as")
	tags := func(kv ...string) *types.CreateBucketConfiguration {
		cfg := &types.CreateBucketConfiguration{}
		for i := 0; i < len(kv); i += 2 {
			cfg.Tags = append(cfg.Tags, types.Tag{Key: aws.String(kv[i]), Value: aws.String(kv[i+1])})
		}
		return cfg
	}
	var many []string
	for i := range 51 {
		many = append(many, fmt.Sprint("key-", i), "v")
	}
	for _, tc := range []struct {
		name      string
		in        s3.CreateBucketInput
		code, msg string
	}{
		{"canned ACL", s3.CreateBucketInput{ACL: "invalid_acl"}, "InvalidArgument", ""},
		{"ownership", s3.CreateBucketInput{ObjectOwnership: "invalid_ownership"}, "InvalidArgument", "Invalid x-amz-object-ownership header: invalid_ownership"},
		{"ACL with BucketOwnerEnforced", s3.CreateBucketInput{ObjectOwnership: types.ObjectOwnershipBucketOwnerEnforced, ACL: types.BucketCannedACLPublicRead},
			"InvalidBucketAclWithObjectOwnership", "Bucket cannot have ACLs set with ObjectOwnership's BucketOwnerEnforced setting"},
		{"us-east-1", s3.CreateBucketInput{CreateBucketConfiguration: &types.CreateBucketConfiguration{LocationConstraint: "us-east-1"}},
			"InvalidLocationConstraint", "The specified location-constraint is not valid"},
		{"another region", s3.CreateBucketInput{CreateBucketConfiguration: &types.CreateBucketConfiguration{LocationConstraint: "us-west-1"}},
			"InvalidLocationConstraint", "The specified location-constraint is not valid"},
		{"long key", s3.CreateBucketInput{CreateBucketConfiguration: tags(strings.Repeat("k", 200), "v")}, "InvalidTag", "The TagKey you have provided is invalid"},
		{"long value", s3.CreateBucketInput{CreateBucketConfiguration: tags("k", strings.Repeat("v", 300))}, "InvalidTag", "The TagValue you have provided is invalid"},
		{"key character", s3.CreateBucketInput{CreateBucketConfiguration: tags("ok", "ok", "a*b", "v")}, "InvalidTag", "The TagKey you have provided is invalid"},
		{"value character", s3.CreateBucketInput{CreateBucketConfiguration: tags("k", "comma,separated")}, "InvalidTag", "The TagValue you have provided is invalid"},
		{"duplicate key", s3.CreateBucketInput{CreateBucketConfiguration: tags("k", "a", "k", "b")}, "InvalidTag", "Cannot provide multiple Tags with the same key"},
		{"51 tags", s3.CreateBucketInput{CreateBucketConfiguration: tags(many...)}, "BadRequest", "Bucket tag count cannot be greater than 50"},
	} {
		tc.in.Bucket = aws.String("refused")
		_, err := c.CreateBucket(ctx, &tc.in)
		if apiCode(err) != tc.code || httpStatus(err) != 400 || tc.msg != "" && apiMessage(err) != tc.msg {
			t.Errorf("%s: %v, want %s %q", tc.name, err, tc.code, tc.msg)
		}
	}
	if _, err := c.HeadBucket(ctx, &s3.HeadBucketInput{Bucket: aws.String("refused")}); httpStatus(err) != 404 {
		t.Fatalf("a refused CreateBucket created the bucket: %v", err)
	}

	out, err := c.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String("tagged"), CreateBucketConfiguration: tags("team", "a b", "cost:center", "x/y=z")})
	if err != nil || aws.ToString(out.BucketArn) != "arn:aws:s3:::tagged" || aws.ToString(out.Location) != "/tagged" {
		t.Fatalf("CreateBucket with tags: %+v %v", out, err)
	}
	got, _ := fw.last()
	if got.Method != http.MethodPut || got.Bucket != "tagged" || !got.Query.Has("tagging") ||
		!strings.Contains(string(got.Body), "<Key>cost:center</Key><Value>x/y=z</Value>") {
		t.Fatalf("tags forwarded as %+v", got)
	}
	if _, err := c.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String("plain")}); err != nil {
		t.Fatal(err)
	}
	_, err = c.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String("plain")})
	if apiCode(err) != "BucketAlreadyOwnedByYou" || httpStatus(err) != 409 {
		t.Fatalf("CreateBucket of one's own bucket: %v", err)
	}
	// Another credential's, or one that would change the ACL (s3-tests).
	_, err = sdkClient(srv.URL, "other", "os").CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String("plain")})
	if apiCode(err) != "BucketAlreadyExists" || httpStatus(err) != 409 {
		t.Fatalf("CreateBucket of another's bucket: %v", err)
	}
	_, err = c.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String("plain"), ACL: types.BucketCannedACLPublicRead})
	if apiCode(err) != "BucketAlreadyExists" || httpStatus(err) != 409 {
		t.Fatalf("CreateBucket of one's own bucket with an ACL: %v", err)
	}
	// An explicit BucketOwnerEnforced reaches a store without AWS's
	// default (moto).
	if _, err := c.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String("enforced"), ObjectOwnership: types.ObjectOwnershipBucketOwnerEnforced}); err != nil {
		t.Fatal(err)
	}
	if got, _ := fw.last(); got.Bucket != "enforced" || !got.Query.Has("ownershipControls") || !strings.Contains(string(got.Body), "BucketOwnerEnforced") {
		t.Fatalf("BucketOwnerEnforced forwarded as %+v", got)
	}
	head, err := c.HeadBucket(ctx, &s3.HeadBucketInput{Bucket: aws.String("tagged")})
	if err != nil || aws.ToString(head.BucketRegion) != "us-east-1" {
		t.Fatalf("HeadBucket: %+v %v", head, err)
	}
}
