//go:build pkcs11 && cgo

package pkcs11

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"fmt"
	"slices"
	"sync"
	"time"

	p11 "github.com/miekg/pkcs11"

	"github.com/s3seal/s3seal/kms"
)

func init() { kms.Register("pkcs11:", open) }

// lookupTTL is how long a label's versions, once looked up, are used
// without looking again: a new version seals new keys that soon after
// it is made, and a version disabled stops working as soon.
const lookupTTL = 2 * time.Second

// Provider is the key service of the master keys on one PKCS#11 token.
// It is safe for concurrent use.
type Provider struct {
	sess *sessions
	ttl  time.Duration

	mu     sync.Mutex
	lookup map[string]versions // by label
}

// versions are a label's versions, as looked up at a time.
type versions struct {
	list []keyVersion // by CKA_ID, the newest last
	at   time.Time
}

// keyVersion is one version of a master key: an AES key object of its
// label, with the attributes that say what it may do.
type keyVersion struct {
	id                              []byte
	handle                          p11.ObjectHandle
	encrypt, decrypt                bool
	sensitive, extractable, private bool
	size                            uint64 // CKA_VALUE_LEN, in bytes
}

var _ kms.Provider = (*Provider)(nil)

func open(uri string, _ func(string) string) (kms.Provider, string, error) {
	p, name, err := Open(uri)
	if err != nil {
		return nil, "", err
	}
	return p, name, nil
}

// Open makes the provider of the token a master key URI names (see the
// package comment): it reads the PIN and loads the module, and returns
// the URI's object label, "" when it names none. The token is first
// reached by the first call, so that s3seal starts while an HSM is
// briefly away.
func Open(uri string) (*Provider, string, error) {
	c, err := parseURI(uri)
	if err != nil {
		return nil, "", err
	}
	pin, err := readPIN(c.pinFile)
	if err != nil {
		return nil, "", fmt.Errorf("PKCS#11 pin-source: %w", err)
	}
	mod, err := loadModule(c.modulePath)
	if err != nil {
		return nil, "", err
	}
	return &Provider{sess: newSessions(mod, c.token, pin), ttl: lookupTTL, lookup: map[string]versions{}}, c.object, nil
}

// Close closes the provider's sessions: the idle ones now, the others
// as their calls end. The module stays loaded for the process.
func (p *Provider) Close() error {
	p.sess.close()
	return nil
}

// Scheme implements kms.Provider.
func (p *Provider) Scheme() string { return "pkcs11" }

// GenerateKey implements kms.Provider: a key from crypto/rand sealed in
// the token under the newest version of the key labelled name. The
// canonical name is the label.
func (p *Provider) GenerateKey(ctx context.Context, name string, kctx map[string]string) ([]byte, []byte, string, error) {
	if err := checkName(name); err != nil {
		return nil, nil, "", err
	}
	var key, out []byte
	err := p.sess.run(ctx, func(h p11.SessionHandle) error {
		k := make([]byte, keySize)
		rand.Read(k)
		err := p.withVersions(h, name, func(vs []keyVersion) error {
			v, err := current(vs, name)
			if err != nil {
				return err
			}
			out, err = p.seal(h, name, v, k, kctx)
			return err
		})
		if err != nil {
			clear(k)
			return err
		}
		key = k
		return nil
	}, func() { clear(key) })
	if err != nil {
		return nil, nil, "", err
	}
	return key, out, name, nil
}

// Decrypt implements kms.Provider: sealed opens under the version of the
// key labelled name that it names, with kctx.
func (p *Provider) Decrypt(ctx context.Context, name string, sealedKey []byte, kctx map[string]string) ([]byte, error) {
	if err := checkName(name); err != nil {
		return nil, err
	}
	s, err := parseSealed(sealedKey)
	if err != nil {
		return nil, err
	}
	var key []byte
	err = p.sess.run(ctx, func(h p11.SessionHandle) error {
		return p.withVersions(h, name, func(vs []keyVersion) error {
			v, err := findVersion(vs, name, s.id)
			if err != nil {
				return err
			}
			key, err = p.open(h, name, v, s, kctx)
			return err
		})
	}, func() { clear(key) })
	if err != nil {
		return nil, err
	}
	return key, nil
}

