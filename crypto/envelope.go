package crypto

import (
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/hkdf"
	"crypto/sha256"
	"encoding/binary"
	"io"
	"slices"
)

const (
	// wrapInfo derives the wrap key in both formats; the AAD's label
	// names the format (wrapAADLabels).
	wrapInfo = "s3seal v1 wrap"

	// MaxChecksums bounds the checksums one Binding (or one manifest
	// entry) keeps; S3 keeps one per object.
	MaxChecksums = 4
	// MaxChecksumValue bounds the length of one checksum value.
	MaxChecksumValue = 128
	// MaxKeyLen bounds an object key (S3 allows 1024 bytes) and MaxBucketLen
	// a bucket name (S3 allows 63) in a Name.
	MaxKeyLen, MaxBucketLen = 1024, 255

	// wrappedMin is nonce || sealed DEK || tag: the wrapped form of a
	// multipart envelope, the shortest there is.
	wrappedMin = nonceSize + KeySize + tagSize
	// wrappedMax is the longest wrapped form: a single stream with
	// MaxChecksums checksums of the longest names and values.
	wrappedMax = wrappedMin + 16 + checksumBlockMax
)

// The formats an envelope can be written in (s3seal-v). Format 1 keeps an
// object's user metadata and content headers in the clear at the store
// (but for the entries of [SealUserMeta]); format 2, the one s3seal
// writes, seals all of them ([SealObjectMeta]). The format is bound into
// the wrap, so an object cannot be passed off as written in another.
const (
	FormatV1 = 1
	FormatV2 = 2
)

// wrapAADLabels[v] starts the wrap AAD of format v.
var wrapAADLabels = [...]string{FormatV1: "s3seal v1 wrap\x00", FormatV2: "s3seal v2 wrap\x00"}

// Name is where an object lives: the bucket and key it was written under.
// It is bound into the wrapped data key, so an object (ciphertext and
// metadata) that the store copies or moves to another key or bucket no
// longer unwraps there.
type Name struct {
	Bucket, Key string
}

func (n Name) check() error {
	if len(n.Bucket) == 0 || len(n.Bucket) > MaxBucketLen || len(n.Key) == 0 || len(n.Key) > MaxKeyLen {
		return newErr(ErrCorrupt, "object name out of range (bucket %d bytes, key %d bytes)", len(n.Bucket), len(n.Key))
	}
	return nil
}

// Binding holds what a wrapped data key authenticates besides the key id,
// the oid and the Name. For a single-stream object (Multipart false) that
// is the plaintext size, which stays readable in the metadata (the
// ciphertext size reveals it anyway), and the plaintext MD5 and checksums,
// which are sealed with the data key so the store cannot read them (they
// would fingerprint the plaintext). A multipart object binds none of them
// (its manifest holds them); then PlainSize, PlainMD5 and Checksums must be
// zero.
type Binding struct {
	// Version is the format the wrap is made for: 0 for the current one
	// (FormatV2), FormatV1 to rewrap an object written in format 1.
	// Unwrap reports the envelope's.
	Version   int
	Multipart bool
	PlainSize int64
	PlainMD5  [16]byte
	// Checksums are the flexible checksums of the plaintext that s3seal
	// reports (x-amz-checksum-*): algorithm name, 1 to 16 lower-case letters
	// and digits (ValidChecksumName), -> value as printed, 1 to
	// MaxChecksumValue printable ASCII bytes; at most MaxChecksums of them.
	Checksums map[string]string
	// CustomerCheck is, for an object sealed with a customer key (SSE-C),
	// its check value ([DataKey.CustomerCheck], CheckSize bytes); nil
	// otherwise. It is stored in the clear and bound into the wrap, so it
	// can be neither removed nor swapped.
	CustomerCheck []byte
	// KMSContext is, for a master key held outside s3seal, the client's
	// encryption context (canonical JSON, [CanonicalKMSContext]; "" for
	// none), and BucketKey whether the intermediate key is the bucket's
	// (see [KeyRequest]). Both are stored in the clear and bound into the
	// wrap; a local master key takes neither.
	KMSContext string
	BucketKey  bool
}

