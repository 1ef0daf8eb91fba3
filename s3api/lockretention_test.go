package s3api

import (
	"context"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"

	"github.com/s3seal/s3seal/sealstore"
)

// Handler tests of retention and legal hold on a fake store: what S3
// answers is decided before the store is asked, and what reaches the
// store is exactly the version judged.

const lockEnabledDoc = `<ObjectLockConfiguration><ObjectLockEnabled>Enabled</ObjectLockEnabled></ObjectLockConfiguration>`

func lockCreds() Credentials {
	return Credentials{
		"admin":  {AccessKey: "admin", SecretKey: "as", Read: []string{"*"}, Write: []string{"*"}, Admin: true},
		"writer": {AccessKey: "writer", SecretKey: "ws", Read: []string{"*"}, Write: []string{"*"}},
	}
}

func putRetention(c *s3.Client, mode types.ObjectLockRetentionMode, until time.Time, bypass bool) error {
	in := &s3.PutObjectRetentionInput{Bucket: aws.String("bkt"), Key: aws.String("k"),
		Retention: &types.ObjectLockRetention{Mode: mode, RetainUntilDate: aws.Time(until)}}
	if bypass {
		in.BypassGovernanceRetention = aws.Bool(true)
	}
	_, err := c.PutObjectRetention(context.Background(), in)
	return err
}

// lockedKey is a fake store whose bucket has Object Lock and whose key
// "k" (version v1) has a retention of mode until a day from now, the
// server over it, and now.
func lockedKey(t *testing.T, mode string) (*fakeStore, string, time.Time) {
	f := newFakeStore()
	f.settings[sealstore.BucketObjectLock] = lockEnabledDoc
	now := time.Now().UTC().Truncate(time.Second)
	f.locks["k"] = sealstore.LockState{VersionID: "v1", Protection: sealstore.Protection{LockMode: mode, RetainUntil: now.Add(24 * time.Hour)}}
	return f, fakeServer(t, f, lockCreds()), now
}

func TestComplianceRetentionIsNeverShortened(t *testing.T) {
	f, url, now := lockedKey(t, "COMPLIANCE")
	admin := sdkClient(url, "admin", "as")
	for _, c := range []struct {
		mode   types.ObjectLockRetentionMode
		until  time.Time
		bypass bool
	}{
		{types.ObjectLockRetentionModeCompliance, now.Add(time.Hour), false},
		{types.ObjectLockRetentionModeCompliance, now.Add(time.Hour), true},
		{types.ObjectLockRetentionModeGovernance, now.Add(48 * time.Hour), true},
	} {
		if err := putRetention(admin, c.mode, c.until, c.bypass); errCode(err) != "AccessDenied" {
			t.Errorf("%s until %v (bypass %v) over an unexpired COMPLIANCE retention: %v, want AccessDenied", c.mode, c.until, c.bypass, err)
		}
	}
	if p := f.putCalls(); len(p) != 0 {
		t.Fatalf("refused changes reached the store: %+v", p)
	}
	if err := putRetention(admin, types.ObjectLockRetentionModeCompliance, now.Add(48*time.Hour), false); err != nil {
		t.Fatalf("extending a COMPLIANCE retention: %v", err)
	}
	p := f.putCalls()
	if len(p) != 1 || p[0].k != sealstore.ObjectRetention || p[0].ref != (sealstore.SettingRef{Bucket: "bkt", Key: "k", VersionID: "v1"}) || p[0].o.BypassGovernance {
		t.Fatalf("the extension reached the store as %+v, want one retention of bkt/k pinned to v1, no bypass", p)
	}
}

func TestGovernanceBypassIsAnAdminsAlone(t *testing.T) {
	f, url, now := lockedKey(t, "GOVERNANCE")
	admin, writer := sdkClient(url, "admin", "as"), sdkClient(url, "writer", "ws")
	if err := putRetention(writer, types.ObjectLockRetentionModeGovernance, now.Add(time.Hour), true); errCode(err) != "AccessDenied" {
		t.Errorf("a writer's bypass: %v, want AccessDenied", err)
	}
	if err := putRetention(admin, types.ObjectLockRetentionModeGovernance, now.Add(time.Hour), false); errCode(err) != "AccessDenied" {
		t.Errorf("an admin shortening without the bypass: %v, want AccessDenied", err)
	}
	if p := f.putCalls(); len(p) != 0 {
		t.Fatalf("refused changes reached the store: %+v", p)
	}
	if err := putRetention(admin, types.ObjectLockRetentionModeGovernance, now.Add(time.Hour), true); err != nil {
		t.Fatalf("an admin shortening with the bypass: %v", err)
	}
	if p := f.putCalls(); len(p) != 1 || !p[0].o.BypassGovernance || p[0].ref.VersionID != "v1" {
		t.Fatalf("the bypassed change reached the store as %+v, want the bypass on v1", p)
	}
}

