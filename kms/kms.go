// Package kms reaches master keys held outside s3seal: a KMS (AWS KMS or
// anything that speaks its API), Vault or OpenBao Transit, or a PKCS#11
// HSM. A Provider is one such service; a Service puts the providers
// behind crypto.KeyService with what every provider needs alike: the
// encryption context S3 binds, bounded timeouts and retries, a bounded,
// time-limited cache of opened keys, bucket keys, metrics, and errors
// that name the key.
//
// The providers live in the subpackages (awskms, vault, pkcs11) and are
// made from the URI an operator names a key by (Open).
package kms

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// A Provider is one key service. Key names are the provider's own (an
// AWS key id, ARN or alias; a Transit key name; a PKCS#11 object label);
// the external id of a key is the provider's scheme, a colon and its
// canonical name.
//
// A provider makes no retries of its own: Service retries what Transient
// says may succeed on another attempt, within its own bounds.
type Provider interface {
	// Scheme is the prefix of the provider's external ids: "aws-kms",
	// "hcvault" or "pkcs11".
	Scheme() string
	// GenerateKey returns a fresh 32-byte key, the key sealed under the
	// master key name, bound to kctx where the service can bind a
	// context, and the master key's canonical name (an alias resolved).
	GenerateKey(ctx context.Context, name string, kctx map[string]string) (plain, sealed []byte, canonical string, err error)
	// Decrypt opens sealed, which GenerateKey or Rewrap made under the
	// master key name with kctx. A sealed key made under another master
	// key is refused, even when the service could open it.
	Decrypt(ctx context.Context, name string, sealed []byte, kctx map[string]string) ([]byte, error)
	// Rewrap seals sealed's key anew under the master key's current
	// version, inside the service (the key never reaches s3seal).
	Rewrap(ctx context.Context, name string, sealed []byte, kctx map[string]string) ([]byte, error)
	// Version names the version of the master key that sealed holds,
	// "" when the service does not tell (AWS KMS keeps its versions to
	// itself).
	Version(name string, sealed []byte) string
	// Check makes one cheap call that tells whether the service answers
	// and the master key can be used.
	Check(ctx context.Context, name string) error
}

// Kind says why a key service failed, so that a caller answers the
// client as S3 does.
type Kind int

const (
	// Unavailable: the service did not answer, timed out or said it is
	// unavailable or throttling. Transient: retried, then a 503.
	Unavailable Kind = iota + 1
	// Disabled: the master key exists but is disabled or pending
	// deletion.
	Disabled
	// NotFound: no master key of that name.
	NotFound
	// Denied: the service refuses s3seal's credential for this key.
	Denied
	// Invalid: the sealed key is not one this master key made (the wrong
	// key, another context, or damaged).
	Invalid
	// Failed: anything else the service refused.
	Failed
)

func (k Kind) String() string {
	switch k {
	case Unavailable:
		return "unavailable"
	case Disabled:
		return "disabled"
	case NotFound:
		return "not found"
	case Denied:
		return "access denied"
	case Invalid:
		return "invalid ciphertext"
	}
	return "failed"
}

// Error is a key service's failure, naming the service and the key. Its
// message never holds key material.
type Error struct {
	Kind Kind
	// Key is the master key's external id.
	Key string
	// Op is the call: "generate", "decrypt", "rewrap" or "check".
	Op  string
	Err error
}

func (e *Error) Error() string {
	return fmt.Sprintf("KMS %s of key %s: %s: %v", e.Op, e.Key, e.Kind, e.Err)
}

func (e *Error) Unwrap() error { return e.Err }

// KindOf returns the Kind of a key service error in err's chain, 0 if
// there is none.
func KindOf(err error) Kind {
	var e *Error
	if errors.As(err, &e) {
		return e.Kind
	}
	return 0
}

// KeyOf returns the external id of the master key a key service error in
// err's chain names, "" if there is none.
func KeyOf(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Key
	}
	return ""
}

// ProviderError is what a Provider returns to say which Kind of failure
// it met; any other error is Failed, and a context deadline Unavailable.
type ProviderError struct {
	Kind Kind
	Err  error
}

func (e *ProviderError) Error() string { return e.Err.Error() }
func (e *ProviderError) Unwrap() error { return e.Err }

// Errorf returns a ProviderError of kind k.
func Errorf(k Kind, format string, args ...any) error {
	return &ProviderError{Kind: k, Err: fmt.Errorf(format, args...)}
}

func kindOfProviderError(err error) Kind {
	var pe *ProviderError
	switch {
	case errors.As(err, &pe):
		return pe.Kind
	case errors.Is(err, context.DeadlineExceeded):
		return Unavailable
	}
	return Failed
}

// Observer counts the calls a Service makes (metrics). Its methods must
// be safe for concurrent use and return quickly.
type Observer interface {
	// KMSRequest reports one call to a key service: its operation
	// ("generate", "decrypt", "rewrap", "check"), outcome ("ok" or the
	// Kind's name with spaces as '_') and how long it took.
	KMSRequest(operation, outcome string, d time.Duration)
}
