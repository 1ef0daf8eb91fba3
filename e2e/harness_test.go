// Package e2e runs the s3seal binary as a subprocess and drives it with real
// S3 clients: aws-sdk-go-v2, the aws CLI, rclone and s3cmd, with the embedded
// store or moto_server as the backend.
package e2e

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// Dev credentials the binary uses when no backend endpoint is configured.
const (
	devAccessKey = "s3seal"
	devSecretKey = "s3seal-dev-secret"
)

var (
	s3sealBin string // path of the binary built by TestMain
	buildErr  error  // why the build failed, reported by startS3seal
)

func TestMain(m *testing.M) {
	os.Exit(runMain(m))
}

func runMain(m *testing.M) int {
	dir, err := os.MkdirTemp("", "s3seal-e2e-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e:", err)
		return 1
	}
	defer os.RemoveAll(dir)
	s3sealBin = filepath.Join(dir, "s3seal")
	cmd := exec.Command("go", "build", "-o", s3sealBin, "github.com/s3seal/s3seal/cmd/s3seal")
	if out, err := cmd.CombinedOutput(); err != nil {
		buildErr = fmt.Errorf("go build ./cmd/s3seal: %v\n%s", err, out)
	}
	return m.Run()
}

// inCI reports whether the tests run under CI, where a missing tool is a
// failure rather than a skip.
func inCI() bool { return os.Getenv("CI") == "true" }

// requireTool returns the path of an external program. Under CI a missing
// program fails the test; elsewhere the test is skipped with a message.
func requireTool(t testing.TB, name string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err == nil {
		return p
	}
	if inCI() {
		t.Fatalf("%s not found on PATH (required under CI=true; scripts/test.sh installs it): %v", name, err)
	} else {
		t.Skipf("%s not found on PATH; install it (see scripts/test.sh) to run this test", name)
	}
	return ""
}

// isolatedPythonEnv is the environment for a boto3 script run in dir:
// plain HTTP without AWS_CA_BUNDLE (which breaks boto3 over it), and no
// AWS configuration or credentials of the machine's (HOME and both files
// point into dir); extra is added.
func isolatedPythonEnv(dir string, extra ...string) []string {
	return cleanEnv([]string{"AWS_CA_BUNDLE"}, append([]string{"HOME=" + dir,
		"AWS_CONFIG_FILE=" + filepath.Join(dir, "none"), "AWS_SHARED_CREDENTIALS_FILE=" + filepath.Join(dir, "none")}, extra...)...)
}

// requireBoto3 returns the path of python3 once it imports boto3 (the
// tests' scripts do); without it the test fails under CI and is skipped
// elsewhere, naming what is missing, as requireTool does.
func requireBoto3(t testing.TB) string {
	t.Helper()
	py := requireTool(t, "python3")
	if py == "" {
		return ""
	}
	out, err := exec.Command(py, "-c", "import boto3").CombinedOutput()
	if err == nil {
		return py
	}
	missing := fmt.Sprintf("python3 (%s) cannot import boto3: %v: %s", py, err, bytes.TrimSpace(out))
	if inCI() {
		t.Fatalf("%s (required under CI=true; scripts/test.sh installs Debian's python3-boto3)", missing)
	} else {
		t.Skipf("%s; install Debian's python3-boto3 (see scripts/test.sh) to run this test", missing)
	}
	return ""
}

// logBuffer collects a subprocess's output and signals when a line matching
// re appears.
type logBuffer struct {
	mu    sync.Mutex
	buf   bytes.Buffer
	re    *regexp.Regexp
	match chan string
	found bool
}

func newLogBuffer(re *regexp.Regexp) *logBuffer {
	return &logBuffer{re: re, match: make(chan string, 1)}
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.buf.Write(p)
	if l.re != nil && !l.found {
		if m := l.re.FindSubmatch(l.buf.Bytes()); m != nil {
			l.found = true
			l.match <- string(m[1])
		}
	}
	return len(p), nil
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

// sealOpts configures one s3seal subprocess.
type sealOpts struct {
	// DataDir is reused when set (restart tests); otherwise a fresh one.
	DataDir string
	// Backend makes s3seal use moto_server instead of the embedded store,
	// with a random master key and the client credentials below.
	Backend *motoServer
	// Client credentials; default to the dev credentials, or to fixed
	// test credentials when Backend is set.
	AccessKey, SecretKey string
	// Key is the base64 master key given with a backend; random if empty.
	Key string
	// Extra flags after "serve" and extra environment variables.
	Args []string
	Env  []string
	// KeysFile and CredentialsFile, when set, are passed as --keys-file and
	// --credentials-file instead of --key and --access-key/--secret-key.
	KeysFile, CredentialsFile string
	// KMSKey, when set, is passed as --kms-key; with a backend, no --key
	// is given then.
	KMSKey string
	// TLSCert and TLSKey (PEM files) make s3seal serve HTTPS: Endpoint is
	// then https://ADDR and /healthz is polled trusting TLSRoots.
	TLSCert, TLSKey string
	TLSRoots        *x509.CertPool
	// Binary, when set, is the s3seal executable run instead of
	// s3sealBin (a build with other tags).
	Binary string
}

// sealProc is a running s3seal.
type sealProc struct {
	Endpoint             string // http://127.0.0.1:PORT
	Addr                 string // 127.0.0.1:PORT
	DataDir              string
	AccessKey, SecretKey string
	Key                  string
	cmd                  *exec.Cmd
	log                  *logBuffer
	done                 chan struct{}
	stopOnce             sync.Once
}

var listenRE = regexp.MustCompile(`listening on https?://([0-9A-Za-z.\-\[\]:]+)`)

// sealEnv is the environment of an s3seal subprocess: the test's own, minus
// any S3SEAL_* setting that would leak into it, plus extra. AWS_CA_BUNDLE is
// deliberately kept: s3seal must work with it set.
func sealEnv(extra []string) []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "S3SEAL_") {
			env = append(env, kv)
		}
	}
	return append(env, extra...)
}

