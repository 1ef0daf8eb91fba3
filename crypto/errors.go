package crypto

import (
	"errors"
	"fmt"
)

// Error is the type of every error this package returns for data, metadata
// or keys it refuses. Kind says what went wrong and is one of the exported
// sentinels below; errors.Is(err, Kind) holds, and an error of kind
// [ErrAuth] also matches [ErrCorrupt]. Error strings never contain key
// material.
type Error struct {
	Kind error  // ErrAuth, ErrCorrupt, ErrUnknownKey, ErrVersion, ErrKeyring or ErrCustomerKey
	Msg  string // detail, e.g. which segment failed
	// KeyID is the master key id the envelope names, on an ErrUnknownKey
	// and on an ErrAuth of the wrapped data key (which then also matches
	// ErrKeyMismatch).
	KeyID string
	// wrap marks an ErrAuth of the wrapped data key.
	wrap bool
}

type sentinel string

func (s sentinel) Error() string { return string(s) }

// The kinds of [Error].
var (
	// ErrCorrupt: data or metadata is malformed (a size no plaintext maps
	// to, a stream that ends early or goes on after its final segment, a
	// metadata value that does not parse). Every ErrAuth error matches it
	// too, so errors.Is(err, ErrCorrupt) catches every integrity failure.
	ErrCorrupt error = sentinel("corrupt data")

	// ErrAuth: AES-GCM authentication failed: the ciphertext, the wrapped
	// key or the values bound into them (object id, part, segment index,
	// final flag, key id, plaintext size and MD5) are not what they were
	// sealed with, or the key is wrong.
	ErrAuth error = sentinel("authentication failed")

	// ErrUnknownKey: the envelope names a master key id that is not in the
	// keyring (the message names the id).
	ErrUnknownKey error = sentinel("unknown key id")

	// ErrVersion: the metadata names a format version other than 1.
	ErrVersion error = sentinel("unsupported format version")

	// ErrKeyring: a keyring, key id or master key is invalid.
	ErrKeyring error = sentinel("invalid keyring")

	// ErrCustomerKey: the customer key (SSE-C) given to read an object is
	// not the one it was sealed with.
	ErrCustomerKey error = sentinel("wrong customer key")

	// ErrKeyMismatch is matched (besides ErrAuth and ErrCorrupt) by the
	// failure to open a wrapped data key under the master key of the id
	// its envelope names: the keyring holds a different key under that
	// id (a wrong key file, a key replaced), or the wrapped key was
	// altered. One object cannot tell the two apart; many objects of a
	// store of which none opens can (docs/DESIGN.md, "A wrong master
	// key").
	ErrKeyMismatch error = sentinel("the master key does not open the wrapped data key")
)

func (e *Error) Error() string {
	if e.Msg == "" {
		return e.Kind.Error()
	}
	return e.Kind.Error() + ": " + e.Msg
}

// Unwrap returns e.Kind.
func (e *Error) Unwrap() error { return e.Kind }

// Is reports that an authentication failure is also corruption, and a
// wrapped key's is also ErrKeyMismatch.
func (e *Error) Is(target error) bool {
	return target == ErrCorrupt && e.Kind == ErrAuth || target == ErrKeyMismatch && e.wrap
}

// KeyIDOf is the master key id an ErrUnknownKey or ErrKeyMismatch error
// names, "" for any other error.
func KeyIDOf(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.KeyID
	}
	return ""
}

// Misuse of a stream; not about the data, so not an *Error.
var (
	errWriteAfterClose = errors.New("write after Close")
	errNilDataKey      = errors.New("nil DataKey")
)

func newErr(kind error, format string, args ...any) *Error {
	return &Error{Kind: kind, Msg: fmt.Sprintf(format, args...)}
}
