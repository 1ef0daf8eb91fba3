package vault

import (
	"crypto/tls"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/s3seal/s3seal/kms"
)

// maxTokenFile bounds what is read of a token file.
const maxTokenFile = 64 << 10

// tokenFile is a file that holds the token, read again when it changes
// (Vault Agent rewrites its sink when it renews or re-authenticates).
type tokenFile struct {
	path string

	mu      sync.Mutex
	modTime time.Time
	size    int64
}

// setToken gives the client the token from its one source (see the
// package documentation).
func (p *Provider) setToken(uriFile string, getenv func(string) string) error {
	var sources []string
	env, envFile := getenv("VAULT_TOKEN"), getenv("VAULT_TOKEN_FILE")
	if env != "" {
		sources = append(sources, "VAULT_TOKEN")
	}
	if uriFile != "" {
		sources = append(sources, "token-file in the URI")
	}
	if envFile != "" {
		sources = append(sources, "VAULT_TOKEN_FILE")
	}
	switch {
	case len(sources) == 0:
		return fmt.Errorf("hcvault: no token: set VAULT_TOKEN, or name a file that holds it (token-file in the URI or VAULT_TOKEN_FILE)")
	case len(sources) > 1:
		return fmt.Errorf("hcvault: %s all name a token: give one", strings.Join(sources, " and "))
	case env != "":
		p.client.SetToken(strings.TrimSpace(env))
		return nil
	}
	path := uriFile
	if path == "" {
		path = envFile
	}
	p.token = &tokenFile{path: path}
	return p.refreshToken()
}

// refreshToken reads the token file again when it has changed since it
// was last read.
func (p *Provider) refreshToken() error {
	if p.token == nil {
		return nil
	}
	t := p.token
	t.mu.Lock()
	defer t.mu.Unlock()
	st, err := os.Stat(t.path)
	if err != nil {
		return kms.Errorf(kms.Failed, "hcvault: token file: %v", err)
	}
	if st.ModTime().Equal(t.modTime) && st.Size() == t.size {
		return nil
	}
	tok, st, err := readPrivateFile(t.path)
	if err != nil {
		return kms.Errorf(kms.Failed, "hcvault: token file: %v", err)
	}
	token := strings.TrimSpace(string(tok))
	if token == "" {
		return kms.Errorf(kms.Failed, "hcvault: token file %s is empty", t.path)
	}
	p.client.SetToken(token)
	t.modTime, t.size = st.ModTime(), st.Size()
	return nil
}

// readPrivateFile reads a file that holds a secret, refusing it, as
// s3seal refuses its other secret files, when its group or others may
// access it in any way: they could read the token, or replace it.
func readPrivateFile(path string) ([]byte, os.FileInfo, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, nil, fmt.Errorf("%s is not a regular file", path)
	}
	if perm := st.Mode().Perm(); perm&0o077 != 0 {
		return nil, nil, fmt.Errorf("%s holds secrets but its group or others may access it (mode %04o); run: chmod 600 %s", path, perm, path)
	}
	data, err := io.ReadAll(io.LimitReader(f, maxTokenFile+1))
	if err != nil {
		return nil, nil, err
	}
	if len(data) > maxTokenFile {
		return nil, nil, fmt.Errorf("%s is larger than %d bytes", path, maxTokenFile)
	}
	return data, st, nil
}

// newTLSConfig is the api client's default: TLS 1.2 at least.
func newTLSConfig() *tls.Config { return &tls.Config{MinVersion: tls.VersionTLS12} }
