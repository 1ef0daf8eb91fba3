// Package localkms starts local-kms (github.com/nsmithuk/local-kms, a Go
// implementation of the AWS KMS API, pinned as a tool in go.mod) for tests
// that need what moto's KMS does not do: refuse a disabled key.
package localkms

import (
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"
)

var (
	buildOnce sync.Once
	binPath   string
	buildErr  error
)

// binary builds local-kms once per test process (go build of the tool the
// module pins; the build cache makes it quick after the first time).
func binary(t testing.TB) string {
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "s3seal-local-kms-")
		if err != nil {
			buildErr = err
			return
		}
		binPath = filepath.Join(dir, "local-kms")
		out, err := exec.Command("go", "build", "-o", binPath, "github.com/nsmithuk/local-kms").CombinedOutput()
		if err != nil {
			buildErr = &buildError{err: err, out: string(out)}
		}
	})
	if buildErr != nil {
		t.Fatalf("building local-kms (the tool go.mod pins): %v", buildErr)
	}
	return binPath
}

type buildError struct {
	err error
	out string
}

func (e *buildError) Error() string { return e.err.Error() + ": " + e.out }

// Region and Account are local-kms's: its ARNs name them.
const (
	Region  = "eu-west-2"
	Account = "111122223333"
)

// Server is a running local-kms.
type Server struct {
	Endpoint string
	kill     func()
}

// Kill stops it at once (a KMS outage); the test's cleanup is a no-op
// after it.
func (s *Server) Kill() { s.kill() }

// Start runs local-kms on a free loopback port for the test and returns
// its endpoint.
func Start(t testing.TB) string { return StartServer(t).Endpoint }

// StartServer is Start returning the server, which a test may kill.
func StartServer(t testing.TB) *Server {
	t.Helper()
	bin := binary(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	cmd := exec.Command(bin)
	cmd.Env = append(os.Environ(), "PORT="+strconv.Itoa(port), "KMS_DATA_PATH="+t.TempDir(),
		"KMS_REGION="+Region, "KMS_ACCOUNT_ID="+Account)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	var once sync.Once
	kill := func() {
		once.Do(func() {
			cmd.Process.Kill()
			<-exited
		})
	}
	t.Cleanup(kill)
	endpoint := "http://127.0.0.1:" + strconv.Itoa(port)
	deadline := time.Now().Add(20 * time.Second)
	client := &http.Client{Timeout: time.Second}
	for {
		select {
		case err := <-exited:
			t.Fatalf("local-kms exited early: %v", err)
		default:
		}
		resp, err := client.Get(endpoint + "/")
		if err == nil {
			resp.Body.Close()
			return &Server{Endpoint: endpoint, kill: kill}
		}
		if time.Now().After(deadline) {
			t.Fatalf("local-kms not ready on %s: %v", endpoint, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