// ValidChecksumName reports whether name can name a checksum in a Binding:
// 1 to 16 lower-case ASCII letters and digits.
func ValidChecksumName(name string) bool {
	if len(name) == 0 || len(name) > 16 {
		return false
	}
	for i := 0; i < len(name); i++ {
		if c := name[i]; (c < 'a' || c > 'z') && (c < '0' || c > '9') {
			return false
		}
	}
	return true
}

func validChecksumValue(v string) bool {
	if len(v) == 0 || len(v) > MaxChecksumValue {
		return false
	}
	for i := 0; i < len(v); i++ {
		if v[i] < 0x21 || v[i] > 0x7e {
			return false
		}
	}
	return true
}

func (b Binding) check() error {
	if b.Version != 0 && b.Version != FormatV1 && b.Version != FormatV2 {
		return newErr(ErrVersion, "format %d", b.Version)
	}
	if b.CustomerCheck != nil && len(b.CustomerCheck) != CheckSize {
		return newErr(ErrCorrupt, "customer key check is %d bytes", len(b.CustomerCheck))
	}
	if len(b.KMSContext) > MaxKMSContext {
		return newErr(ErrCorrupt, "encryption context is %d bytes, at most %d", len(b.KMSContext), MaxKMSContext)
	}
	if b.Multipart {
		if b.PlainSize != 0 || b.PlainMD5 != ([16]byte{}) || len(b.Checksums) != 0 {
			return newErr(ErrCorrupt, "multipart binding with a plaintext size, MD5 or checksum")
		}
		return nil
	}
	if b.PlainSize < 0 || b.PlainSize > MaxPlainSize {
		return newErr(ErrCorrupt, "plaintext size %d out of range", b.PlainSize)
	}
	return checkChecksums(b.Checksums)
}

// Envelope is what an object carries besides its ciphertext, as it is
// stored in the clear: the key id, the oid, the kind and (single stream)
// plaintext size, and the wrapped data key, which also seals the
// plaintext MD5 and checksums. [Envelope.Metadata] and [ParseMetadata]
// convert it to and from backend user metadata; [Keyring.Unwrap] opens it.
type Envelope struct {
	Version   int           // FormatV1 or FormatV2
	KeyID     string        // id of the master key that wrapped the DEK
	OID       [OIDSize]byte // object id
	Multipart bool
	PlainSize int64  // single stream only
	Wrapped   []byte // nonce || AES-GCM(wrap key, DEK || sealed facts)
	// CustomerCheck is the customer key check value of an SSE-C object
	// (CheckSize bytes), nil for any other object.
	CustomerCheck []byte
	// SealedMeta is, in format 2, the value of [MetaObject] (see
	// [SealObjectMeta]); "" when there is none, which [OpenObjectMeta]
	// refuses. Format 1 has none.
	SealedMeta string
	// Origin is, in format 2, the value of [MetaOrigin] (see
	// [SealOrigin]) of a single-stream object whose bytes are a copy of
	// another object's stream; "" for an object sealed under its own key.
	Origin string
	// SealedKey is, for a master key held outside s3seal (KeyID is an
	// external id), the intermediate key as the key service sealed it;
	// the DEK is wrapped under that key. KMSContext and BucketKey are
	// the Binding's. All three are empty for a local master key.
	SealedKey  []byte
	KMSContext string
	BucketKey  bool
}

// External reports whether the envelope's master key is held outside
// s3seal.
func (e Envelope) External() bool { return IsExternalKeyID(e.KeyID) }

// KeyRequest is what the key service is asked to open (or reseal, or
// forget) the envelope's intermediate key for, when it is read under name.
func (e Envelope) KeyRequest(name Name) KeyRequest {
	return KeyRequest{KeyID: e.KeyID, Name: name, Context: e.KMSContext, BucketKey: e.BucketKey}
}

// Wrap wraps dk's DEK under the master key keyID ("" means the primary
// key), bound to dk's oid, the key id, the object's name and b, as
// docs/FORMAT.md specifies: [Keyring.NewWrapKey] and [WrapKey.Wrap] in
// one call.
func (kr *Keyring) Wrap(ctx context.Context, dk *DataKey, keyID string, name Name, b Binding) (Envelope, error) {
	wk, err := kr.NewWrapKey(ctx, keyID, name, b.KMSContext, b.BucketKey)
	if err != nil {
		return Envelope{}, err
	}
	defer wk.Close()
	return wk.Wrap(dk, name, b)
}

