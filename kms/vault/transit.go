package vault

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"

	"github.com/hashicorp/vault/api"

	"github.com/s3seal/s3seal/kms"
)

// keyBits is the size of the keys GenerateKey asks for.
const keyBits = 256

// GenerateKey implements kms.Provider: datakey/plaintext/<name>.
func (p *Provider) GenerateKey(ctx context.Context, name string, _ map[string]string) (plain, sealed []byte, canonical string, err error) {
	if name, err = p.keyName(name); err != nil {
		return nil, nil, "", err
	}
	data, err := p.write(ctx, "datakey/plaintext/"+name, map[string]any{"bits": keyBits})
	if err != nil {
		return nil, nil, "", err
	}
	plain, err = plaintextOf(data)
	if err != nil {
		return nil, nil, "", err
	}
	ct, _ := data["ciphertext"].(string)
	if !strings.HasPrefix(ct, "vault:v") {
		clear(plain)
		return nil, nil, "", kms.Errorf(kms.Failed, "hcvault: datakey answered no ciphertext")
	}
	return plain, []byte(ct), name, nil
}

// Decrypt implements kms.Provider: decrypt/<name>.
func (p *Provider) Decrypt(ctx context.Context, name string, sealed []byte, _ map[string]string) ([]byte, error) {
	name, err := p.keyName(name)
	if err != nil {
		return nil, err
	}
	if err := checkCiphertext(sealed); err != nil {
		return nil, err
	}
	data, err := p.write(ctx, "decrypt/"+name, map[string]any{"ciphertext": string(sealed)})
	if err != nil {
		return nil, err
	}
	return plaintextOf(data)
}

// Rewrap implements kms.Provider: rewrap/<name>, which seals under the
// key's latest version.
func (p *Provider) Rewrap(ctx context.Context, name string, sealed []byte, _ map[string]string) ([]byte, error) {
	name, err := p.keyName(name)
	if err != nil {
		return nil, err
	}
	if err := checkCiphertext(sealed); err != nil {
		return nil, err
	}
	data, err := p.write(ctx, "rewrap/"+name, map[string]any{"ciphertext": string(sealed)})
	if err != nil {
		return nil, err
	}
	ct, _ := data["ciphertext"].(string)
	if !strings.HasPrefix(ct, "vault:v") {
		return nil, kms.Errorf(kms.Failed, "hcvault: rewrap answered no ciphertext")
	}
	return []byte(ct), nil
}

// Version implements kms.Provider: "v<N>" of a "vault:v<N>:" ciphertext,
// "" for anything else.
func (p *Provider) Version(_ string, sealed []byte) string {
	rest, ok := strings.CutPrefix(string(sealed), "vault:")
	if !ok {
		return ""
	}
	v, _, ok := strings.Cut(rest, ":")
	if !ok || len(v) < 2 || len(v) > 11 || v[0] != 'v' || strings.Trim(v[1:], "0123456789") != "" {
		return ""
	}
	return v
}

// Check implements kms.Provider: it reads the key, which tells that the
// server answers, the token may read the key, and the key exists and can
// encrypt and decrypt without a context.
func (p *Provider) Check(ctx context.Context, name string) error {
	name, err := p.keyName(name)
	if err != nil {
		return err
	}
	if err := p.refreshToken(); err != nil {
		return err
	}
	ctx, cancel := withDefaultTimeout(ctx)
	defer cancel()
	s, err := p.client.Logical().ReadWithContext(ctx, p.mount+"/keys/"+name)
	if err != nil {
		return p.classify(err)
	}
	if s == nil || s.Data == nil {
		return kms.Errorf(kms.NotFound, "hcvault: no key %s in %s", name, p)
	}
	typ, _ := s.Data["type"].(string)
	if enc, _ := s.Data["supports_encryption"].(bool); !enc {
		return kms.Errorf(kms.Failed, "hcvault: key %s is of type %s, which does not encrypt", name, typ)
	}
	if dec, _ := s.Data["supports_decryption"].(bool); !dec {
		return kms.Errorf(kms.Failed, "hcvault: key %s is of type %s, which does not decrypt", name, typ)
	}
	if derived, _ := s.Data["derived"].(bool); derived {
		return kms.Errorf(kms.Failed, "hcvault: key %s is derived (derived=true): s3seal gives Transit no context; create the key without derivation", name)
	}
	return nil
}

// write makes one call to <mount>/<path> and returns the answer's data.
func (p *Provider) write(ctx context.Context, path string, body map[string]any) (map[string]any, error) {
	if err := p.refreshToken(); err != nil {
		return nil, err
	}
	ctx, cancel := withDefaultTimeout(ctx)
	defer cancel()
	s, err := p.client.Logical().WriteWithContext(ctx, p.mount+"/"+path, body)
	if err != nil {
		return nil, p.classify(err)
	}
	if s == nil || s.Data == nil {
		// A 404 without errors: no such route.
		return nil, kms.Errorf(kms.NotFound, "hcvault: %s answered nothing for %s (is a Transit engine mounted there?)", p, path)
	}
	return s.Data, nil
}