func requireBinary(t testing.TB) {
	t.Helper()
	if buildErr != nil {
		t.Fatal(buildErr)
	}
}

// randomKey returns a base64 32-byte master key.
func randomKey(t testing.TB) string {
	t.Helper()
	k := make([]byte, 32)
	if _, err := rand.Read(k); err != nil {
		t.Fatal(err)
	}
	return base64.StdEncoding.EncodeToString(k)
}

// startS3seal starts s3seal on a free loopback port, waits until /healthz
// answers 200 and stops it when the test ends, printing its log if the test
// failed.
func startS3seal(t testing.TB, o sealOpts) *sealProc {
	t.Helper()
	requireBinary(t)
	p := &sealProc{DataDir: o.DataDir, AccessKey: o.AccessKey, SecretKey: o.SecretKey, Key: o.Key}
	if p.DataDir == "" {
		p.DataDir = filepath.Join(t.TempDir(), "data")
	}
	args := []string{"serve", "--listen", "127.0.0.1:0", "--data-dir", p.DataDir}
	if o.Backend != nil {
		if p.AccessKey == "" && o.CredentialsFile == "" {
			p.AccessKey, p.SecretKey = "e2e-access", "e2e-secret-key"
		}
		if p.Key == "" && o.KeysFile == "" && (o.KMSKey == "" || strings.HasSuffix(o.KMSKey, "://")) {
			p.Key = randomKey(t)
		}
		args = append(args,
			"--backend-endpoint", o.Backend.Endpoint,
			"--backend-region", "us-east-1",
			"--backend-path-style",
			"--backend-access-key", "x", "--backend-secret-key", "y")
		if p.Key != "" {
			args = append(args, "--key", p.Key)
		}
	}
	if o.KeysFile != "" {
		args = append(args, "--keys-file", o.KeysFile)
	}
	if o.KMSKey != "" {
		args = append(args, "--kms-key", o.KMSKey)
	}
	switch {
	case o.CredentialsFile != "":
		args = append(args, "--credentials-file", o.CredentialsFile)
	case p.AccessKey == "":
		p.AccessKey, p.SecretKey = devAccessKey, devSecretKey
	default:
		args = append(args, "--access-key", p.AccessKey, "--secret-key", p.SecretKey)
	}
	if o.TLSCert != "" {
		args = append(args, "--tls-cert", o.TLSCert, "--tls-key", o.TLSKey)
	}
	// Stopping a test's s3seal needs no time for load balancers to
	// notice; a test of the shutdown gives --shutdown-delay again in Args
	// (the last one wins).
	args = append(args, "--shutdown-delay", "0s")
	args = append(args, o.Args...)

	p.log = newLogBuffer(listenRE)
	bin := s3sealBin
	if o.Binary != "" {
		bin = o.Binary
	}
	p.cmd = exec.Command(bin, args...)
	p.cmd.Env = sealEnv(o.Env)
	p.cmd.Stdout, p.cmd.Stderr = p.log, p.log
	if err := p.cmd.Start(); err != nil {
		t.Fatalf("start s3seal: %v", err)
	}
	p.done = make(chan struct{})
	go func() { _ = p.cmd.Wait(); close(p.done) }()
	t.Cleanup(func() {
		if t.Failed() {
			p.dumpGoroutines()
		}
		p.Stop()
		if t.Failed() {
			t.Logf("s3seal %v log:\n%s", args, p.log.String())
		}
	})

	select {
	case p.Addr = <-p.log.match:
	case <-p.done:
		t.Fatalf("s3seal exited before listening (%v):\n%s", p.cmd.ProcessState, p.log.String())
	case <-time.After(30 * time.Second):
		t.Fatalf("s3seal printed no %q line within 30s:\n%s", listenRE, p.log.String())
	}
	p.Endpoint = "http://" + p.Addr
	client := &http.Client{Timeout: 2 * time.Second}
	if o.TLSCert != "" {
		p.Endpoint = "https://" + p.Addr
		client.Transport = &http.Transport{TLSClientConfig: &tls.Config{RootCAs: o.TLSRoots}}
	}
	waitHTTPClient(t, client, p.Endpoint+"/healthz", p.done, func(code int) bool { return code == http.StatusOK })
	return p
}