// WrapKey is the key that wraps one object's DEK: a local master key, or
// an intermediate key a key service made under an external one. Getting
// it before the object's body is read lets a write that cannot have a
// key fail before it reads a byte.
type WrapKey struct {
	keyID     string
	kek       []byte
	sealed    []byte
	kmsCtx    string
	bucketKey bool
	external  bool
	// used tells the keyring's WithKeyUses of the wrap.
	used func(error)
}

// NewWrapKey returns the key that wraps the DEK of an object at name
// under the master key keyID ("" means the primary key). For a master
// key held outside s3seal the key service makes the intermediate key
// bound to name, kmsContext and bucketKey (one call, or none for a cached
// bucket key) and the key's canonical external id is the one recorded.
// It fails with [ErrUnknownKey] for a key id not in the ring,
// [ErrKeyring] for a context or bucket key with a local key, and with the
// key service's error, wrapped, when it cannot make a key.
func (kr *Keyring) NewWrapKey(ctx context.Context, keyID string, name Name, kmsContext string, bucketKey bool) (*WrapKey, error) {
	if keyID == "" {
		keyID = kr.primary
	}
	if err := name.check(); err != nil {
		return nil, err
	}
	if len(kmsContext) > MaxKMSContext {
		return nil, newErr(ErrKeyring, "encryption context is %d bytes, at most %d", len(kmsContext), MaxKMSContext)
	}
	ext, external := kr.External(keyID)
	if !external {
		kek, ok := kr.keys[keyID]
		if !ok {
			return nil, newErr(ErrUnknownKey, "%q", keyID)
		}
		if kmsContext != "" || bucketKey {
			return nil, newErr(ErrKeyring, "an encryption context or a bucket key needs a master key held outside s3seal, not %q", keyID)
		}
		return &WrapKey{keyID: keyID, kek: kek, used: kr.wrapUse(ctx, keyID, name)}, nil
	}
	req := KeyRequest{KeyID: ext, Name: name, Context: kmsContext, BucketKey: bucketKey}
	kek, sealed, canonical, err := kr.svc.NewKey(ctx, req)
	if err != nil {
		return nil, err
	}
	if len(kek) != KeySize || len(sealed) == 0 || len(sealed) > MaxSealedKey || !IsExternalKeyID(canonical) {
		clear(kek)
		return nil, newErr(ErrKeyring, "the key service answered a %d-byte key, %d sealed bytes and key id %q", len(kek), len(sealed), canonical)
	}
	return &WrapKey{keyID: canonical, kek: kek, sealed: sealed, kmsCtx: kmsContext, bucketKey: bucketKey, external: true,
		used: kr.wrapUse(ctx, canonical, name)}, nil
}

// wrapUse is what a WrapKey of kr calls once it wrapped a data key (or
// failed to): nil without WithKeyUses.
func (kr *Keyring) wrapUse(ctx context.Context, keyID string, name Name) func(error) {
	if kr.uses == nil {
		return nil
	}
	return func(err error) { kr.uses(ctx, KeyUse{Op: "wrap", KeyID: keyID, Name: name, Err: err}) }
}

// KeyID is the id of the master key the envelope will name.
func (wk *WrapKey) KeyID() string { return wk.keyID }

// Close forgets an intermediate key.
func (wk *WrapKey) Close() {
	if wk.external {
		clear(wk.kek)
	}
}

