package s3api

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"

	"github.com/s3seal/s3seal/backend"
)

// TestCreateBucketChecked: CreateBucket is judged by s3seal as AWS judges
// it, whatever the store would take: canned ACL, object ownership (and
// ACLs with BucketOwnerEnforced), location constraint, tags (AWS's
// words; the tags reach the new bucket), re-creating one's own bucket;
// the answer carries the bucket's ARN, HeadBucket its region.
func TestCreateBucketChecked(t *testing.T) {
	fw := &fakeForwarder{}
	creds := Credentials{"admin": {AccessKey: "admin", SecretKey: "as", Read: []string{"*"}, Write: []string{"*"}, Admin: true},
		"other": {AccessKey: "other", SecretKey: "os", Read: []string{"*"}, Write: []string{"*"}, Admin: true, Account: "222222222222"}}
	srv := newTestServerFw(t, Config{Credentials: creds}, fw)
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
	// In us-east-1 AWS answers its owner's plain re-create with 200 and
	// changes nothing (TestOwnBucketRecreatedElsewhere: other regions).
	if _, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("plain"), Key: aws.String("k"), Body: strings.NewReader("x")}); err != nil {
		t.Fatal(err)
	}
	if _, err = c.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String("plain")}); err != nil {
		t.Fatalf("CreateBucket of one's own bucket in us-east-1: %v", err)
	}
	if _, err := c.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String("plain"), Key: aws.String("k")}); err != nil {
		t.Fatalf("the re-create lost the bucket's object: %v", err)
	}
	_, err = c.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String("plain"), CreateBucketConfiguration: tags("k", "v")})
	if apiCode(err) != "BucketAlreadyOwnedByYou" || httpStatus(err) != 409 {
		t.Fatalf("CreateBucket of one's own bucket with tags: %v", err)
	}
	// Another account's, or one that would change the ACL (s3-tests).
	_, err = sdkClient(srv.URL, "other", "os").CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String("plain")})
	if apiCode(err) != "BucketAlreadyExists" || httpStatus(err) != 409 {
		t.Fatalf("CreateBucket of another's bucket: %v", err)
	}
	_, err = c.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String("plain"), ACL: types.BucketCannedACLPublicRead})
	if apiCode(err) != "BucketAlreadyExists" || httpStatus(err) != 409 {
		t.Fatalf("CreateBucket of one's own bucket with an ACL: %v", err)
	}
	// An explicit BucketOwnerEnforced is kept by s3seal (issue 22), not
	// forwarded.
	_, before := fw.last()
	if _, err := c.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String("enforced"), ObjectOwnership: types.ObjectOwnershipBucketOwnerEnforced}); err != nil {
		t.Fatal(err)
	}
	if _, after := fw.last(); after != before {
		t.Fatalf("BucketOwnerEnforced forwarded")
	}
	oc, err := c.GetBucketOwnershipControls(ctx, &s3.GetBucketOwnershipControlsInput{Bucket: aws.String("enforced")})
	if err != nil || oc.OwnershipControls.Rules[0].ObjectOwnership != types.ObjectOwnershipBucketOwnerEnforced {
		t.Fatalf("BucketOwnerEnforced kept as %+v, %v", oc, err)
	}
	head, err := c.HeadBucket(ctx, &s3.HeadBucketInput{Bucket: aws.String("tagged")})
	if err != nil || aws.ToString(head.BucketRegion) != "us-east-1" {
		t.Fatalf("HeadBucket: %+v %v", head, err)
	}
}

// tagFailForwarder stands for a store that creates buckets (the
// embedded store behind the server) but fails PUT ?tagging (a store
// without bucket tags, or a transient 5xx).
type tagFailForwarder struct{ be backend.Store }

func (f *tagFailForwarder) Forward(ctx context.Context, in backend.RawRequest) (*backend.RawResponse, error) {
	if in.Method == http.MethodPut && in.Key == "" && len(in.Query) == 0 {
		if err := f.be.CreateBucket(ctx, in.Bucket); err != nil {
			return nil, err
		}
		return &backend.RawResponse{StatusCode: 200, Header: http.Header{}}, nil
	}
	if in.Query.Has("tagging") {
		return nil, &backend.Error{Code: "NotImplemented", StatusCode: 501, Message: "no bucket tags here"}
	}
	return &backend.RawResponse{StatusCode: 200, Header: http.Header{}}, nil
}