// Rewrap implements kms.Provider: in one session, sealed is opened and
// its key sealed under the newest version. The key is in s3seal's memory
// for that moment (see the package comment).
func (p *Provider) Rewrap(ctx context.Context, name string, sealedKey []byte, kctx map[string]string) ([]byte, error) {
	if err := checkName(name); err != nil {
		return nil, err
	}
	s, err := parseSealed(sealedKey)
	if err != nil {
		return nil, err
	}
	var out []byte
	err = p.sess.run(ctx, func(h p11.SessionHandle) error {
		return p.withVersions(h, name, func(vs []keyVersion) error {
			old, err := findVersion(vs, name, s.id)
			if err != nil {
				return err
			}
			cur, err := current(vs, name)
			if err != nil {
				return err
			}
			key, err := p.open(h, name, old, s, kctx)
			if err != nil {
				return err
			}
			defer clear(key)
			out, err = p.seal(h, name, cur, key, kctx)
			return err
		})
	}, nil)
	if err != nil {
		return nil, err
	}
	return out, nil
}

// Version implements kms.Provider: the CKA_ID sealed names, in hex; ""
// when sealed is not a sealed key of this provider.
func (p *Provider) Version(_ string, sealedKey []byte) string {
	s, err := parseSealed(sealedKey)
	if err != nil {
		return ""
	}
	return versionName(s.id)
}

// Check implements kms.Provider: a logged-in session finds the newest
// version of the key labelled name, and it may seal new keys.
func (p *Provider) Check(ctx context.Context, name string) error {
	if err := checkName(name); err != nil {
		return err
	}
	return p.sess.run(ctx, func(h p11.SessionHandle) error {
		return p.withVersions(h, name, func(vs []keyVersion) error {
			_, err := current(vs, name)
			return err
		})
	}, nil)
}

// checkName refuses a name that cannot be a label s3seal names.
func checkName(name string) error {
	if name == "" {
		return kms.Errorf(kms.NotFound, "no key is named: name the key's label (object= in the URI, or in the request)")
	}
	if err := checkLabel(name); err != nil {
		return kms.Errorf(kms.NotFound, "%v", err)
	}
	return nil
}

// seal seals key under version v of the key labelled label, bound to
// kctx, in the layout the package comment gives.
func (p *Provider) seal(h p11.SessionHandle, label string, v keyVersion, key []byte, kctx map[string]string) ([]byte, error) {
	hdr := header(v.id)
	iv := make([]byte, ivSize)
	rand.Read(iv)
	params := p11.NewGCMParams(iv, additionalData(hdr, label, kctx), tagBits)
	defer params.Free()
	mod := p.sess.mod
	if err := mod.EncryptInit(h, []*p11.Mechanism{p11.NewMechanism(p11.CKM_AES_GCM, params)}, v.handle); err != nil {
		return nil, failWith("C_EncryptInit", label, v, err)
	}
	ct, err := mod.Encrypt(h, key)
	if err != nil {
		return nil, failWith("C_Encrypt", label, v, err)
	}
	// A module may choose the IV itself and say so in the parameters.
	iv = params.IV()
	if len(iv) != ivSize {
		return nil, kms.Errorf(kms.Failed, "C_Encrypt with CKM_AES_GCM used a %d-byte IV, not %d", len(iv), ivSize)
	}
	if len(ct) != keySize+tagSize {
		return nil, kms.Errorf(kms.Failed, "C_Encrypt with CKM_AES_GCM answered %d bytes for a %d-byte key", len(ct), keySize)
	}
	return slices.Concat(hdr, iv, ct), nil
}