// Wrap wraps dk's DEK, bound to dk's oid, the key id, name and b (whose
// KMSContext and BucketKey must be those the key was made for). The
// 12-byte wrap nonce comes from dk's Config.Rand (crypto/rand by
// default). It fails with [ErrCorrupt] for an invalid name or binding.
func (wk *WrapKey) Wrap(dk *DataKey, name Name, b Binding) (env Envelope, err error) {
	if wk.used != nil {
		defer func() { wk.used(err) }()
	}
	if dk.derived {
		return Envelope{}, newErr(ErrKeyring, "a content key derived from a customer key is never wrapped")
	}
	if err := name.check(); err != nil {
		return Envelope{}, err
	}
	if err := b.check(); err != nil {
		return Envelope{}, err
	}
	if b.KMSContext != wk.kmsCtx || b.BucketKey != wk.bucketKey {
		return Envelope{}, newErr(ErrKeyring, "the binding's encryption context or bucket key is not the one the key was made for")
	}
	aead, err := wrapAEAD(wk.kek, dk.oid)
	if err != nil {
		return Envelope{}, err
	}
	version := b.Version
	if version == 0 {
		version = FormatV2
	}
	env = Envelope{Version: version, KeyID: wk.keyID, OID: dk.oid, Multipart: b.Multipart, PlainSize: b.PlainSize, CustomerCheck: b.CustomerCheck}
	if wk.external {
		env.SealedKey, env.KMSContext, env.BucketKey = wk.sealed, wk.kmsCtx, wk.bucketKey
	}
	payload := wrapPayload(dk.dek[:], b)
	defer clear(payload)
	wrapped := make([]byte, nonceSize, nonceSize+len(payload)+tagSize)
	if _, err := io.ReadFull(dk.rand, wrapped); err != nil {
		return Envelope{}, err
	}
	env.Wrapped = aead.Seal(wrapped, wrapped[:nonceSize], payload, wrapAAD(env, name))
	return env, nil
}

// Unwrap opens an envelope read from the object at name and returns its
// data key (whose nonces for new segments come from crypto/rand) and the
// complete Binding: the size from the envelope, the MD5 and checksums from
// the sealed payload. It fails with an error matching [ErrUnknownKey]
// (naming the id) when the key id is not in the ring, [ErrAuth] when the
// wrapped key, oid, key id, name or size are not what was wrapped, and
// [ErrCorrupt] for a malformed envelope. For a master key held outside
// s3seal it asks the key service to open the intermediate key (which may
// answer from its cache) and fails with the service's error, wrapped,
// when it cannot.
func (kr *Keyring) Unwrap(ctx context.Context, e Envelope, name Name) (dk *DataKey, b Binding, err error) {
	if kr.uses != nil {
		defer func() { kr.uses(ctx, KeyUse{Op: "unwrap", KeyID: e.KeyID, Name: name, Err: err}) }()
	}
	return kr.unwrap(ctx, e, name)
}

func (kr *Keyring) unwrap(ctx context.Context, e Envelope, name Name) (*DataKey, Binding, error) {
	if len(e.Wrapped) < wrappedMin || len(e.Wrapped) > wrappedMax || (e.Multipart && len(e.Wrapped) != wrappedMin) {
		return nil, Binding{}, newErr(ErrCorrupt, "wrapped data key is %d bytes", len(e.Wrapped))
	}
	if err := name.check(); err != nil {
		return nil, Binding{}, err
	}
	if !e.Multipart && (e.PlainSize < 0 || e.PlainSize > MaxPlainSize) {
		return nil, Binding{}, newErr(ErrCorrupt, "plaintext size %d out of range", e.PlainSize)
	}
	if e.CustomerCheck != nil && len(e.CustomerCheck) != CheckSize {
		return nil, Binding{}, newErr(ErrCorrupt, "customer key check is %d bytes", len(e.CustomerCheck))
	}
	if e.Version != FormatV1 && e.Version != FormatV2 {
		return nil, Binding{}, newErr(ErrVersion, "format %d", e.Version)
	}
	kek, err := kr.openKEK(ctx, e, name)
	if err != nil {
		return nil, Binding{}, err
	}
	if e.External() {
		defer clear(kek)
	}
	aead, err := wrapAEAD(kek, e.OID)
	if err != nil {
		return nil, Binding{}, err
	}
	payload, err := aead.Open(nil, e.Wrapped[:nonceSize], e.Wrapped[nonceSize:], wrapAAD(e, name))
	defer clear(payload)
	if err != nil && e.External() && kr.svc != nil {
		kr.svc.Forget(e.KeyRequest(name), e.SealedKey)
	}
	if err != nil {
		err := newErr(ErrAuth, "wrapped data key (key id %q)", e.KeyID)
		err.KeyID, err.wrap = e.KeyID, true
		return nil, Binding{}, err
	}
	b := Binding{Version: e.Version, Multipart: e.Multipart, PlainSize: e.PlainSize, CustomerCheck: e.CustomerCheck,
		KMSContext: e.KMSContext, BucketKey: e.BucketKey}
	if b.Multipart {
		if len(payload) != KeySize {
			return nil, Binding{}, newErr(ErrCorrupt, "multipart payload is %d bytes", len(payload))
		}
	} else {
		rest := payload[KeySize:]
		if len(rest) < 16 {
			return nil, Binding{}, newErr(ErrCorrupt, "single-stream payload is %d bytes", len(payload))
		}
		b.PlainMD5 = [16]byte(rest[:16])
		if b.Checksums, rest, err = parseChecksumBlock(rest[16:]); err != nil {
			return nil, Binding{}, err
		}
		if len(rest) != 0 {
			return nil, Binding{}, newErr(ErrCorrupt, "%d bytes after the sealed checksums", len(rest))
		}
	}
	dk, err := Config{}.DataKeyFrom(payload[:KeySize], e.OID)
	return dk, b, err
}

