package sealstore

import (
	"fmt"
	"strings"

	"github.com/s3seal/s3seal/crypto"
)

// SealedMetaKeys are the user metadata keys (without x-amz-meta-) whose
// values carry a digest of the plaintext, put there by well-known
// clients: rclone's md5chksum (base64 MD5) and s3cmd's s3cmd-attrs
// ("md5:<hex>" among other fields). The store would learn the plaintext's
// MD5 from them, which docs/FORMAT.md promises it never sees, so s3seal
// seals them with the object's data key (crypto.MetaUser) and gives them
// back opened on HEAD, GET and copies: clients see what they wrote.
var SealedMetaKeys = []string{"md5chksum", "s3cmd-attrs"}

// sealMeta returns the backend's user metadata for meta: the entries of
// SealedMetaKeys sealed with dk into crypto.MetaUser, the others as they
// are.
func sealMeta(dk *crypto.DataKey, meta map[string]string) (map[string]string, error) {
	out := make(map[string]string, len(meta)+8)
	var sealed map[string]string
	for k, v := range meta {
		if isSealedMetaKey(k) {
			if sealed == nil {
				sealed = map[string]string{}
			}
			sealed[k] = v
			continue
		}
		out[k] = v
	}
	v, err := crypto.SealUserMeta(dk, sealed)
	if err != nil {
		return nil, fmt.Errorf("seal user metadata: %w", err)
	}
	if v != "" {
		out[crypto.MetaUser] = v
	}
	return out, nil
}

// isSealedMetaKey reports whether k is sealed: one of SealedMetaKeys, or a
// key with an underscore, which stores behind a WSGI server (moto) drop
// from the request as an ambiguous header name, and so would lose; sealed,
// it travels in crypto.MetaUser, whatever the store.
func isSealedMetaKey(k string) bool {
	if strings.Contains(k, "_") {
		return true
	}
	for _, s := range SealedMetaKeys {
		if k == s {
			return true
		}
	}
	return false
}

// sealedMetaValue returns the backend's crypto.MetaUser value, found
// case-insensitively (crypto.ParseMetadata refused duplicates).
func sealedMetaValue(bmeta map[string]string) (string, bool) {
	for k, v := range bmeta {
		if len(k) == len(crypto.MetaUser) && crypto.IsReservedMetaKey(k) && equalFoldASCII(k, crypto.MetaUser) {
			return v, true
		}
	}
	return "", false
}

func equalFoldASCII(a, b string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := 0; i < len(a); i++ {
		x, y := a[i], b[i]
		if 'A' <= x && x <= 'Z' {
			x += 'a' - 'A'
		}
		if 'A' <= y && y <= 'Z' {
			y += 'a' - 'A'
		}
		if x != y {
			return false
		}
	}
	return true
}

// openMeta adds the entries sealed in the backend's metadata bmeta to
// meta (an object written before s3seal sealed any has none).
func openMeta(dk *crypto.DataKey, bmeta, meta map[string]string) error {
	v, ok := sealedMetaValue(bmeta)
	if !ok {
		return nil
	}
	m, err := crypto.OpenUserMeta(dk, v)
	if err != nil {
		return err
	}
	for k, v := range m {
		meta[k] = v
	}
	return nil
}
