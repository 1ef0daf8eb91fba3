package backend

import (
	"context"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"testing"
	"time"
)

// startMoto runs moto_server on a free loopback port for the test. It skips
// when moto_server is not installed, unless CI=true, where that fails.
func startMoto(t *testing.T) string {
	t.Helper()
	bin, err := exec.LookPath("moto_server")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("moto_server not found (required under CI=true): %v", err)
		}
		t.Skip("moto_server not installed")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	must(t, err)
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()

	cmd := exec.Command(bin, "-H", "127.0.0.1", "-p", strconv.Itoa(port))
	cmd.Stdout, cmd.Stderr = nil, nil
	must(t, cmd.Start())
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		cmd.Process.Kill()
		<-exited
	})

	endpoint := "http://127.0.0.1:" + strconv.Itoa(port)
	deadline := time.Now().Add(30 * time.Second)
	client := &http.Client{Timeout: time.Second}
	for {
		select {
		case err := <-exited:
			t.Fatalf("moto_server exited early: %v", err)
		default:
		}
		resp, err := client.Get(endpoint + "/")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return endpoint
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("moto_server not ready on %s: %v", endpoint, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func TestMotoContract(t *testing.T) {
	endpoint := startMoto(t)
	st, err := NewS3(S3Config{Endpoint: endpoint, AccessKey: "test", SecretKey: "test", PathStyle: true})
	must(t, err)
	testStoreWith(t, st, quirks{noMD5Check: true, laxMultipart: true, noCopySourceIfMatch: true})

	// V2 with FetchOwner carries the owner (moto, like AWS, sends it).
	ctx := context.Background()
	must(t, st.CreateBucket(ctx, "owner-test"))
	put(ctx, t, st, "owner-test", "k", []byte("x"), nil, Headers{})
	page, err := st.ListObjects(ctx, ListInput{Bucket: "owner-test", V2: true, FetchOwner: true})
	must(t, err)
	if len(page.Entries) != 1 || page.Entries[0].OwnerID == "" {
		t.Errorf("FetchOwner listing = %+v, want an owner", page.Entries)
	}
}
