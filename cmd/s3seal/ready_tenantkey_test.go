package main

import (
	"context"
	"testing"

	"github.com/s3seal/s3seal/crypto"
	"github.com/s3seal/s3seal/kms"
	"github.com/s3seal/s3seal/s3api"
)

// checkProvider is a key service whose Check refuses the keys in
// disabled, as KMS's DescribeKey reports a disabled key.
type checkProvider struct{ disabled map[string]bool }

func (checkProvider) Scheme() string { return "aws-kms" }
func (checkProvider) GenerateKey(context.Context, string, map[string]string) ([]byte, []byte, string, error) {
	return nil, nil, "", kms.Errorf(kms.Failed, "not used")
}
func (checkProvider) Decrypt(context.Context, string, []byte, map[string]string) ([]byte, error) {
	return nil, kms.Errorf(kms.Failed, "not used")
}
func (checkProvider) Rewrap(context.Context, string, []byte, map[string]string) ([]byte, error) {
	return nil, kms.Errorf(kms.Failed, "not used")
}
func (checkProvider) Version(string, []byte) string { return "" }
func (p checkProvider) Check(_ context.Context, name string) error {
	if p.disabled[name] {
		return kms.Errorf(kms.Disabled, "key %s is Disabled", name)
	}
	return nil
}

// TestReadyzIgnoresOneTenantsDisabledKey: with a local primary and the
// KMS holding the tenants' keys (DESIGN's "a key per tenant", e2e
// kmsTenants), disabling one tenant's key (its crypto-shred) must not
// make /readyz fail: every replica would leave the load balancer and
// every tenant would lose service. Today the probe checks the first
// credential's KMS key (by access key order) and answers 503.
func TestReadyzIgnoresOneTenantsDisabledKey(t *testing.T) {
	const keyA = "arn:aws:kms:eu-west-2:111122223333:key/aaaaaaaa-0000-0000-0000-000000000000"
	const keyB = "arn:aws:kms:eu-west-2:111122223333:key/bbbbbbbb-0000-0000-0000-000000000000"
	svc, err := kms.NewService(kms.Options{}, checkProvider{disabled: map[string]bool{keyA: true}})
	if err != nil {
		t.Fatal(err)
	}
	local, _ := crypto.GenerateKey()
	lkr, err := crypto.NewKeyring("default", map[string][]byte{"default": local})
	if err != nil {
		t.Fatal(err)
	}
	kr, err := lkr.WithService(svc, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	creds := s3api.Credentials{
		"tenant-a": {AccessKey: "tenant-a", SecretKey: "a", Read: []string{"a"}, Write: []string{"a"}, KeyID: "aws-kms:" + keyA},
		"tenant-b": {AccessKey: "tenant-b", SecretKey: "b", Read: []string{"b"}, Write: []string{"b"}, KeyID: "aws-kms:" + keyB},
	}
	ks := keys{kr: kr, svc: svc}
	r := newReadiness(&flakyLister{}, kr, nil)
	r.kms, r.kmsKeys = svc, kmsProbeKeys(ks, creds)
	if err := r.check(context.Background()); err != nil {
		t.Fatalf("tenant a's key is disabled (probe keys %v): /readyz answers %q for every tenant", r.kmsKeys, err)
	}
}