// openKEK returns the key that wraps e's DEK: the local master key, or
// the intermediate key the key service opens.
func (kr *Keyring) openKEK(ctx context.Context, e Envelope, name Name) ([]byte, error) {
	if !e.External() {
		if e.SealedKey != nil || e.KMSContext != "" || e.BucketKey {
			return nil, newErr(ErrCorrupt, "a sealed key, encryption context or bucket key with local key %q", e.KeyID)
		}
		kek, ok := kr.keys[e.KeyID]
		if !ok {
			err := newErr(ErrUnknownKey, "%q", e.KeyID)
			err.KeyID = e.KeyID
			return nil, err
		}
		return kek, nil
	}
	if len(e.SealedKey) == 0 || len(e.SealedKey) > MaxSealedKey || len(e.KMSContext) > MaxKMSContext {
		return nil, newErr(ErrCorrupt, "sealed key of %d bytes, encryption context of %d", len(e.SealedKey), len(e.KMSContext))
	}
	if kr.svc == nil {
		err := newErr(ErrUnknownKey, "%q (no key service is configured)", e.KeyID)
		err.KeyID = e.KeyID
		return nil, err
	}
	kek, err := kr.svc.OpenKey(ctx, e.KeyRequest(name), e.SealedKey)
	if err != nil {
		return nil, err
	}
	if len(kek) != KeySize {
		clear(kek)
		return nil, newErr(ErrAuth, "the key service opened a %d-byte key for %q", len(kek), e.KeyID)
	}
	return kek, nil
}

// wrapPayload = DEK || for a single stream: plainMD5 (16) || checksum block.
func wrapPayload(dek []byte, b Binding) []byte {
	p := make([]byte, 0, KeySize+16+checksumBlockMax)
	p = append(p, dek...)
	if b.Multipart {
		return p
	}
	p = append(p, b.PlainMD5[:]...)
	return appendChecksumBlock(p, b.Checksums)
}

// wrapKey derives the key that wraps DEKs of object oid under kek:
// HKDF-SHA256(secret = kek, salt = oid, info = "s3seal v1 wrap"), 32 bytes.
func wrapKey(kek []byte, oid [OIDSize]byte) ([]byte, error) {
	return hkdf.Key(sha256.New, kek, oid[:], wrapInfo, KeySize)
}

func wrapAEAD(kek []byte, oid [OIDSize]byte) (cipher.AEAD, error) {
	k, err := wrapKey(kek, oid)
	if err != nil {
		return nil, err
	}
	defer clear(k)
	block, err := aes.NewCipher(k)
	if err != nil {
		return nil, err
	}
	return cipher.NewGCM(block)
}