// CreateBucket with Object Lock (or a canned ACL) and tags, on a store
// that fails PUT ?tagging: the bucket is created by its own raw request,
// then tagged, and removed again when tagging fails. The client reads a
// 4xx/5xx then, or 200 with the bucket there, never HTTP 200 (with an
// <Error> body) for a bucket that does not exist. (The Go SDK reads such
// a 200's <Error> body as a failure and retries; a client that goes by
// the status line, as this raw request does, would see success.)
func TestLockedCreateBucketTagFailureAnswered(t *testing.T) {
	fw := &tagFailForwarder{}
	creds := Credentials{"ak": {AccessKey: "ak", SecretKey: "sk", Read: []string{"*"}, Write: []string{"*"}, Admin: true}}
	srv := newTestServerOverFw(t, Config{Credentials: creds}, fw, func(be backend.Store) backend.Store { fw.be = be; return be })
	ctx := context.Background()
	for name, hdr := range map[string][2]string{
		"locked": {"X-Amz-Bucket-Object-Lock-Enabled", "true"},
		"acl":    {"X-Amz-Acl", "public-read"},
	} {
		bucket := "tagfail-" + name + "-tagged"
		body := `<CreateBucketConfiguration xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><Tags><Tag><Key>team</Key><Value>a</Value></Tag></Tags></CreateBucketConfiguration>`
		req, _ := http.NewRequest(http.MethodPut, srv.URL+"/"+bucket, strings.NewReader(body))
		req.Header.Set(hdr[0], hdr[1])
		req.Header.Set("X-Amz-Content-Sha256", "UNSIGNED-PAYLOAD")
		if err := v4.NewSigner().SignHTTP(ctx, aws.Credentials{AccessKeyID: "ak", SecretAccessKey: "sk"}, req, "UNSIGNED-PAYLOAD", "s3", "us-east-1", time.Now()); err != nil {
			t.Fatal(err)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		headErr := fw.be.HeadBucket(ctx, bucket)
		t.Logf("%s: CreateBucket answered %d %q; store HeadBucket: %v", name, resp.StatusCode, b, headErr)
		if resp.StatusCode == 200 && headErr != nil {
			t.Errorf("%s: CreateBucket answered 200 but the bucket is gone (%v)", name, headErr)
		}
	}
}

// tagRefusingForwarder: a store that creates buckets through the raw path
// (Object Lock / ACL creates) but refuses PUT ?tagging.
type tagRefusingForwarder struct {
	mu  sync.Mutex
	log []string
}

func (f *tagRefusingForwarder) Forward(_ context.Context, in backend.RawRequest) (*backend.RawResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.log = append(f.log, in.Method+" "+in.Bucket+"?"+in.Query.Encode())
	if in.Query.Has("tagging") {
		return nil, &backend.Error{Code: "InvalidTag", StatusCode: 400, Message: "store refuses these tags"}
	}
	return &backend.RawResponse{StatusCode: 200, Header: http.Header{}}, nil
}

// CreateBucket with Object Lock (or an ACL) and tags, on a store that
// refuses the tags: the client is not told success for the bucket s3seal
// then deletes again (tagNewBucket's refusal, and the DeleteBucket of
// configureNewBucket, come before any answer).
func TestLockedCreateBucketRefusedTags(t *testing.T) {
	fw := &tagRefusingForwarder{}
	c, _ := adminClient(t, fw)
	_, err := c.CreateBucket(context.Background(), &s3.CreateBucketInput{Bucket: aws.String("r3locked"),
		ObjectLockEnabledForBucket: aws.Bool(true),
		CreateBucketConfiguration:  &types.CreateBucketConfiguration{Tags: []types.Tag{{Key: aws.String("k"), Value: aws.String("v")}}}})
	t.Logf("store saw: %q; SDK: %v", fw.log, err)
	// What goes on the wire: the status line is what clients trust for
	// CreateBucket.
	srv := newTestServerFw(t, Config{Credentials: Credentials{"ak": {AccessKey: "ak", SecretKey: "sk", Read: []string{"*"}, Write: []string{"*"}, Admin: true}}}, fw)
	resp, body := doSigned(t, http.MethodPut, srv.URL+"/r3locked2", http.Header{"X-Amz-Bucket-Object-Lock-Enabled": {"true"}},
		`<CreateBucketConfiguration xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><Tags><Tag><Key>k</Key><Value>v</Value></Tag></Tags></CreateBucketConfiguration>`)
	if resp.StatusCode == http.StatusOK {
		t.Errorf("CreateBucket answered HTTP 200 although the store refused its tags and s3seal deleted the bucket; body: %s", body)
	}
}

// TestOwnBucketRecreatedElsewhere: outside us-east-1 the owner's re-create
// of its bucket is BucketAlreadyOwnedByYou, as AWS answers it there.
func TestOwnBucketRecreatedElsewhere(t *testing.T) {
	srv := newTestServerWith(t, Config{Credentials: SingleCredential("ak", "sk"), Region: "eu-central-1"})
	c := sdkClient(srv.URL, "ak", "sk")
	ctx := context.Background()
	in := &s3.CreateBucketInput{Bucket: aws.String("mine"), CreateBucketConfiguration: &types.CreateBucketConfiguration{LocationConstraint: "eu-central-1"}}
	if _, err := c.CreateBucket(ctx, in); err != nil {
		t.Fatal(err)
	}
	if _, err := c.CreateBucket(ctx, in); apiCode(err) != "BucketAlreadyOwnedByYou" || httpStatus(err) != 409 {
		t.Fatalf("re-create in eu-central-1: %v", err)
	}
}
