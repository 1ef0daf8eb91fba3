package main

import (
	"fmt"
	"log/slog"
	"maps"
	"os"
	"slices"
	"strings"

	"github.com/s3seal/s3seal/crypto"
	"github.com/s3seal/s3seal/kms"
	_ "github.com/s3seal/s3seal/kms/awskms" // aws-kms:// master keys
	_ "github.com/s3seal/s3seal/kms/vault"  // hcvault:// master keys
	"github.com/s3seal/s3seal/s3api"
)

// keys is what s3seal seals with: the keyring, and the key service of its
// master keys held outside s3seal (nil without one) with the external id
// of the default KMS key ("" for none).
type keys struct {
	kr         *crypto.Keyring
	svc        *kms.Service
	kmsDefault string
}

// loadKeys builds the keyring from --key, --keys-file and --kms-key. With
// --kms-key naming a key, that key is the primary: new objects are sealed
// under it and the local keys (if any) keep reading what they sealed. A
// keys file's "kms" entries name more KMS keys by local id. With neither
// a local key nor a KMS key, on the embedded store and a loopback address
// only, the development key in the data dir.
func loadKeys(cfg *config, loopback bool, obs kms.Observer) (keys, error) {
	var doc crypto.KeyringDoc
	var local *crypto.Keyring
	switch {
	case cfg.Key != "":
		key, err := crypto.ParseKey(strings.TrimSpace(cfg.Key))
		if err != nil {
			return keys{}, usagef("%s: %v", cfg.keySource(), err)
		}
		doc = crypto.KeyringDoc{Primary: "default", Keys: map[string][]byte{"default": key}}
	case cfg.KeysFile != "":
		data, err := readPrivateFile(cfg.KeysFile)
		if err != nil {
			return keys{}, usagef("--keys-file: %v", err)
		}
		if doc, err = crypto.ParseKeyringDoc(data); err != nil {
			return keys{}, usagef("--keys-file %s: %v", cfg.KeysFile, err)
		}
	case cfg.KMSKey == "":
		kr, err := devKeyring(cfg, loopback)
		return keys{kr: kr}, err
	case !kmsURINamesKey(cfg.KMSKey):
		// The KMS as a service only (SSE-KMS naming its keys): new objects
		// get the development key, on the terms devKeyring sets.
		var err error
		if local, err = devKeyring(cfg, loopback); err != nil {
			return keys{}, err
		}
		return openKMS(cfg, doc, local, obs)
	}
	if len(doc.Keys) > 0 {
		primary := doc.Primary
		if _, ok := doc.Keys[primary]; !ok {
			for id := range doc.Keys { // the primary is a KMS key: any local one reads
				primary = id
				break
			}
		}
		var err error
		if local, err = crypto.NewKeyring(primary, doc.Keys); err != nil {
			return keys{}, usagef("--keys-file %s: %v", cfg.KeysFile, err)
		}
	}
	if cfg.KMSKey == "" && len(doc.KMS) == 0 {
		return keys{kr: local}, nil
	}
	return openKMS(cfg, doc, local, obs)
}

