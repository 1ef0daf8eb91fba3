package s3api

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/s3seal/s3seal/audit"
)

// recordingAuditor keeps the decisions it is told of; with fail set it
// cannot write them.
type recordingAuditor struct {
	mu   sync.Mutex
	recs []audit.Access
	fail bool
}

func (a *recordingAuditor) Access(r audit.Access) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.fail {
		return errors.New("disk full")
	}
	a.recs = append(a.recs, r)
	return nil
}

func (a *recordingAuditor) take() []audit.Access {
	a.mu.Lock()
	defer a.mu.Unlock()
	r := a.recs
	a.recs = nil
	return r
}

// TestAuditRecordsEachDecision: each access decision reaches the trail
// with who, the S3 action, the bucket, key and version, the answer, the
// rule and the request id the client was answered; a trail that cannot be
// written refuses the request.
func TestAuditRecordsEachDecision(t *testing.T) {
	rec := &recordingAuditor{}
	url := newTestServerWith(t, Config{Credentials: aclCreds(), Audit: rec}).URL
	ctx := context.Background()
	alice, bob := sdkClient(url, "alice", "as"), sdkClient(url, "bob", "bs")
	b := aws.String("bkt")
	if _, err := alice.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: b}); err != nil {
		t.Fatal(err)
	}
	rec.take()
	if _, err := alice.PutObject(ctx, &s3.PutObjectInput{Bucket: b, Key: aws.String("k"), Body: strings.NewReader("x")}); err != nil {
		t.Fatal(err)
	}
	got := rec.take()
	if len(got) != 1 {
		t.Fatalf("one PUT, %d decisions: %+v", len(got), got)
	}
	if g := got[0]; g.AccessKey != "alice" || g.Account != "111111111111" || g.Op != "s3:PutObject" || g.Bucket != "bkt" ||
		g.Key != "k" || !g.Allow || g.Rule != "owner" || len(g.RequestID) != 16 {
		t.Fatalf("alice's PUT: %+v", g)
	}
	_, err := bob.GetObject(ctx, &s3.GetObjectInput{Bucket: b, Key: aws.String("k"), VersionId: aws.String("null")})
	if errCode(err) != "AccessDenied" {
		t.Fatalf("bob's GET: %v", err)
	}
	got = rec.take()
	if len(got) == 0 {
		t.Fatal("bob's refusal is not recorded")
	}
	if g := got[0]; g.AccessKey != "bob" || g.Op != "s3:GetObjectVersion" || g.VersionID != "null" || g.Allow || g.Rule != "default-deny" {
		t.Fatalf("bob's GET: %+v", g)
	}
	// A bad signature: refused before access, recorded with the access
	// key claimed.
	if _, err := sdkClient(url, "bob", "wrong").ListObjectsV2(ctx, &s3.ListObjectsV2Input{Bucket: b}); err == nil {
		t.Fatal("a wrong secret was served")
	}
	if got = rec.take(); len(got) != 1 || got[0].AccessKey != "bob" || got[0].Allow || got[0].Rule != ruleSignature {
		t.Fatalf("a bad signature: %+v", got)
	}
	// carol's lists do not name the bucket.
	if _, err := sdkClient(url, "carol", "cs").ListObjectsV2(ctx, &s3.ListObjectsV2Input{Bucket: b}); errCode(err) != "AccessDenied" {
		t.Fatalf("carol's listing: %v", err)
	}
	if got = rec.take(); len(got) != 1 || got[0].Rule != ruleCredLists || got[0].Op != "s3:ListBucket" {
		t.Fatalf("carol's listing: %+v", got)
	}
	rec.mu.Lock()
	rec.fail = true
	rec.mu.Unlock()
	if _, err := alice.PutObject(ctx, &s3.PutObjectInput{Bucket: b, Key: aws.String("k2"), Body: strings.NewReader("x")}); errCode(err) != "ServiceUnavailable" {
		t.Fatalf("a PUT the trail cannot record: %v, want ServiceUnavailable", err)
	}
	rec.mu.Lock()
	rec.fail = false
	rec.mu.Unlock()
	if _, err := alice.HeadObject(ctx, &s3.HeadObjectInput{Bucket: b, Key: aws.String("k2")}); err == nil {
		t.Fatal("the refused PUT was stored")
	}
}
