// Package awskms is the master-key provider for AWS KMS and anything that
// speaks its API (moto, LocalStack, local-kms). A master key is named
// aws-kms://<key id, ARN or alias>; endpoint, region and credentials come
// from the SDK's standard settings (AWS_ENDPOINT_URL_KMS or
// AWS_ENDPOINT_URL, AWS_REGION, the credential chain).
//
// An intermediate key is one GenerateDataKey (AES_256) under the master
// key with the encryption context s3seal gives; opening it is one Decrypt
// that names the master key, so a sealed key made under another key is
// refused by KMS itself; a rewrap is one ReEncrypt to the same key (KMS
// keeps its key versions to itself: Version answers "").
package awskms

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	awskms "github.com/aws/aws-sdk-go-v2/service/kms"
	"github.com/aws/aws-sdk-go-v2/service/kms/types"
	"github.com/aws/smithy-go"

	"github.com/s3seal/s3seal/kms"
)

// Prefix starts the URI of an AWS KMS master key.
const Prefix = "aws-kms://"

func init() { kms.Register(Prefix, open) }

func open(uri string, _ func(string) string) (kms.Provider, string, error) {
	name := strings.TrimPrefix(uri, Prefix)
	cfg, err := config.LoadDefaultConfig(context.Background())
	if err != nil {
		return nil, "", fmt.Errorf("aws-kms: the SDK's settings: %w", err)
	}
	if cfg.Region == "" {
		return nil, "", fmt.Errorf("aws-kms: no region: set AWS_REGION")
	}
	return New(awskms.NewFromConfig(cfg, func(o *awskms.Options) {
		o.Retryer = aws.NopRetryer{} // kms.Service retries, within its own bounds
	})), name, nil
}

// API is the part of the KMS client the provider calls.
type API interface {
	GenerateDataKey(context.Context, *awskms.GenerateDataKeyInput, ...func(*awskms.Options)) (*awskms.GenerateDataKeyOutput, error)
	Decrypt(context.Context, *awskms.DecryptInput, ...func(*awskms.Options)) (*awskms.DecryptOutput, error)
	ReEncrypt(context.Context, *awskms.ReEncryptInput, ...func(*awskms.Options)) (*awskms.ReEncryptOutput, error)
	DescribeKey(context.Context, *awskms.DescribeKeyInput, ...func(*awskms.Options)) (*awskms.DescribeKeyOutput, error)
}

// Provider is an AWS KMS kms.Provider.
type Provider struct{ api API }

// New returns a provider over a KMS client.
func New(api API) *Provider { return &Provider{api: api} }

// Scheme implements kms.Provider.
func (*Provider) Scheme() string { return "aws-kms" }

// GenerateKey implements kms.Provider: one GenerateDataKey. The
// canonical name is the key's ARN as KMS answers it.
func (p *Provider) GenerateKey(ctx context.Context, name string, kctx map[string]string) ([]byte, []byte, string, error) {
	out, err := p.api.GenerateDataKey(ctx, &awskms.GenerateDataKeyInput{
		KeyId: aws.String(name), KeySpec: types.DataKeySpecAes256, EncryptionContext: kctx})
	if err != nil {
		return nil, nil, "", classify(err)
	}
	arn := aws.ToString(out.KeyId)
	if len(out.Plaintext) != 32 || len(out.CiphertextBlob) == 0 || arn == "" {
		clear(out.Plaintext)
		return nil, nil, "", kms.Errorf(kms.Failed, "GenerateDataKey answered %d key bytes, %d sealed bytes, key id %q", len(out.Plaintext), len(out.CiphertextBlob), arn)
	}
	if !sameKey(name, arn) {
		clear(out.Plaintext)
		return nil, nil, "", kms.Errorf(kms.Invalid, "GenerateDataKey for %s answered with key %s", name, arn)
	}
	return out.Plaintext, out.CiphertextBlob, arn, nil
}

