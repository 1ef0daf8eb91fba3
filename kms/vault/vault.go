// Package vault reaches master keys held in a Vault or OpenBao Transit
// secrets engine: the kms.Provider of the "hcvault" scheme. Importing it
// registers it with kms.Open.
//
// # The URI
//
//	hcvault://<host:port>/<mount>/keys/<name>[?tls=false][&token-file=<path>]
//
// names the key <name> of the Transit engine mounted at <mount> (which
// may hold slashes: the path is split at its last "/keys/"); without
// "/keys/<name>" (hcvault://vault:8200/transit) it names the engine
// alone. The port defaults to 8200. Key names are Transit's: letters,
// digits and '_', with '-', '.' and '@' inside; mount segments are of
// letters, digits, '_', '-', '.' and '@'. A Service holds one hcvault
// provider, so one engine: its keys are named by their bare name
// ("tenant-a", external id "hcvault:tenant-a"), and "<mount>/keys/<name>"
// of the same mount is taken as another spelling of it. The id leaves
// the mount out so that moving the engine (sys/remount) keeps every
// object readable: the id is bound into each wrapped data key.
//
// s3seal speaks https to Vault and verifies its certificate; "tls=false"
// in the query makes it speak plain http, for a dev server on a trusted
// network only (the token then crosses the network in the clear).
// VAULT_ADDR is not read: the URI names the server. Other query
// parameters are refused, and so are a user or password in the URI.
//
// # The token and the environment
//
// The token comes from exactly one of: VAULT_TOKEN; the file that
// "token-file" in the URI names; the file VAULT_TOKEN_FILE names. Giving
// more than one is refused. A token file is refused when its group or
// others may access it (as s3seal's other secret files are: chmod 600;
// for Vault Agent's file sink, set mode = 0600), and it is read again
// when it changes, so an agent that renews the token by rewriting the
// file is followed.
//
// VAULT_CACERT, VAULT_CAPATH, VAULT_CLIENT_CERT, VAULT_CLIENT_KEY,
// VAULT_TLS_SERVER_NAME and VAULT_NAMESPACE mean what they mean to the
// vault command. VAULT_SKIP_VERIFY is refused when true: give the CA
// instead. HTTPS_PROXY and NO_PROXY apply as to any Go program. The api
// client's own retries are off: kms.Service retries within its bounds.
//
// # The calls
//
// s3seal's token needs:
//
//	path "<mount>/datakey/plaintext/<name>" { capabilities = ["update"] }
//	path "<mount>/decrypt/<name>"           { capabilities = ["update"] }
//	path "<mount>/rewrap/<name>"            { capabilities = ["update"] }
//	path "<mount>/keys/<name>"              { capabilities = ["read"] }
//
// GenerateKey asks datakey/plaintext for 256 bits: the sealed key is
// Transit's ciphertext as it answers it ("vault:v<N>:<base64>"), which
// names the key version; Version returns "v<N>". Decrypt asks decrypt,
// Rewrap asks rewrap (which seals under the key's latest version), and
// Check reads the key, which tells whether it exists and can encrypt and
// decrypt.
//
// # The encryption context
//
// Transit binds nothing of the context S3 gives: its datakey endpoint
// takes no associated_data (Vault 1.21 answers "Endpoint ignored these
// unrecognized parameters: [associated_data]"), and a "context" only
// derives the key of a key created with derived=true. So the provider
// passes no context, and refuses derived keys (Check says so). s3seal
// binds the context itself: the intermediate key wraps each data key with
// the master key's id, the object's name, the bucket-key flag and the
// context in the AEAD's associated data (crypto/envelope.go, wrapAAD), so
// an envelope moved to another object or given another context does not
// open. A binding inside Transit would add nothing against a caller that
// holds s3seal's token: the context is stored in the clear beside the
// sealed key, so that caller could name it.
//
// # Errors
//
// No answer, a timeout, 429, 412 and 5xx (a sealed or standby Vault) are
// kms.Unavailable; 403 is kms.Denied; a key or mount that does not exist
// (400 "encryption key not found", 404) is kms.NotFound; a ciphertext
// this key did not make ("cipher: message authentication failed",
// "invalid ciphertext: ...") is kms.Invalid; a ciphertext of a version
// below the key's min_decryption_version is kms.Disabled (the version was
// retired); a certificate that does not verify, a server that does not
// speak what the URI says, and anything else are kms.Failed.
//
// # Shredding
//
// Transit has no switch that disables a key. Making objects unreadable
// (a crypto-shred) is one of:
//   - deleting the key: vault write <mount>/keys/<name>/config
//     deletion_allowed=true, then vault delete <mount>/keys/<name>
//     (NotFound from then on; irreversible without a backup);
//   - retiring versions: vault write <mount>/keys/<name>/config
//     min_decryption_version=<N> refuses what older versions sealed
//     (Disabled; reversible until the versions are trimmed with
//     <mount>/keys/<name>/trim min_available_version=<N>);
//   - taking the decrypt capability out of s3seal's policy, or revoking
//     its token (Denied; undone by giving the capability back, or a new
//     token).
//
// Objects stay readable until their intermediate keys leave kms.Service's
// cache (Options.CacheTTL).
package vault

