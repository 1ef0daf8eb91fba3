package vault

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hashicorp/vault/api"
)

// The tests run against a real Vault server in dev mode (in memory,
// unsealed), started once for the package. scripts/vault-dev.sh builds
// it; $S3SEAL_VAULT_BIN names another binary (Vault or OpenBao's bao).
// Without one the tests that need it skip, unless S3SEAL_REQUIRE_VAULT is
// set: then they fail.

// vaultVersion is the Vault scripts/vault-dev.sh builds.
const vaultVersion = "1.21.4"

// rootToken is the dev server's root token.
const rootToken = "s3seal-test-root"

// dev is the package's server, nil when there is none (devMissing says
// why).
var (
	dev        *devServer
	devMissing string
)

func TestMain(m *testing.M) {
	code := func() int {
		bin, why := vaultBinary()
		if bin == "" {
			devMissing = why
		} else {
			var err error
			if dev, err = startDev(bin, ""); err != nil {
				fmt.Fprintf(os.Stderr, "starting the Vault dev server: %v\n", err)
				return 1
			}
			defer dev.stop()
			if err := dev.setUp(); err != nil {
				fmt.Fprintf(os.Stderr, "setting up the Vault dev server: %v\n%s", err, dev.log())
				return 1
			}
		}
		return m.Run()
	}()
	os.Exit(code)
}

// vaultBinary finds the server binary, or says what is missing.
func vaultBinary() (bin, missing string) {
	if b := os.Getenv("S3SEAL_VAULT_BIN"); b != "" {
		if _, err := os.Stat(b); err != nil {
			return "", fmt.Sprintf("S3SEAL_VAULT_BIN=%s: %v", b, err)
		}
		return b, ""
	}
	cache, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Sprintf("no Vault server: set S3SEAL_VAULT_BIN (no cache directory: %v)", err)
	}
	b := filepath.Join(cache, "s3seal", "vault-"+vaultVersion, "vault")
	if _, err := os.Stat(b); err != nil {
		return "", fmt.Sprintf("no Vault server at %s: run scripts/vault-dev.sh to build it, or set S3SEAL_VAULT_BIN", b)
	}
	return b, ""
}

// needDev returns the package's server, or skips (fails with
// S3SEAL_REQUIRE_VAULT) when there is none.
func needDev(t *testing.T) *devServer {
	t.Helper()
	if dev == nil {
		if os.Getenv("S3SEAL_REQUIRE_VAULT") != "" {
			t.Fatalf("S3SEAL_REQUIRE_VAULT is set but %s", devMissing)
		}
		t.Skip(devMissing)
	}
	return dev
}

// devServer is one `vault server -dev` process.
type devServer struct {
	cmd    *exec.Cmd
	addr   string // 127.0.0.1:port
	out    *lockedWriter
	root   *api.Client
	exited chan struct{}
}

// startDev starts a dev server on a free port and waits until it
// answers. With tlsDir it speaks https, with a CA it writes there
// (vault-ca.pem).
func startDev(bin, tlsDir string) (*devServer, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	addr := l.Addr().String()
	l.Close()
	d := &devServer{addr: addr, out: &lockedWriter{}, exited: make(chan struct{})}
	args := []string{"server", "-dev", "-dev-root-token-id=" + rootToken, "-dev-listen-address=" + addr, "-dev-no-store-token"}
	scheme := "http"
	if tlsDir != "" {
		args = append(args, "-dev-tls", "-dev-tls-cert-dir="+tlsDir)
		scheme = "https"
	}
	d.cmd = exec.Command(bin, args...)
	d.cmd.Stdout, d.cmd.Stderr = d.out, d.out
	d.cmd.Env = append(os.Environ(), "VAULT_DISABLE_MLOCK=true")
	setDeathSignal(d.cmd)
	if err := d.cmd.Start(); err != nil {
		return nil, err
	}
	go func() { d.cmd.Wait(); close(d.exited) }()
	deadline := time.Now().Add(60 * time.Second)
	for {
		if d.root == nil {
			// With -dev-tls, the CA is there once the server has begun.
			d.root, _ = rootClient(scheme, addr, tlsDir)
		}
		if d.root != nil {
			if h, err := d.root.Sys().Health(); err == nil && h.Initialized && !h.Sealed {
				return d, nil
			}
		}
		select {
		case <-d.exited:
			return nil, fmt.Errorf("%s exited: %s", bin, d.log())
		case <-time.After(100 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			d.stop()
			return nil, fmt.Errorf("%s did not answer on %s within a minute: %s", bin, addr, d.log())
		}
	}
}

func rootClient(scheme, addr, tlsDir string) (*api.Client, error) {
	cfg := &api.Config{Address: scheme + "://" + addr, HttpClient: &http.Client{Timeout: 10 * time.Second,
		Transport: &http.Transport{TLSClientConfig: newTLSConfig()}}}
	if tlsDir != "" {
		if err := cfg.ConfigureTLS(&api.TLSConfig{CACert: filepath.Join(tlsDir, "vault-ca.pem")}); err != nil {
			return nil, err
		}
	}
	c, err := api.NewClient(cfg)
	if err != nil {
		return nil, err
	}
	c.SetToken(rootToken)
	c.ClearNamespace()
	return c, nil
}

func (d *devServer) log() string { return d.out.String() }

// lockedWriter is the server's output, written from two goroutines.
type lockedWriter struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (w *lockedWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.Write(p)
}

func (w *lockedWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.String()
}

func (d *devServer) stop() {
	if d.cmd.Process != nil {
		d.cmd.Process.Kill()
		<-d.exited
	}
}

// setUp mounts the Transit engines the tests use: "transit" and one
// whose path has slashes.
func (d *devServer) setUp() error {
	for _, m := range []string{"transit", nestedMount} {
		if err := d.root.Sys().Mount(m, &api.MountInput{Type: "transit"}); err != nil {
			return err
		}
	}
	return nil
}

const nestedMount = "kms/keys/tenants"

// createKey creates a Transit key of the mount with the given
// parameters (type, derived, ...).
func (d *devServer) createKey(t *testing.T, mount, name string, params map[string]any) {
	t.Helper()
	if _, err := d.root.Logical().Write(mount+"/keys/"+name, params); err != nil {
		t.Fatalf("creating key %s/%s: %v", mount, name, err)
	}
}

// uri is the hcvault URI of a key of the mount on this server.
func (d *devServer) uri(mount, name string) string {
	return "hcvault://" + d.addr + "/" + mount + "/keys/" + name + "?tls=false"
}

// open opens the provider of mount/keys/name with the given token.
func (d *devServer) open(t *testing.T, mount, name, token string) *Provider {
	t.Helper()
	p, got, err := Open(d.uri(mount, name), envOf(map[string]string{"VAULT_TOKEN": token}))
	if err != nil {
		t.Fatal(err)
	}
	if got != name {
		t.Fatalf("Open gave key name %q, want %q", got, name)
	}
	return p
}

// envOf is a getenv over m.
func envOf(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

// keys counts the key names handed out: the server outlives a test run
// (go test -count).
var keys atomic.Int64

// keyName is a fresh key name for a test.
func keyName(t *testing.T) string {
	return fmt.Sprintf("%s-%d", strings.NewReplacer("/", "-", "#", "-").Replace(t.Name()), keys.Add(1))
}

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}
