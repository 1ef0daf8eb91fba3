package crypto

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
)

// LoadKeyringFile reads a keyring from a JSON file of the form
//
//	{"primary": "k2", "keys": {"k1": "<base64>", "k2": "<base64>"}}
//
// See [ParseKeyring] for the rules. A file that cannot be read returns the
// os error (wrapped, so errors.Is(err, fs.ErrNotExist) works). It does not
// check the file's permissions; s3seal serve refuses a keyring file its
// group or others may access.
func LoadKeyringFile(path string) (*Keyring, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("keyring file: %w", err)
	}
	kr, err := ParseKeyring(b)
	if err != nil {
		return nil, fmt.Errorf("keyring file %s: %w", path, err)
	}
	return kr, nil
}

// ParseKeyring parses the JSON keyring document described at
// [LoadKeyringFile]. Each key is standard base64 of 32 bytes ([ParseKey]).
// It refuses unknown or repeated fields, repeated key ids, values of the
// wrong JSON type and anything after the document, with an error matching
// [ErrKeyring]. Errors name fields, ids, lines and columns but never quote
// key material, not even one character of a malformed document.
func ParseKeyring(data []byte) (*Keyring, error) {
	doc, err := ParseKeyringDoc(data)
	if err != nil {
		return nil, err
	}
	if len(doc.KMS) > 0 {
		return nil, newErr(ErrKeyring, `field "kms" names master keys held outside s3seal, which need a key service`)
	}
	return NewKeyring(doc.Primary, doc.Keys)
}

// KeyringDoc is a keyring file as written: the primary key's id, the
// local keys, and the master keys held outside s3seal by local id ->
// URI (aws-kms://..., hcvault://..., pkcs11:...), as in
//
//	{"primary": "tenant-a", "keys": {"k1": "<base64>"},
//	 "kms": {"tenant-a": "aws-kms://arn:aws:kms:...:key/...", "tenant-b": "aws-kms://alias/b"}}
//
// The URIs are not judged here: the key service opens them.
type KeyringDoc struct {
	Primary string
	Keys    map[string][]byte
	KMS     map[string]string
}

// ParseKeyringDoc parses a keyring file with the rules of [ParseKeyring];
// "keys" may be absent or empty when "kms" names a key. A "kms" id must
// be a valid local id that "keys" does not also name.
func ParseKeyringDoc(data []byte) (KeyringDoc, error) {
	p := keyfileParser{dec: json.NewDecoder(bytes.NewReader(data)), data: data}
	doc, err := p.document()
	if err != nil {
		return KeyringDoc{}, err
	}
	for id := range doc.KMS {
		if !ValidKeyID(id) {
			return KeyringDoc{}, newErr(ErrKeyring, "invalid key id %q (want 1 to 64 of [A-Za-z0-9._-])", id)
		}
		if _, dup := doc.Keys[id]; dup {
			return KeyringDoc{}, newErr(ErrKeyring, "key id %q is in both \"keys\" and \"kms\"", id)
		}
	}
	return doc, nil
}

type keyfileParser struct {
	dec  *json.Decoder
	data []byte
}

// where is the decoder's position as "line L, column C" (1-based; the
// column counts bytes).
func (p *keyfileParser) where() string {
	off := min(int(p.dec.InputOffset()), len(p.data))
	before := p.data[:off]
	line := bytes.Count(before, []byte{'\n'}) + 1
	col := off - bytes.LastIndexByte(before, '\n')
	return fmt.Sprintf("line %d, column %d", line, col)
}

