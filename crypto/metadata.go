package crypto

import (
	"encoding/base64"
	"strconv"
	"strings"
)

// Metadata keys (user metadata, without the x-amz-meta- prefix).
const (
	MetaPrefix  = "s3seal-"
	MetaVersion = "s3seal-v"
	MetaKeyID   = "s3seal-kid"
	MetaOID     = "s3seal-oid"
	MetaDEK     = "s3seal-dek"
	MetaSize    = "s3seal-size"
	MetaMP      = "s3seal-mp"
	// MetaSSEC holds the customer key check value of an object sealed
	// with a customer key (SSE-C); absent on every other object.
	MetaSSEC = "s3seal-ssec"
	// MetaSealedKey, MetaKMSContext and MetaBucketKey are on an object
	// whose master key is held outside s3seal: the intermediate key as
	// the key service sealed it, the client's encryption context (if
	// any) and "1" when the intermediate key is the bucket's.
	MetaSealedKey  = "s3seal-kms"
	MetaKMSContext = "s3seal-kctx"
	MetaBucketKey  = "s3seal-bk"
)

var b64url = base64.RawURLEncoding.Strict()

// Metadata returns the envelope as backend user metadata: lower-case keys
// without the x-amz-meta- prefix, as the table in docs/FORMAT.md lists
// them. A single-stream envelope has s3seal-size, a multipart one
// s3seal-mp instead; a format 2 envelope has s3seal-meta once its
// SealedMeta is set.
func (e Envelope) Metadata() map[string]string {
	m := map[string]string{
		MetaVersion: strconv.Itoa(e.Version),
		MetaKeyID:   e.KeyID,
		MetaOID:     b64url.EncodeToString(e.OID[:]),
		MetaDEK:     b64url.EncodeToString(e.Wrapped),
	}
	if e.CustomerCheck != nil {
		m[MetaSSEC] = b64url.EncodeToString(e.CustomerCheck)
	}
	if e.SealedMeta != "" {
		m[MetaObject] = e.SealedMeta
	}
	if e.Origin != "" {
		m[MetaOrigin] = e.Origin
	}
	if e.SealedKey != nil {
		m[MetaSealedKey] = b64url.EncodeToString(e.SealedKey)
	}
	if e.KMSContext != "" {
		m[MetaKMSContext] = b64url.EncodeToString([]byte(e.KMSContext))
	}
	if e.BucketKey {
		m[MetaBucketKey] = "1"
	}
	if e.Multipart {
		m[MetaMP] = "1"
	} else {
		m[MetaSize] = strconv.FormatInt(e.PlainSize, 10)
	}
	return m
}