// wrapAAD = "s3seal v<format> wrap\x00" || u8(len(keyID)) || keyID || oid ||
// u16be(len(bucket)) || bucket || u16be(len(key)) || key ||
// kind ('S' or 'M') || for 'S': u64be(plainSize) || for an SSE-C object:
// 'C' || customerCheck (16). For a master key held outside s3seal, before
// the 'C' part: 'K' || u8(bucketKey) || u16be(len(kmsContext)) ||
// kmsContext. Objects without either keep the AAD they always had.
func wrapAAD(e Envelope, n Name) []byte {
	a := wrapAADBase(e, n)
	if e.External() {
		a = append(a, 'K', 0)
		if e.BucketKey {
			a[len(a)-1] = 1
		}
		a = binary.BigEndian.AppendUint16(a, uint16(len(e.KMSContext)))
		a = append(a, e.KMSContext...)
	}
	if e.CustomerCheck != nil {
		a = append(a, 'C')
		a = append(a, e.CustomerCheck...)
	}
	return a
}

func wrapAADBase(e Envelope, n Name) []byte {
	label := wrapAADLabels[e.Version]
	a := make([]byte, 0, len(label)+1+len(e.KeyID)+OIDSize+4+len(n.Bucket)+len(n.Key)+1+8)
	a = append(a, label...)
	a = append(a, byte(len(e.KeyID)))
	a = append(a, e.KeyID...)
	a = append(a, e.OID[:]...)
	a = binary.BigEndian.AppendUint16(a, uint16(len(n.Bucket)))
	a = append(a, n.Bucket...)
	a = binary.BigEndian.AppendUint16(a, uint16(len(n.Key)))
	a = append(a, n.Key...)
	if e.Multipart {
		return append(a, 'M')
	}
	a = append(a, 'S')
	return binary.BigEndian.AppendUint64(a, uint64(e.PlainSize))
}

// checksumBlockMax is the longest checksum block: u8(n) and MaxChecksums
// entries of the longest name and value.
const checksumBlockMax = 1 + MaxChecksums*(1+16+1+MaxChecksumValue)

func checkChecksums(cs map[string]string) error {
	if len(cs) > MaxChecksums {
		return newErr(ErrCorrupt, "%d checksums, at most %d", len(cs), MaxChecksums)
	}
	for name, v := range cs {
		if !ValidChecksumName(name) || !validChecksumValue(v) {
			return newErr(ErrCorrupt, "invalid checksum %q", name)
		}
	}
	return nil
}

// appendChecksumBlock appends u8(n) || n times, names sorted bytewise:
// u8(len(name)) || name || u8(len(value)) || value. cs must have passed
// checkChecksums.
func appendChecksumBlock(p []byte, cs map[string]string) []byte {
	names := make([]string, 0, len(cs))
	for name := range cs {
		names = append(names, name)
	}
	slices.Sort(names)
	p = append(p, byte(len(names)))
	for _, name := range names {
		p = append(p, byte(len(name)))
		p = append(p, name...)
		p = append(p, byte(len(cs[name])))
		p = append(p, cs[name]...)
	}
	return p
}

// parseChecksumBlock reads a checksum block from the front of p and returns
// the rest. Names must be valid, strictly ascending (so the encoding is
// canonical), values valid; an empty block gives a nil map.
func parseChecksumBlock(p []byte) (map[string]string, []byte, error) {
	bad := func() (map[string]string, []byte, error) {
		return nil, nil, newErr(ErrCorrupt, "malformed checksum block")
	}
	if len(p) < 1 || int(p[0]) > MaxChecksums {
		return bad()
	}
	n := int(p[0])
	p = p[1:]
	var cs map[string]string
	prev := ""
	for range n {
		var name, val string
		var ok bool
		if name, p, ok = cutLenPrefixed(p); !ok || !ValidChecksumName(name) || name <= prev {
			return bad()
		}
		if val, p, ok = cutLenPrefixed(p); !ok || !validChecksumValue(val) {
			return bad()
		}
		if cs == nil {
			cs = make(map[string]string, n)
		}
		cs[name], prev = val, name
	}
	return cs, p, nil
}

// cutLenPrefixed reads u8(len) || bytes from the front of p.
func cutLenPrefixed(p []byte) (string, []byte, bool) {
	if len(p) < 1 || len(p) < 1+int(p[0]) {
		return "", nil, false
	}
	n := int(p[0])
	return string(p[1 : 1+n]), p[1+n:], true
}