func TestRetentionNeedsObjectLockOnTheBucket(t *testing.T) {
	f := newFakeStore()
	f.locks["k"] = sealstore.LockState{VersionID: "v1"}
	url := fakeServer(t, f, lockCreds())
	err := putRetention(sdkClient(url, "admin", "as"), types.ObjectLockRetentionModeGovernance, time.Now().Add(time.Hour), false)
	if errCode(err) != "InvalidRequest" {
		t.Errorf("a retention in a bucket without Object Lock: %v, want InvalidRequest", err)
	}
	_, err = sdkClient(url, "admin", "as").PutObjectRetention(context.Background(), &s3.PutObjectRetentionInput{Bucket: aws.String("bkt"), Key: aws.String("gone"),
		Retention: &types.ObjectLockRetention{Mode: types.ObjectLockRetentionModeGovernance, RetainUntilDate: aws.Time(time.Now().Add(time.Hour))}})
	if errCode(err) != "NoSuchKey" {
		t.Errorf("a retention of a missing key: %v, want NoSuchKey first", err)
	}
	if p := f.putCalls(); len(p) != 0 {
		t.Fatalf("refused changes reached the store: %+v", p)
	}
}

func TestLegalHoldWithoutStatusIsNone(t *testing.T) {
	f := newFakeStore()
	f.settings[sealstore.BucketObjectLock] = lockEnabledDoc
	f.settings[sealstore.ObjectLegalHold] = `<LegalHold></LegalHold>`
	f.locks["k"] = sealstore.LockState{VersionID: "v1"}
	url := fakeServer(t, f, lockCreds())
	_, err := sdkClient(url, "writer", "ws").GetObjectLegalHold(context.Background(), &s3.GetObjectLegalHoldInput{Bucket: aws.String("bkt"), Key: aws.String("k")})
	if errCode(err) != "NoSuchObjectLockConfiguration" {
		t.Errorf("a legal hold the store answers without a status: %v, want NoSuchObjectLockConfiguration", err)
	}
	f.settings[sealstore.ObjectLegalHold] = `<LegalHold><Status>ON</Status></LegalHold>`
	out, err := sdkClient(url, "writer", "ws").GetObjectLegalHold(context.Background(), &s3.GetObjectLegalHoldInput{Bucket: aws.String("bkt"), Key: aws.String("k")})
	if err != nil || out.LegalHold == nil || out.LegalHold.Status != types.ObjectLockLegalHoldStatusOn {
		t.Errorf("a legal hold ON: %+v, %v", out, err)
	}
}

func TestObjectLockConfigurationNeedsVersioning(t *testing.T) {
	f := newFakeStore()
	url := fakeServer(t, f, lockCreds())
	put := func() error {
		_, err := sdkClient(url, "admin", "as").PutObjectLockConfiguration(context.Background(), &s3.PutObjectLockConfigurationInput{Bucket: aws.String("bkt"),
			ObjectLockConfiguration: &types.ObjectLockConfiguration{ObjectLockEnabled: types.ObjectLockEnabledEnabled}})
		return err
	}
	if err := put(); errCode(err) != "InvalidBucketState" {
		t.Errorf("Object Lock on a bucket without versioning: %v, want InvalidBucketState", err)
	}
	if p := f.putCalls(); len(p) != 0 {
		t.Fatalf("a refused configuration reached the store: %+v", p)
	}
	f.versioning = "Enabled"
	if err := put(); err != nil {
		t.Fatalf("Object Lock on a versioned bucket: %v", err)
	}
	if p := f.putCalls(); len(p) != 1 || p[0].k != sealstore.BucketObjectLock || p[0].ref != (sealstore.SettingRef{Bucket: "bkt"}) {
		t.Fatalf("the configuration reached the store as %+v", p)
	}
}

func TestSettingsOfAStoreWithoutThem(t *testing.T) {
	f := newFakeStore()
	f.settings = nil
	url := fakeServer(t, f, lockCreds())
	_, err := sdkClient(url, "admin", "as").GetObjectTagging(context.Background(), &s3.GetObjectTaggingInput{Bucket: aws.String("bkt"), Key: aws.String("k")})
	if errCode(err) != "NotImplemented" {
		t.Errorf("?tagging on a store without settings: %v, want NotImplemented", err)
	}
}