// Stop ends the process (SIGTERM, then SIGKILL after 10 s) and waits for it.
func (p *sealProc) Stop() { p.stopWith(syscall.SIGTERM) }

// dumpGoroutines makes a running s3seal print every goroutine's stack to
// its log (Go's SIGQUIT handler) and exit, so a failed test shows where a
// request was stuck.
func (p *sealProc) dumpGoroutines() { p.stopWith(syscall.SIGQUIT) }

// stopWith sends sig once, then SIGKILL if the process is still there
// after 10 s, and waits for it to exit. Later calls do nothing.
func (p *sealProc) stopWith(sig os.Signal) {
	p.stopOnce.Do(func() {
		_ = p.cmd.Process.Signal(sig)
		select {
		case <-p.done:
		case <-time.After(10 * time.Second):
			_ = p.cmd.Process.Kill()
			<-p.done
		}
	})
}

// PID is the process id of the running s3seal.
func (p *sealProc) PID() int { return p.cmd.Process.Pid }

// Log is everything s3seal printed so far.
func (p *sealProc) Log() string { return p.log.String() }

// waitHTTP polls url until ok(status) or until 30 s have passed or exited
// is closed.
func waitHTTP(t *testing.T, url string, exited <-chan struct{}, ok func(int) bool) {
	t.Helper()
	waitHTTPClient(t, &http.Client{Timeout: 2 * time.Second}, url, exited, ok)
}

// waitHTTPClient is waitHTTP with a given client (for HTTPS).
func waitHTTPClient(t testing.TB, client *http.Client, url string, exited <-chan struct{}, ok func(int) bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	var last string
	for time.Now().Before(deadline) {
		resp, err := client.Get(url)
		if err == nil {
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if ok(resp.StatusCode) {
				return
			}
			last = resp.Status
		} else {
			last = err.Error()
		}
		select {
		case <-exited:
			t.Fatalf("process exited while waiting for %s (last: %s)", url, last)
		case <-time.After(50 * time.Millisecond):
		}
	}
	t.Fatalf("%s not ready after 30s (last: %s)", url, last)
}

// runS3sealExit runs the binary to completion (at most 30 s) and returns its
// exit code and output.
func runS3sealExit(t *testing.T, env []string, args ...string) (int, string) {
	t.Helper()
	requireBinary(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, s3sealBin, args...)
	cmd.Env = sealEnv(env)
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	switch {
	case err == nil:
		return 0, string(out)
	case errors.As(err, &ee) && ctx.Err() == nil:
		return ee.ExitCode(), string(out)
	default:
		t.Fatalf("run s3seal %v: %v\n%s", args, err, out)
		return -1, ""
	}
}

// motoServer is a running moto_server, an independent in-memory S3.
type motoServer struct {
	Endpoint string
	PID      int
}

// startMoto starts moto_server on a free loopback port and waits for it.
func startMoto(t *testing.T) *motoServer {
	t.Helper()
	bin := requireTool(t, "moto_server")
	var lastLog string
	for attempt := 0; attempt < 3; attempt++ {
		port := freePort(t)
		log := newLogBuffer(nil)
		cmd := exec.Command(bin, "-H", "127.0.0.1", "-p", strconv.Itoa(port))
		cmd.Stdout, cmd.Stderr = log, log
		if err := cmd.Start(); err != nil {
			t.Fatalf("start moto_server: %v", err)
		}
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		endpoint := fmt.Sprintf("http://127.0.0.1:%d", port)
		if waitMoto(endpoint, done) {
			t.Cleanup(func() {
				_ = cmd.Process.Kill()
				<-done
			})
			return &motoServer{Endpoint: endpoint, PID: cmd.Process.Pid}
		}
		_ = cmd.Process.Kill()
		<-done
		lastLog = log.String()
	}
	t.Fatalf("moto_server did not start:\n%s", lastLog)
	return nil
}

func waitMoto(endpoint string, exited <-chan struct{}) bool {
	client := &http.Client{Timeout: 2 * time.Second}
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		if resp, err := client.Get(endpoint + "/"); err == nil {
			resp.Body.Close()
			return true
		}
		select {
		case <-exited:
			return false
		case <-time.After(100 * time.Millisecond):
		}
	}
	return false
}

// freePort asks the kernel for a free loopback port. Only for programs that
// cannot report the port they bound (moto_server).
func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// onEachStore runs f as two parallel subtests, with s3seal in front of
// moto and over the embedded store (both keep versions).
func onEachStore(t *testing.T, f func(t *testing.T, p *sealProc)) {
	t.Helper()
	onEachStoreOpts(t, func(t *testing.T, o sealOpts) { f(t, startS3seal(t, o)) })
}

// onEachStoreOpts is onEachStore for tests that start (and restart)
// s3seal themselves: o names moto as the backend, or none (embedded).
func onEachStoreOpts(t *testing.T, f func(t *testing.T, o sealOpts)) {
	t.Helper()
	for _, name := range []string{"moto", "embedded"} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			var o sealOpts
			if name == "moto" {
				o.Backend = startMoto(t)
			}
			f(t, o)
		})
	}
}