import (
	"fmt"
	"net"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/hashicorp/vault/api"

	"github.com/s3seal/s3seal/kms"
)

// Scheme is the provider's scheme, the prefix of its external ids.
const Scheme = "hcvault"

// DefaultPort is Vault's port, taken when the URI names none.
const DefaultPort = "8200"

func init() {
	kms.Register("hcvault://", func(uri string, getenv func(string) string) (kms.Provider, string, error) {
		p, name, err := Open(uri, getenv)
		if err != nil {
			return nil, "", err
		}
		return p, name, nil
	})
}

// keyNameRE is Transit's key name (framework.GenericNameRegex).
var keyNameRE = regexp.MustCompile(`^\w(?:[\w.@-]*\w)?$`)

// mountSegmentRE is one segment of a mount path as s3seal takes it.
var mountSegmentRE = regexp.MustCompile(`^[\w.@-]+$`)

// Provider is a Transit engine of one Vault server, reached with one
// token. It is safe for concurrent use.
type Provider struct {
	client *api.Client
	// addr is host:port, as messages name the server.
	addr  string
	mount string
	token *tokenFile // nil: the token is VAULT_TOKEN's
}

var _ kms.Provider = (*Provider)(nil)

// Open makes the provider an hcvault URI names (see the package
// documentation) and returns the key's name, "" when the URI names the
// engine alone. getenv reads the environment (os.Getenv).
func Open(uri string, getenv func(string) string) (*Provider, string, error) {
	c, err := parseURI(uri)
	if err != nil {
		return nil, "", err
	}
	scheme := "https"
	if !c.tls {
		scheme = "http"
	}
	if v := getenv("VAULT_SKIP_VERIFY"); v != "" {
		if skip, err := strconv.ParseBool(v); err != nil || skip {
			return nil, "", fmt.Errorf("hcvault: VAULT_SKIP_VERIFY=%s: s3seal always verifies Vault's certificate; give its CA in VAULT_CACERT", v)
		}
	}
	transport := http.DefaultTransport.(*http.Transport).Clone()
	transport.TLSClientConfig = newTLSConfig()
	cfg := &api.Config{
		Address: scheme + "://" + c.addr,
		HttpClient: &http.Client{Transport: transport,
			// The api client follows a standby's redirect itself.
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }},
		MaxRetries: 0,
	}
	if c.tls {
		t := &api.TLSConfig{CACert: getenv("VAULT_CACERT"), CAPath: getenv("VAULT_CAPATH"),
			ClientCert: getenv("VAULT_CLIENT_CERT"), ClientKey: getenv("VAULT_CLIENT_KEY"),
			TLSServerName: getenv("VAULT_TLS_SERVER_NAME")}
		if err := cfg.ConfigureTLS(t); err != nil {
			return nil, "", fmt.Errorf("hcvault: TLS to %s: %w", c.addr, err)
		}
	}
	client, err := api.NewClient(cfg)
	if err != nil {
		return nil, "", fmt.Errorf("hcvault: %w", err)
	}
	// NewClient reads VAULT_TOKEN and VAULT_NAMESPACE from the process;
	// the provider reads them through getenv.
	client.ClearToken()
	client.ClearNamespace()
	if ns := getenv("VAULT_NAMESPACE"); ns != "" {
		client.SetNamespace(ns)
	}
	p := &Provider{client: client, addr: c.addr, mount: c.mount}
	if err := p.setToken(c.tokenFile, getenv); err != nil {
		return nil, "", err
	}
	return p, c.name, nil
}

