package e2e

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
)

// A client's CopyObject with x-amz-object-lock-* headers, on moto: the
// copy (sealed again by s3seal, so a backend PUT) carries the retention
// and legal hold it asked for, the source keeps none, and a retention
// without its date is refused before anything is written.
func TestCopyObjectLockHeaders(t *testing.T) {
	t.Parallel()
	m, _, user, _ := lockSetup(t)
	be := motoClient(t, m)
	ctx := context.Background()
	b := aws.String("vault")
	mustCreateLockedBucket(t, user, *b)
	if _, err := user.PutObject(ctx, &s3.PutObjectInput{Bucket: b, Key: aws.String("src"), Body: strings.NewReader("precious")}); err != nil {
		t.Fatal(err)
	}
	until := time.Now().Add(time.Hour).UTC().Truncate(time.Second)
	if _, err := user.CopyObject(ctx, &s3.CopyObjectInput{Bucket: b, Key: aws.String("dst"), CopySource: aws.String("vault/src"),
		ObjectLockMode: types.ObjectLockModeGovernance, ObjectLockRetainUntilDate: &until,
		ObjectLockLegalHoldStatus: types.ObjectLockLegalHoldStatusOn}); err != nil {
		t.Fatal(err)
	}
	head, err := be.HeadObject(ctx, &s3.HeadObjectInput{Bucket: b, Key: aws.String("dst")})
	if err != nil || head.ObjectLockMode != types.ObjectLockModeGovernance || !aws.ToTime(head.ObjectLockRetainUntilDate).Equal(until) ||
		head.ObjectLockLegalHoldStatus != types.ObjectLockLegalHoldStatusOn {
		t.Fatalf("backend lock of the copy: %s until %v, legal hold %q, %v; want GOVERNANCE until %v, ON",
			head.ObjectLockMode, head.ObjectLockRetainUntilDate, head.ObjectLockLegalHoldStatus, err, until)
	}
	if got := string(getObj(t, user, "vault", "dst")); got != "precious" {
		t.Fatalf("copy reads %q", got)
	}
	src, err := be.HeadObject(ctx, &s3.HeadObjectInput{Bucket: b, Key: aws.String("src")})
	if err != nil || src.ObjectLockMode != "" || src.ObjectLockLegalHoldStatus == types.ObjectLockLegalHoldStatusOn {
		t.Fatalf("the source got a lock: %s, %q, %v", src.ObjectLockMode, src.ObjectLockLegalHoldStatus, err)
	}
	_, err = user.CopyObject(ctx, &s3.CopyObjectInput{Bucket: b, Key: aws.String("nodate"), CopySource: aws.String("vault/src"),
		ObjectLockMode: types.ObjectLockModeGovernance})
	if code, status := apiCode(err); code != "InvalidArgument" || status != 400 {
		t.Fatalf("copy with a lock mode and no date: %v, want 400 InvalidArgument", err)
	}
	if _, err := be.HeadObject(ctx, &s3.HeadObjectInput{Bucket: b, Key: aws.String("nodate")}); err == nil {
		t.Fatal("a refused copy wrote its object")
	}
}