// IsReservedMetaKey reports whether a user metadata key (without the
// x-amz-meta- prefix) is reserved for s3seal: it starts with "s3seal-" in
// any case.
func IsReservedMetaKey(k string) bool {
	if len(k) < len(MetaPrefix) {
		return false
	}
	for i := 0; i < len(MetaPrefix); i++ { // ASCII folding only: "ſ" is not "s"
		c := k[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != MetaPrefix[i] {
			return false
		}
	}
	return true
}

// ParseMetadata reads an envelope from backend user metadata (keys without
// the x-amz-meta- prefix, compared case-insensitively; other keys are
// ignored).
//
// Without s3seal-v the object is not encrypted: encrypted is false and err
// nil, unless some other s3seal- key is present, which is refused as
// corrupt (stripped metadata must not turn ciphertext into "plaintext").
// An s3seal-v other than "1" or "2" fails with [ErrVersion]. Anything else
// that does not follow the table of its format exactly fails with
// [ErrCorrupt]: a missing or repeated key, an unknown s3seal- key (in
// format 1 s3seal-meta, in format 2 s3seal-um), a non-canonical value,
// both or neither of size and mp. A format 2 envelope may come without
// s3seal-meta (an upload's state holds the upload's envelope alone); a
// format 2 object without it fails [OpenObjectMeta]. The values are only parsed here; they are
// authenticated by [Keyring.Unwrap]. Whenever err is non-nil, encrypted is
// true: such an object must never be served as plaintext.
func ParseMetadata(meta map[string]string) (env Envelope, encrypted bool, err error) {
	v := map[string]string{}
	for k, val := range meta {
		if !IsReservedMetaKey(k) {
			continue
		}
		lk := strings.ToLower(k)
		if _, dup := v[lk]; dup {
			return Envelope{}, true, newErr(ErrCorrupt, "metadata key %s appears twice", lk)
		}
		v[lk] = val
	}
	ver, ok := v[MetaVersion]
	if !ok {
		if len(v) > 0 {
			return Envelope{}, true, newErr(ErrCorrupt, "s3seal metadata without %s", MetaVersion)
		}
		return Envelope{}, false, nil
	}
	switch ver {
	case "1":
		env.Version = FormatV1
	case "2":
		env.Version = FormatV2
	default:
		return Envelope{}, true, newErr(ErrVersion, "%s = %q", MetaVersion, ver)
	}
	for k := range v {
		switch k {
		case MetaVersion, MetaKeyID, MetaOID, MetaDEK, MetaSize, MetaMP, MetaSSEC, MetaSealedKey, MetaKMSContext, MetaBucketKey:
		case MetaUser:
			if env.Version != FormatV1 {
				return Envelope{}, true, newErr(ErrCorrupt, "%s in a format %d object", k, env.Version)
			}
		case MetaObject, MetaOrigin:
			if env.Version != FormatV2 {
				return Envelope{}, true, newErr(ErrCorrupt, "%s in a format %d object", k, env.Version)
			}
		default:
			return Envelope{}, true, newErr(ErrCorrupt, "unknown metadata key %s", k)
		}
	}
	env.SealedMeta = v[MetaObject]
	env.Origin = v[MetaOrigin]
	if _, ok := v[MetaOrigin]; ok && b64url.EncodedLen(nonceSize+OriginSize+tagSize) != len(env.Origin) {
		return Envelope{}, true, newErr(ErrCorrupt, "%s is %d characters", MetaOrigin, len(env.Origin))
	}

	if env.KeyID, ok = v[MetaKeyID]; !ok {
		return Envelope{}, true, missing(MetaKeyID)
	}
	if !ValidKeyID(env.KeyID) && !IsExternalKeyID(env.KeyID) {
		return Envelope{}, true, newErr(ErrCorrupt, "%s: invalid key id %q", MetaKeyID, env.KeyID)
	}
	if err := parseExternal(v, &env); err != nil {
		return Envelope{}, true, err
	}
	if err := decodeB64(v, MetaOID, env.OID[:]); err != nil {
		return Envelope{}, true, err
	}
	if env.Wrapped, err = decodeWrapped(v); err != nil {
		return Envelope{}, true, err
	}

	if _, ok := v[MetaSSEC]; ok {
		env.CustomerCheck = make([]byte, CheckSize)
		if err := decodeB64(v, MetaSSEC, env.CustomerCheck); err != nil {
			return Envelope{}, true, err
		}
		if env.Origin != "" {
			return Envelope{}, true, newErr(ErrCorrupt, "customer-keyed object with %s", MetaOrigin)
		}
	}

	mp, isMP := v[MetaMP]
	size, hasSize := v[MetaSize]
	switch {
	case isMP && env.Origin != "":
		return Envelope{}, true, newErr(ErrCorrupt, "multipart object with %s", MetaOrigin)
	case isMP:
		if mp != "1" {
			return Envelope{}, true, newErr(ErrCorrupt, "%s = %q, want \"1\"", MetaMP, mp)
		}
		if hasSize {
			return Envelope{}, true, newErr(ErrCorrupt, "multipart object with %s", MetaSize)
		}
		env.Multipart = true
	case !hasSize:
		return Envelope{}, true, missing(MetaSize)
	default:
		if env.PlainSize, err = parseSize(size); err != nil {
			return Envelope{}, true, err
		}
	}
	return env, true, nil
}

// parseExternal reads s3seal-kms, s3seal-kctx and s3seal-bk: the first
// is on every object of an external master key, and none of them on any
// other.
func parseExternal(v map[string]string, env *Envelope) error {
	sealed, hasSealed := v[MetaSealedKey]
	kctx, hasCtx := v[MetaKMSContext]
	bk, hasBK := v[MetaBucketKey]
	if !env.External() {
		if hasSealed || hasCtx || hasBK {
			return newErr(ErrCorrupt, "%s, %s or %s with local key %q", MetaSealedKey, MetaKMSContext, MetaBucketKey, env.KeyID)
		}
		return nil
	}
	if !hasSealed {
		return missing(MetaSealedKey)
	}
	raw, err := b64url.DecodeString(sealed)
	if err != nil || len(raw) == 0 || len(raw) > MaxSealedKey {
		return newErr(ErrCorrupt, "%s: not base64url of 1 to %d bytes", MetaSealedKey, MaxSealedKey)
	}
	env.SealedKey = raw
	if hasCtx {
		raw, err := b64url.DecodeString(kctx)
		if err != nil || len(raw) == 0 || len(raw) > MaxKMSContext {
			return newErr(ErrCorrupt, "%s: not base64url of 1 to %d bytes", MetaKMSContext, MaxKMSContext)
		}
		env.KMSContext = string(raw)
	}
	if hasBK {
		if bk != "1" {
			return newErr(ErrCorrupt, "%s = %q, want \"1\"", MetaBucketKey, bk)
		}
		env.BucketKey = true
	}
	return nil
}

func missing(k string) error { return newErr(ErrCorrupt, "metadata key %s missing", k) }

// decodeB64 decodes v[k], unpadded base64url of exactly len(dst) bytes.
func decodeB64(v map[string]string, k string, dst []byte) error {
	s, ok := v[k]
	if !ok {
		return missing(k)
	}
	if len(s) != b64url.EncodedLen(len(dst)) {
		return newErr(ErrCorrupt, "%s is %d characters, want %d", k, len(s), b64url.EncodedLen(len(dst)))
	}
	if _, err := b64url.Decode(dst, []byte(s)); err != nil {
		return newErr(ErrCorrupt, "%s is not unpadded base64url", k)
	}
	return nil
}

// decodeWrapped decodes s3seal-dek: unpadded base64url of wrappedMin to
// wrappedMax bytes, canonical (re-encoding gives the same text).
func decodeWrapped(v map[string]string) ([]byte, error) {
	s, ok := v[MetaDEK]
	if !ok {
		return nil, missing(MetaDEK)
	}
	if len(s) < b64url.EncodedLen(wrappedMin) || len(s) > b64url.EncodedLen(wrappedMax) {
		return nil, newErr(ErrCorrupt, "%s is %d characters", MetaDEK, len(s))
	}
	b, err := b64url.DecodeString(s)
	if err != nil {
		return nil, newErr(ErrCorrupt, "%s is not unpadded base64url", MetaDEK)
	}
	return b, nil
}

// parseSize parses a canonical decimal size: digits only, no sign, no
// leading zero (but "0"), at most MaxPlainSize.
func parseSize(s string) (int64, error) {
	bad := len(s) == 0 || len(s) > 19 || (len(s) > 1 && s[0] == '0')
	for i := 0; i < len(s) && !bad; i++ {
		bad = s[i] < '0' || s[i] > '9'
	}
	if !bad {
		if n, err := strconv.ParseInt(s, 10, 64); err == nil && n <= MaxPlainSize {
			return n, nil
		}
	}
	return 0, newErr(ErrCorrupt, "%s = %q: want a decimal size", MetaSize, s)
}