// openKMS opens the providers --kms-key and the keys file's "kms" entries
// name (one per kind of service) and puts them behind one key service.
func openKMS(cfg *config, doc crypto.KeyringDoc, local *crypto.Keyring, obs kms.Observer) (keys, error) {
	providers := map[string]kms.Provider{}
	var order []kms.Provider
	open := func(src, uri string) (string, error) {
		p, name, err := kms.Open(uri, os.Getenv)
		if err != nil {
			return "", usagef("%s: %v", src, err)
		}
		if _, ok := providers[p.Scheme()]; !ok {
			providers[p.Scheme()] = p
			order = append(order, p)
		}
		if name == "" {
			return "", nil
		}
		return p.Scheme() + ":" + name, nil
	}
	var out keys
	if cfg.KMSKey != "" {
		id, err := open(cfg.src("kms-key"), cfg.KMSKey)
		if err != nil {
			return keys{}, err
		}
		out.kmsDefault = id
	}
	aliases := map[string]string{}
	for alias, uri := range doc.KMS {
		id, err := open(fmt.Sprintf("--keys-file %s: key %q", cfg.KeysFile, alias), uri)
		if err != nil {
			return keys{}, err
		}
		if id == "" {
			return keys{}, usagef("--keys-file %s: key %q: %s names no key", cfg.KeysFile, alias, uri)
		}
		aliases[alias] = id
	}
	svc, err := kms.NewService(kms.Options{CacheTTL: cfg.KMSCacheTTL, CacheSize: cfg.KMSCacheSize,
		BucketKeyTTL: cfg.KMSBucketKeyTTL, Timeout: cfg.KMSTimeout, TrustGenerate: !cfg.KMSCheckWrites, Observer: obs}, order...)
	if err != nil {
		return keys{}, usagef("%v", err)
	}
	primary := out.kmsDefault
	if _, isKMS := aliases[doc.Primary]; primary == "" && isKMS {
		primary = doc.Primary // a keys file whose primary is one of its KMS keys
	}
	if primary == "" && local == nil {
		return keys{}, usagef("%s names no key and there is no other master key: name one (aws-kms://<key id>)", cfg.src("kms-key"))
	}
	kr, err := local.WithService(svc, primary, aliases)
	if err != nil {
		return keys{}, usagef("master keys: %v", err)
	}
	out.kr, out.svc = kr, svc
	if out.kmsDefault == "" {
		if ext, ok := kr.External(kr.Primary()); ok {
			out.kmsDefault = ext
		}
	}
	slog.Info("master keys held outside s3seal", "primary", kr.Primary(), "default_kms_key", out.kmsDefault)
	return out, nil
}

// checkCredentialKeys makes each credential's key_id an id the keyring
// seals with: a local key, a keys file's id, or a KMS key named by its
// external id (aws-kms:<ARN>, ...) or by its AWS ARN.
func checkCredentialKeys(creds s3api.Credentials, ks keys) error {
	for ak, c := range creds {
		if c.KeyID == "" || ks.kr.Has(c.KeyID) {
			continue
		}
		if ks.svc != nil && strings.HasPrefix(c.KeyID, "arn:") {
			if id, ok := ks.svc.Resolve(c.KeyID); ok {
				c.KeyID = id
				creds[ak] = c
				continue
			}
		}
		return usagef("credential %q names master key %q, which is not in the keyring", c.AccessKey, c.KeyID)
	}
	return nil
}

// kmsProbeKeys are the keys /readyz checks: one of each KMS service
// s3seal seals with (the primary, the default KMS key, the credentials'
// keys, the keys file's, in that order of preference).
func kmsProbeKeys(ks keys, creds s3api.Credentials) []string {
	if ks.svc == nil {
		return nil
	}
	candidates := []string{ks.kr.Primary(), ks.kmsDefault}
	for _, ak := range slices.Sorted(maps.Keys(creds)) {
		candidates = append(candidates, creds[ak].KeyID)
	}
	candidates = append(candidates, ks.kr.IDs()...)
	var out []string
	seen := map[string]bool{}
	for i, c := range candidates {
		ext, ok := ks.kr.External(c)
		if !ok {
			continue
		}
		scheme, _, _ := strings.Cut(ext, ":")
		if i < 2 && !slices.Contains(out, ext) || !seen[scheme] { // the primary and the default always
			seen[scheme] = true
			out = append(out, ext)
		}
	}
	return out
}

// kmsURINamesKey reports whether a master key URI names a key, not the
// service alone (aws-kms://, hcvault://host:port/transit, pkcs11:token=x).
func kmsURINamesKey(uri string) bool {
	switch {
	case strings.HasPrefix(uri, "aws-kms://"):
		return len(uri) > len("aws-kms://")
	case strings.HasPrefix(uri, "hcvault://"):
		return strings.Contains(uri, "/keys/")
	case strings.HasPrefix(uri, "pkcs11:"):
		path, _, _ := strings.Cut(strings.TrimPrefix(uri, "pkcs11:"), "?")
		return strings.Contains(";"+path, ";object=")
	}
	return true
}