// Decrypt implements kms.Provider: one Decrypt naming the key, and the
// answer's key must be that key.
func (p *Provider) Decrypt(ctx context.Context, name string, sealed []byte, kctx map[string]string) ([]byte, error) {
	out, err := p.api.Decrypt(ctx, &awskms.DecryptInput{CiphertextBlob: sealed, KeyId: aws.String(name), EncryptionContext: kctx})
	if err != nil {
		return nil, classify(err)
	}
	if got := aws.ToString(out.KeyId); got != "" && !sameKey(name, got) {
		clear(out.Plaintext)
		return nil, kms.Errorf(kms.Invalid, "the sealed key was opened by key %s, not %s", got, name)
	}
	return out.Plaintext, nil
}

// Rewrap implements kms.Provider: one ReEncrypt from the key to itself,
// which seals under its current backing key.
func (p *Provider) Rewrap(ctx context.Context, name string, sealed []byte, kctx map[string]string) ([]byte, error) {
	out, err := p.api.ReEncrypt(ctx, &awskms.ReEncryptInput{CiphertextBlob: sealed,
		SourceKeyId: aws.String(name), DestinationKeyId: aws.String(name),
		SourceEncryptionContext: kctx, DestinationEncryptionContext: kctx})
	if err != nil {
		return nil, classify(err)
	}
	if len(out.CiphertextBlob) == 0 {
		return nil, kms.Errorf(kms.Failed, "ReEncrypt answered no ciphertext")
	}
	return out.CiphertextBlob, nil
}

// Version implements kms.Provider: AWS KMS does not say which backing key
// sealed a ciphertext.
func (*Provider) Version(string, []byte) string { return "" }

// Check implements kms.Provider: DescribeKey, and the key must be
// enabled.
func (p *Provider) Check(ctx context.Context, name string) error {
	out, err := p.api.DescribeKey(ctx, &awskms.DescribeKeyInput{KeyId: aws.String(name)})
	if err != nil {
		return classify(err)
	}
	if md := out.KeyMetadata; md != nil && md.KeyState != types.KeyStateEnabled {
		return kms.Errorf(kms.Disabled, "key %s is %s", name, md.KeyState)
	}
	return nil
}

// sameKey reports whether got (an ARN) is the key name names: the same
// ARN, or an ARN that ends in key/<name> for a bare key id. An alias
// (alias/...) resolves to any key, so only the ARN form is compared.
func sameKey(name, got string) bool {
	switch {
	case name == got:
		return true
	case strings.HasPrefix(name, "alias/"), strings.Contains(name, ":alias/"):
		return true
	case !strings.HasPrefix(name, "arn:"):
		return strings.HasSuffix(got, ":key/"+name)
	}
	return false
}

// classify gives a KMS error its kms.Kind.
func classify(err error) error {
	var (
		disabled *types.DisabledException
		state    *types.KMSInvalidStateException
		notFound *types.NotFoundException
		badCT    *types.InvalidCiphertextException
		wrongKey *types.IncorrectKeyException
		internal *types.KMSInternalException
		timeout  *types.DependencyTimeoutException
		netErr   net.Error
		opErr    *net.OpError
		apiErr   smithy.APIError
	)
	switch {
	case errors.As(err, &disabled), errors.As(err, &state):
		return &kms.ProviderError{Kind: kms.Disabled, Err: err}
	case errors.As(err, &notFound):
		return &kms.ProviderError{Kind: kms.NotFound, Err: err}
	case errors.As(err, &badCT), errors.As(err, &wrongKey):
		return &kms.ProviderError{Kind: kms.Invalid, Err: err}
	case errors.As(err, &internal), errors.As(err, &timeout), errors.As(err, &netErr), errors.As(err, &opErr),
		errors.Is(err, context.DeadlineExceeded):
		return &kms.ProviderError{Kind: kms.Unavailable, Err: err}
	case errors.As(err, &apiErr):
		switch code := apiErr.ErrorCode(); {
		case code == "AccessDeniedException":
			return &kms.ProviderError{Kind: kms.Denied, Err: err}
		case strings.Contains(code, "Throttl"), code == "LimitExceededException", code == "ServiceUnavailable",
			code == "InternalFailure", code == "KMSInternalException":
			return &kms.ProviderError{Kind: kms.Unavailable, Err: err}
		}
	}
	var re interface{ HTTPStatusCode() int }
	if errors.As(err, &re) && re.HTTPStatusCode() >= 500 {
		return &kms.ProviderError{Kind: kms.Unavailable, Err: err}
	}
	return &kms.ProviderError{Kind: kms.Failed, Err: err}
}
