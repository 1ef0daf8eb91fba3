package awskms_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	sdkkms "github.com/aws/aws-sdk-go-v2/service/kms"

	"github.com/s3seal/s3seal/crypto"
	"github.com/s3seal/s3seal/internal/localkms"
	"github.com/s3seal/s3seal/internal/moto"
	"github.com/s3seal/s3seal/kms"
)

// motoKMS starts moto_server and points the SDK's standard settings at
// its KMS, as an operator would.
func motoKMS(t *testing.T) *sdkkms.Client {
	t.Helper()
	return useKMS(t, moto.Start(t), "us-east-1")
}

// localKMS is motoKMS with local-kms, which refuses a disabled key (moto
// opens sealed keys whatever the key's state).
func localKMS(t *testing.T) *sdkkms.Client {
	t.Helper()
	return useKMS(t, localkms.Start(t), localkms.Region)
}

func useKMS(t *testing.T, endpoint, region string) *sdkkms.Client {
	t.Helper()
	t.Setenv("AWS_ENDPOINT_URL_KMS", endpoint)
	t.Setenv("AWS_REGION", region)
	t.Setenv("AWS_ACCESS_KEY_ID", "test")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "test")
	t.Setenv("AWS_CA_BUNDLE", "")
	return sdkkms.New(sdkkms.Options{Region: region, BaseEndpoint: aws.String(endpoint),
		Credentials: credentials.NewStaticCredentialsProvider("test", "test", ""), RetryMaxAttempts: 1})
}

func createKey(t *testing.T, c *sdkkms.Client) string {
	t.Helper()
	out, err := c.CreateKey(context.Background(), &sdkkms.CreateKeyInput{})
	if err != nil {
		t.Fatal(err)
	}
	return aws.ToString(out.KeyMetadata.Arn)
}