func withDefaultTimeout(ctx context.Context) (context.Context, context.CancelFunc) {
	if _, ok := ctx.Deadline(); ok {
		return ctx, func() {}
	}
	return context.WithTimeout(ctx, callTimeout)
}

// plaintextOf decodes the base64 "plaintext" of an answer, which must be
// a 32-byte key.
func plaintextOf(data map[string]any) ([]byte, error) {
	b64, _ := data["plaintext"].(string)
	plain, err := base64.StdEncoding.DecodeString(b64)
	if err != nil || len(plain) != keyBits/8 {
		clear(plain)
		return nil, kms.Errorf(kms.Failed, "hcvault: the answer holds no %d-bit key", keyBits)
	}
	return plain, nil
}

// checkCiphertext refuses, without asking Vault, what is not a Transit
// ciphertext.
func checkCiphertext(sealed []byte) error {
	if !strings.HasPrefix(string(sealed), "vault:v") {
		return kms.Errorf(kms.Invalid, "hcvault: the sealed key is not a Transit ciphertext")
	}
	for _, c := range sealed {
		if c < 0x21 || c > 0x7e {
			return kms.Errorf(kms.Invalid, "hcvault: the sealed key is not a Transit ciphertext")
		}
	}
	return nil
}

// classify gives an error of the api client its kms.Kind.
func (p *Provider) classify(err error) error {
	var re *api.ResponseError
	if !errors.As(err, &re) {
		return p.classifyTransport(err)
	}
	// Vault's messages may span lines ("2 errors occurred:\n\t* ...").
	msg := strings.Join(strings.Fields(strings.Join(re.Errors, "; ")), " ")
	if re.RawError {
		// Not Vault's JSON: a proxy's page, or a TLS server's answer to
		// plain http.
		if len(msg) > 200 {
			msg = msg[:200] + "..."
		}
		msg = "not Vault's answer: " + msg
		if strings.Contains(msg, "HTTP request to an HTTPS server") {
			msg += " (drop tls=false from the URI)"
		}
	}
	e := fmt.Errorf("hcvault: %s answered %d: %s", p.addr, re.StatusCode, msg)
	has := func(s string) bool { return strings.Contains(msg, s) }
	switch {
	case re.StatusCode == 429 || re.StatusCode == 412 || re.StatusCode >= 500:
		return &kms.ProviderError{Kind: kms.Unavailable, Err: e}
	case re.StatusCode == 403:
		return &kms.ProviderError{Kind: kms.Denied, Err: e}
	case re.StatusCode == 404 || has("encryption key not found"):
		return &kms.ProviderError{Kind: kms.NotFound, Err: e}
	case has("disallowed by policy (too old)"):
		return &kms.ProviderError{Kind: kms.Disabled, Err: fmt.Errorf("%w (the key version was retired: min_decryption_version)", e)}
	case has("message authentication failed") || has("invalid ciphertext"):
		return &kms.ProviderError{Kind: kms.Invalid, Err: e}
	}
	return &kms.ProviderError{Kind: kms.Failed, Err: e}
}

// classifyTransport gives a failure that got no answer from Vault its
// kind: Unavailable, but for a certificate that does not verify and a
// server that speaks the other of http and https, which no retry mends.
func (p *Provider) classifyTransport(err error) error {
	var (
		unknownCA  x509.UnknownAuthorityError
		hostname   x509.HostnameError
		invalid    x509.CertificateInvalidError
		verify     *tls.CertificateVerificationError
		recordHdr  tls.RecordHeaderError
		contextErr = errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled)
	)
	switch {
	case contextErr:
		return &kms.ProviderError{Kind: kms.Unavailable, Err: fmt.Errorf("hcvault: %s did not answer in time: %w", p.addr, err)}
	case errors.As(err, &unknownCA) || errors.As(err, &hostname) || errors.As(err, &invalid) || errors.As(err, &verify):
		return kms.Errorf(kms.Failed, "hcvault: %s: its certificate does not verify (give its CA in VAULT_CACERT): %v", p.addr, err)
	case errors.As(err, &recordHdr):
		return kms.Errorf(kms.Failed, "hcvault: %s does not speak TLS (a dev server? add ?tls=false to the URI): %v", p.addr, err)
	case strings.Contains(err.Error(), "server gave HTTP response to HTTPS client"):
		return kms.Errorf(kms.Failed, "hcvault: %s does not speak TLS (a dev server? add ?tls=false to the URI)", p.addr)
	}
	return &kms.ProviderError{Kind: kms.Unavailable, Err: fmt.Errorf("hcvault: %s: %w", p.addr, err)}
}
