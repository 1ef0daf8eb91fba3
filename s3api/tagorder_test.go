package s3api

import (
	"context"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
)

// As s3-tests test_put_obj_with_tags: a tag set comes back ordered by key
// whatever order the store keeps (moto keeps the order written).
func TestTagSetSortedByKey(t *testing.T) {
	fw := &fakeForwarder{body: `<Tagging><TagSet><Tag><Key>foo</Key><Value>bar</Value></Tag><Tag><Key>bar</Key><Value></Value></Tag></TagSet></Tagging>`}
	creds := Credentials{"user": {AccessKey: "user", SecretKey: "us", Read: []string{"*"}, Write: []string{"*"}}}
	srv := newTestServerWith(t, Config{Credentials: creds, Forwarder: fw})
	c := sdkClient(srv.URL, "user", "us")
	out, err := c.GetObjectTagging(context.Background(), &s3.GetObjectTaggingInput{Bucket: aws.String("bkt"), Key: aws.String("k")})
	if err != nil {
		t.Fatal(err)
	}
	if len(out.TagSet) != 2 || aws.ToString(out.TagSet[0].Key) != "bar" || aws.ToString(out.TagSet[0].Value) != "" ||
		aws.ToString(out.TagSet[1].Key) != "foo" {
		t.Fatalf("tag set %+v, want bar, foo", out.TagSet)
	}
}