func openURI(t *testing.T, uri string) (kms.Provider, string) {
	t.Helper()
	p, name, err := kms.Open(uri, func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	return p, name
}

func TestRoundTripThroughTheSDKSettings(t *testing.T) {
	c := motoKMS(t)
	arn := createKey(t, c)
	keyID := arn[strings.LastIndex(arn, "/")+1:]
	p, name := openURI(t, "aws-kms://"+keyID)
	if name != keyID {
		t.Fatalf("name %q, want %q", name, keyID)
	}
	ctx := context.Background()
	kctx := map[string]string{"aws:s3:arn": "arn:aws:s3:::b/k"}
	plain, sealed, canonical, err := p.GenerateKey(ctx, name, kctx)
	if err != nil {
		t.Fatal(err)
	}
	if canonical != arn || len(plain) != 32 {
		t.Fatalf("canonical %q (want %q), %d key bytes", canonical, arn, len(plain))
	}
	got, err := p.Decrypt(ctx, canonical, sealed, kctx)
	if err != nil || string(got) != string(plain) {
		t.Fatalf("decrypt: %v, same key %v", err, string(got) == string(plain))
	}
	if _, err := p.Decrypt(ctx, canonical, sealed, map[string]string{"aws:s3:arn": "arn:aws:s3:::b/other"}); err == nil {
		t.Fatal("a sealed key opened under another object's context")
	}
	re, err := p.Rewrap(ctx, canonical, sealed, kctx)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := p.Decrypt(ctx, canonical, re, kctx); err != nil || string(got) != string(plain) {
		t.Fatalf("decrypt after rewrap: %v", err)
	}
	if err := p.Check(ctx, canonical); err != nil {
		t.Fatal(err)
	}
}

func TestAnotherKeysSealedKeyIsRefused(t *testing.T) {
	c := motoKMS(t)
	a, b := createKey(t, c), createKey(t, c)
	p, _ := openURI(t, "aws-kms://"+a)
	ctx := context.Background()
	kctx := map[string]string{"aws:s3:arn": "arn:aws:s3:::b/k"}
	_, sealed, _, err := p.GenerateKey(ctx, b, kctx)
	if err != nil {
		t.Fatal(err)
	}
	_, err = p.Decrypt(ctx, a, sealed, kctx)
	// AWS answers IncorrectKeyException; moto AccessDeniedException.
	if k := kindOf(err); k != kms.Invalid && k != kms.Denied {
		t.Fatalf("key b's sealed key opened as key a: %v (kind %v)", err, k)
	}
}

func kindOf(err error) kms.Kind {
	var pe *kms.ProviderError
	if errors.As(err, &pe) {
		return pe.Kind
	}
	return 0
}

func TestDisabledAndUnknownKeysAreNamed(t *testing.T) {
	c := localKMS(t)
	arn := createKey(t, c)
	p, _ := openURI(t, "aws-kms://"+arn)
	ctx := context.Background()
	kctx := map[string]string{"aws:s3:arn": "arn:aws:s3:::b/k"}
	_, sealed, _, err := p.GenerateKey(ctx, arn, kctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.DisableKey(ctx, &sdkkms.DisableKeyInput{KeyId: aws.String(arn[strings.LastIndex(arn, "/")+1:])}); err != nil {
		t.Fatal(err)
	}
	if _, err := p.Decrypt(ctx, arn, sealed, kctx); kindOf(err) != kms.Disabled {
		t.Fatalf("decrypt under a disabled key: %v (kind %v), want Disabled", err, kindOf(err))
	}
	if err := p.Check(ctx, arn); kindOf(err) != kms.Disabled {
		t.Fatalf("check of a disabled key: %v, want Disabled", err)
	}
	if _, _, _, err := p.GenerateKey(ctx, arn, kctx); kindOf(err) != kms.Disabled {
		t.Fatalf("generate under a disabled key: %v (kind %v), want Disabled", err, kindOf(err))
	}
	missing := "arn:aws:kms:" + localkms.Region + ":" + localkms.Account + ":key/00000000-0000-0000-0000-000000000000"
	if _, _, _, err := p.GenerateKey(ctx, missing, kctx); kindOf(err) != kms.NotFound {
		t.Fatalf("generate under an unknown key: %v (kind %v), want NotFound", err, kindOf(err))
	}
}

func TestUnreachableKMSIsUnavailable(t *testing.T) {
	t.Setenv("AWS_ENDPOINT_URL_KMS", "http://127.0.0.1:1")
	t.Setenv("AWS_REGION", "us-east-1")
	t.Setenv("AWS_ACCESS_KEY_ID", "test")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "test")
	t.Setenv("AWS_CA_BUNDLE", "")
	p, name := openURI(t, "aws-kms://k")
	_, _, _, err := p.GenerateKey(context.Background(), name, nil)
	if kindOf(err) != kms.Unavailable {
		t.Fatalf("refused connection: %v (kind %v), want Unavailable", err, kindOf(err))
	}
}

// TestKeyringOverTheService wraps and unwraps a data key through the
// whole chain: crypto's keyring, kms.Service, this provider and moto.
func TestKeyringOverTheService(t *testing.T) {
	c := motoKMS(t)
	arn := createKey(t, c)
	p, _ := openURI(t, "aws-kms://"+arn)
	var calls counter
	svc, err := kms.NewService(kms.Options{Observer: &calls}, p)
	if err != nil {
		t.Fatal(err)
	}
	kr, err := (*crypto.Keyring)(nil).WithService(svc, "aws-kms:"+arn, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	dk, err := crypto.NewDataKey()
	if err != nil {
		t.Fatal(err)
	}
	name := crypto.Name{Bucket: "b", Key: "k"}
	env, err := kr.Wrap(ctx, dk, "", name, crypto.Binding{Multipart: true})
	if err != nil {
		t.Fatal(err)
	}
	if env.KeyID != "aws-kms:"+arn || len(env.SealedKey) == 0 {
		t.Fatalf("envelope key %q, %d sealed bytes", env.KeyID, len(env.SealedKey))
	}
	env2, _, _ := crypto.ParseMetadata(env.Metadata())
	if _, _, err := kr.Unwrap(ctx, env2, name); err != nil {
		t.Fatal(err)
	}
	if calls.n["generate ok"] != 1 || calls.n["decrypt ok"] != 1 {
		t.Fatalf("calls %v: want one generate, the decrypt that checks it, and the read from the cache", calls.n)
	}
	if _, _, err := kr.Unwrap(ctx, env2, crypto.Name{Bucket: "b", Key: "moved"}); err == nil {
		t.Fatal("an envelope unwrapped under another name")
	}
}

type counter struct{ n map[string]int }

func (c *counter) KMSRequest(op, outcome string, _ time.Duration) {
	if c.n == nil {
		c.n = map[string]int{}
	}
	c.n[op+" "+outcome]++
}