// uriConfig is what an hcvault URI says.
type uriConfig struct {
	addr, mount, name string
	tls               bool
	tokenFile         string
}

func parseURI(uri string) (uriConfig, error) {
	c := uriConfig{tls: true}
	u, err := url.Parse(uri)
	if err != nil {
		return c, fmt.Errorf("hcvault: %q is not a URI: %v", uri, err)
	}
	if u.Scheme != "hcvault" || u.Opaque != "" {
		return c, fmt.Errorf("hcvault: %q: want hcvault://<host:port>/<mount>/keys/<name>", uri)
	}
	if u.User != nil {
		return c, fmt.Errorf("hcvault: a URI names no user or token: give the token in VAULT_TOKEN or a token file")
	}
	if u.Fragment != "" {
		return c, fmt.Errorf("hcvault: %q has a fragment", uri)
	}
	host, port := u.Hostname(), u.Port()
	if host == "" {
		return c, fmt.Errorf("hcvault: %q names no host", uri)
	}
	if port == "" {
		port = DefaultPort
	}
	c.addr = net.JoinHostPort(host, port)
	for k, vs := range u.Query() {
		if len(vs) != 1 {
			return c, fmt.Errorf("hcvault: %s is given %d times", k, len(vs))
		}
		switch k {
		case "tls":
			if c.tls, err = strconv.ParseBool(vs[0]); err != nil {
				return c, fmt.Errorf("hcvault: tls=%s: want true or false", vs[0])
			}
		case "token-file":
			if c.tokenFile = vs[0]; c.tokenFile == "" {
				return c, fmt.Errorf("hcvault: token-file names no file")
			}
		default:
			return c, fmt.Errorf("hcvault: unknown parameter %q (known: tls, token-file)", k)
		}
	}
	path := strings.TrimPrefix(u.Path, "/")
	if i := strings.LastIndex("/"+path, "/keys/"); i >= 0 {
		// path[i:] is "keys/<name>", path[:i] the mount and its '/'.
		c.mount, c.name = strings.TrimSuffix(path[:i], "/"), path[i+len("keys/"):]
		if c.name != "" && !keyNameRE.MatchString(c.name) {
			return c, fmt.Errorf("hcvault: %q is not a Transit key name (letters, digits and '_', with '-', '.' and '@' inside)", c.name)
		}
	} else {
		c.mount = strings.TrimSuffix(path, "/")
	}
	if err := checkMount(c.mount); err != nil {
		return c, err
	}
	return c, nil
}

func checkMount(mount string) error {
	if mount == "" {
		return fmt.Errorf("hcvault: the URI names no mount: want hcvault://<host:port>/<mount>/keys/<name>")
	}
	for _, seg := range strings.Split(mount, "/") {
		if !mountSegmentRE.MatchString(seg) || seg == "." || seg == ".." {
			return fmt.Errorf("hcvault: mount %q: each segment is letters, digits, '_', '-', '.' and '@'", mount)
		}
	}
	return nil
}

// keyName returns the Transit name of a key as s3seal names it: its bare
// name, or <mount>/keys/<name> of this provider's mount.
func (p *Provider) keyName(name string) (string, error) {
	if rest, ok := strings.CutPrefix(name, p.mount+"/keys/"); ok {
		name = rest
	}
	if !keyNameRE.MatchString(name) {
		return "", kms.Errorf(kms.NotFound, "%q is not a Transit key name of mount %s", name, p.mount)
	}
	return name, nil
}

// Scheme implements kms.Provider.
func (p *Provider) Scheme() string { return Scheme }

// String names the engine: https://host:port/mount.
func (p *Provider) String() string { return p.client.Address() + "/" + p.mount }

// callTimeout bounds a call when the caller's context has no deadline
// (kms.Service always gives one).
const callTimeout = 30 * time.Second