// open opens s under version v of the key labelled label with kctx.
func (p *Provider) open(h p11.SessionHandle, label string, v keyVersion, s sealed, kctx map[string]string) ([]byte, error) {
	if !v.decrypt {
		return nil, kms.Errorf(kms.Disabled, "version %s of key %q is disabled (CKA_DECRYPT false)", versionName(v.id), label)
	}
	params := p11.NewGCMParams(s.iv, additionalData(s.header, label, kctx), tagBits)
	defer params.Free()
	mod := p.sess.mod
	if err := mod.DecryptInit(h, []*p11.Mechanism{p11.NewMechanism(p11.CKM_AES_GCM, params)}, v.handle); err != nil {
		return nil, failWith("C_DecryptInit", label, v, err)
	}
	key, err := mod.Decrypt(h, s.ct)
	if err != nil {
		// SoftHSM answers a tag mismatch with CKR_GENERAL_ERROR.
		if isRV(err, p11.CKR_ENCRYPTED_DATA_INVALID, p11.CKR_ENCRYPTED_DATA_LEN_RANGE, ckrAEADDecryptFailed, p11.CKR_GENERAL_ERROR) {
			return nil, kms.Errorf(kms.Invalid, "the sealed key does not open under version %s of key %q with this encryption context (C_Decrypt: %w)",
				versionName(v.id), label, err)
		}
		return nil, failWith("C_Decrypt", label, v, err)
	}
	if len(key) != keySize {
		clear(key)
		return nil, kms.Errorf(kms.Invalid, "the sealed key opened to %d bytes, not %d", len(key), keySize)
	}
	return key, nil
}

// failWith is fail naming the key and version the function was called
// with.
func failWith(function, label string, v keyVersion, err error) error {
	return kms.Errorf(kindOfRV(err), "%s with version %s of key %q: %w", function, versionName(v.id), label, err)
}

// current returns the version of vs new keys are sealed under, the
// newest, when it may seal them.
func current(vs []keyVersion, label string) (keyVersion, error) {
	v := vs[len(vs)-1]
	ver := versionName(v.id)
	switch {
	case len(v.id) == 0 || len(v.id) > 255:
		return v, kms.Errorf(kms.Failed, "the newest key labelled %q has a CKA_ID of %d bytes: give each version its own CKA_ID of 1 to 255 bytes", label, len(v.id))
	case !v.encrypt || !v.decrypt:
		return v, kms.Errorf(kms.Disabled, "version %s of key %q, the newest, is disabled (CKA_ENCRYPT %t, CKA_DECRYPT %t)", ver, label, v.encrypt, v.decrypt)
	case v.size != keySize:
		return v, kms.Errorf(kms.Failed, "version %s of key %q is an AES-%d key: s3seal seals under AES-256 keys only", ver, label, v.size*8)
	case !v.sensitive || v.extractable || !v.private:
		return v, kms.Errorf(kms.Failed, "version %s of key %q could leave the token or be used without the PIN (CKA_SENSITIVE %t, CKA_EXTRACTABLE %t, CKA_PRIVATE %t): "+
			"s3seal seals only under a sensitive, non-extractable, private key; make a new version so (pkcs11-tool --keygen --sensitive --private, without --extractable)",
			ver, label, v.sensitive, v.extractable, v.private)
	}
	return v, nil
}

// findVersion returns the version of vs whose CKA_ID is id.
func findVersion(vs []keyVersion, label string, id []byte) (keyVersion, error) {
	for _, v := range vs {
		if string(v.id) == string(id) {
			return v, nil
		}
	}
	return keyVersion{}, kms.Errorf(kms.Invalid, "the sealed key names version %s, which key %q does not have (sealed under another key, or the version was destroyed)",
		versionName(id), label)
}

// withVersions calls f with the versions of the key labelled label. A
// failure forgets them, so that the next call looks again; when f failed
// on a handle that is gone, it is called once more with the versions
// looked up again.
func (p *Provider) withVersions(h p11.SessionHandle, label string, f func([]keyVersion) error) error {
	fresh := false
	for {
		vs, cached, err := p.versions(h, label, fresh)
		if err != nil {
			return err
		}
		if err = f(vs); err == nil {
			return nil
		}
		p.mu.Lock()
		delete(p.lookup, label)
		p.mu.Unlock()
		if !cached || !isRV(err, p11.CKR_KEY_HANDLE_INVALID, p11.CKR_OBJECT_HANDLE_INVALID) {
			return err
		}
		fresh = true
	}
}