func (p *keyfileParser) document() (doc KeyringDoc, err error) {
	fail := func(err error) (KeyringDoc, error) { return KeyringDoc{}, err }
	if err := p.delim('{', "document"); err != nil {
		return fail(err)
	}
	seenPrimary := false
	for p.dec.More() {
		field, err := p.str("field name")
		if err != nil {
			return fail(err)
		}
		switch field {
		case "primary":
			if seenPrimary {
				return fail(newErr(ErrKeyring, `field "primary" appears twice`))
			}
			seenPrimary = true
			if doc.Primary, err = p.str(`value of "primary"`); err != nil {
				return fail(err)
			}
		case "keys":
			if doc.Keys != nil {
				return fail(newErr(ErrKeyring, `field "keys" appears twice`))
			}
			if doc.Keys, err = p.keys(); err != nil {
				return fail(err)
			}
		case "kms":
			if doc.KMS != nil {
				return fail(newErr(ErrKeyring, `field "kms" appears twice`))
			}
			if doc.KMS, err = p.uris(); err != nil {
				return fail(err)
			}
		default:
			return fail(newErr(ErrKeyring, "unknown field %q", field))
		}
	}
	if err := p.delim('}', "end of document"); err != nil {
		return fail(err)
	}
	if _, err := p.dec.Token(); err != io.EOF {
		return fail(newErr(ErrKeyring, "data after the JSON document"))
	}
	if !seenPrimary {
		return fail(newErr(ErrKeyring, `missing field "primary"`))
	}
	if doc.Keys == nil && doc.KMS == nil {
		return fail(newErr(ErrKeyring, `missing field "keys"`))
	}
	return doc, nil
}

// uris reads the "kms" object: local id -> master key URI.
func (p *keyfileParser) uris() (map[string]string, error) {
	if err := p.delim('{', `value of "kms"`); err != nil {
		return nil, err
	}
	uris := map[string]string{}
	for p.dec.More() {
		id, err := p.str("key id")
		if err != nil {
			return nil, err
		}
		if _, dup := uris[id]; dup {
			return nil, newErr(ErrKeyring, "key id %q appears twice", id)
		}
		if uris[id], err = p.str("the URI of key " + strconv.Quote(id)); err != nil {
			return nil, err
		}
	}
	return uris, p.delim('}', `end of "kms"`)
}

func (p *keyfileParser) keys() (map[string][]byte, error) {
	if err := p.delim('{', `value of "keys"`); err != nil {
		return nil, err
	}
	keys := map[string][]byte{}
	for p.dec.More() {
		id, err := p.str("key id")
		if err != nil {
			return nil, err
		}
		if _, dup := keys[id]; dup {
			return nil, newErr(ErrKeyring, "key id %q appears twice", id)
		}
		b64, err := p.str("the value of key " + strconv.Quote(id))
		if err != nil {
			return nil, err
		}
		k, err := ParseKey(b64)
		if err != nil {
			var e *Error
			if errors.As(err, &e) {
				return nil, newErr(ErrKeyring, "key %q: %s", id, e.Msg)
			}
			return nil, err
		}
		keys[id] = k
	}
	return keys, p.delim('}', `end of "keys"`)
}

// token reads the next token. A syntax error is reported by position only:
// encoding/json quotes the offending character, which may be key material.
func (p *keyfileParser) token(what string) (json.Token, error) {
	tok, err := p.dec.Token()
	if err == io.EOF {
		return nil, newErr(ErrKeyring, "unexpected end of JSON, want %s", what)
	}
	if err != nil {
		return nil, newErr(ErrKeyring, "malformed JSON at %s, want %s", p.where(), what)
	}
	return tok, nil
}

func (p *keyfileParser) delim(d json.Delim, what string) error {
	tok, err := p.token(what)
	if err != nil {
		return err
	}
	if got, ok := tok.(json.Delim); !ok || got != d {
		return newErr(ErrKeyring, "want %s (%q) at %s", what, d, p.where())
	}
	return nil
}

func (p *keyfileParser) str(what string) (string, error) {
	tok, err := p.token(what)
	if err != nil {
		return "", err
	}
	s, ok := tok.(string)
	if !ok {
		return "", newErr(ErrKeyring, "want a string for %s at %s", what, p.where())
	}
	return s, nil
}