// versions returns the versions of the key labelled label, and whether
// they come from an earlier look-up (at most p.ttl ago).
func (p *Provider) versions(h p11.SessionHandle, label string, fresh bool) ([]keyVersion, bool, error) {
	if !fresh {
		p.mu.Lock()
		l, ok := p.lookup[label]
		p.mu.Unlock()
		if ok && time.Since(l.at) < p.ttl {
			return l.list, true, nil
		}
	}
	vs, err := p.find(h, label)
	if err != nil {
		return nil, false, err
	}
	if len(vs) == 0 {
		return nil, false, kms.Errorf(kms.NotFound, "no AES key is labelled %q on token %q", label, p.sess.token.label)
	}
	if p.ttl > 0 {
		p.mu.Lock()
		p.lookup[label] = versions{list: vs, at: time.Now()}
		p.mu.Unlock()
	}
	return vs, false, nil
}

// versionAttributes are what find reads of each version.
var versionAttributes = []uint{p11.CKA_ID, p11.CKA_ENCRYPT, p11.CKA_DECRYPT,
	p11.CKA_SENSITIVE, p11.CKA_EXTRACTABLE, p11.CKA_PRIVATE, p11.CKA_VALUE_LEN}

// find looks up the AES keys labelled label on the token, sorted by
// CKA_ID. Two whose CKA_IDs are equal as numbers are refused: which is
// newer, or which opens a sealed key, would be a guess.
func (p *Provider) find(h p11.SessionHandle, label string) ([]keyVersion, error) {
	mod := p.sess.mod
	template := []*p11.Attribute{
		p11.NewAttribute(p11.CKA_CLASS, p11.CKO_SECRET_KEY),
		p11.NewAttribute(p11.CKA_KEY_TYPE, p11.CKK_AES),
		p11.NewAttribute(p11.CKA_LABEL, label),
	}
	if err := mod.FindObjectsInit(h, template); err != nil {
		return nil, fail("C_FindObjectsInit", err)
	}
	var handles []p11.ObjectHandle
	for {
		batch, _, err := mod.FindObjects(h, 64)
		if err != nil {
			mod.FindObjectsFinal(h)
			return nil, fail("C_FindObjects", err)
		}
		if len(batch) == 0 {
			break
		}
		handles = append(handles, batch...)
	}
	if err := mod.FindObjectsFinal(h); err != nil {
		return nil, fail("C_FindObjectsFinal", err)
	}
	vs := make([]keyVersion, 0, len(handles))
	for _, oh := range handles {
		query := make([]*p11.Attribute, len(versionAttributes))
		for i, t := range versionAttributes {
			query[i] = p11.NewAttribute(t, nil)
		}
		attrs, err := mod.GetAttributeValue(h, oh, query)
		if err != nil {
			return nil, fail(fmt.Sprintf("C_GetAttributeValue of a key labelled %q", label), err)
		}
		v := keyVersion{handle: oh}
		for _, a := range attrs {
			switch a.Type {
			case p11.CKA_ID:
				v.id = a.Value
			case p11.CKA_ENCRYPT:
				v.encrypt = isTrue(a.Value)
			case p11.CKA_DECRYPT:
				v.decrypt = isTrue(a.Value)
			case p11.CKA_SENSITIVE:
				v.sensitive = isTrue(a.Value)
			case p11.CKA_EXTRACTABLE:
				v.extractable = isTrue(a.Value)
			case p11.CKA_PRIVATE:
				v.private = isTrue(a.Value)
			case p11.CKA_VALUE_LEN:
				v.size = ulong(a.Value)
			}
		}
		vs = append(vs, v)
	}
	slices.SortFunc(vs, func(a, b keyVersion) int { return compareIDs(a.id, b.id) })
	for i := 1; i < len(vs); i++ {
		if compareIDs(vs[i-1].id, vs[i].id) == 0 {
			return nil, kms.Errorf(kms.Failed, "two keys labelled %q have CKA_IDs %q and %q, equal as numbers: give each version its own",
				label, versionName(vs[i-1].id), versionName(vs[i].id))
		}
	}
	return vs, nil
}

func isTrue(b []byte) bool { return len(b) == 1 && b[0] != 0 }

// ulong decodes a CK_ULONG attribute (the platform's unsigned long).
func ulong(b []byte) uint64 {
	switch len(b) {
	case 8:
		return binary.NativeEndian.Uint64(b)
	case 4:
		return uint64(binary.NativeEndian.Uint32(b))
	}
	return 0
}
