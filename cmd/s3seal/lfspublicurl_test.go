package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
)

func lfsCall(t *testing.T, method, u, topic, body string) (int, []byte) {
	t.Helper()
	req, _ := http.NewRequest(method, u, strings.NewReader(body))
	if topic != "" {
		req.Header.Set("X-Kafka-Topic", topic)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, b
}

// Behind an ingress, presigned downloads name --lfs-public-url; the URL
// works when the ingress passes the request on with its Host.
func TestLFSPublicURL(t *testing.T) {
	const public = "https://blobs.example.test:8443"
	s3Addr, _, log := startServeWithLog(t, "--lfs", "--lfs-listen", "127.0.0.1:0", "--lfs-dev-kafka", "127.0.0.1:0",
		"--lfs-public-url", public+"/")
	lfsAddr := waitLFS(t, log)
	code, body := lfsCall(t, "POST", "http://"+lfsAddr+"/lfs/produce", "events", "behind an ingress")
	if code != 200 {
		t.Fatalf("produce: %d %s", code, body)
	}
	var env struct{ Key string }
	if err := json.Unmarshal(body, &env); err != nil {
		t.Fatal(err)
	}
	code, body = lfsCall(t, "POST", "http://"+lfsAddr+"/lfs/download", "",
		fmt.Sprintf(`{"bucket":"lfs","key":%q,"mode":"presign"}`, env.Key))
	var pre struct{ URL string }
	if err := json.Unmarshal(body, &pre); code != 200 || err != nil {
		t.Fatalf("presign: %d %s", code, body)
	}
	if !strings.HasPrefix(pre.URL, public+"/lfs/") {
		t.Fatalf("presigned URL %s does not name %s", pre.URL, public)
	}
	// The ingress: same path and query, the public Host, to the S3 listener.
	u, _ := url.Parse(pre.URL)
	req, _ := http.NewRequest("GET", "http://"+s3Addr+u.RequestURI(), nil)
	req.Host = u.Host
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || string(got) != "behind an ingress" {
		t.Fatalf("presigned GET through the ingress: %d %s", resp.StatusCode, got)
	}
}

func TestLFSPublicURLRefused(t *testing.T) {
	for _, bad := range []string{"blobs.example.com", "ftp://blobs.example.com", "https://", "https://h/prefix", "https://h/?a=b", "https://u@h"} {
		_, err := parseConfig([]string{"--lfs", "--lfs-public-url", bad}, env(nil))
		if err == nil || !strings.Contains(err.Error(), "--lfs-public-url") || !strings.Contains(err.Error(), bad) {
			t.Errorf("--lfs-public-url %s: %v", bad, err)
		}
	}
	c, err := parseConfig([]string{"--lfs"}, env(map[string]string{"S3SEAL_LFS_PUBLIC_URL": "http://lb.internal"}))
	if err != nil || c.LFS.presignEndpoint("http://127.0.0.1:7070") != "http://lb.internal" {
		t.Fatalf("from the environment: %v", err)
	}
}

// A port that is no TCP port makes every presigned URL unusable: refused
// at start. A public URL with a password in it is refused without
// echoing the password.
func TestLFSPublicURLPortAndPassword(t *testing.T) {
	for _, bad := range []string{"https://h:99999", "https://h:0", "https://h:", "http://h:http"} {
		if _, err := parseConfig([]string{"--lfs", "--lfs-public-url", bad}, env(nil)); err == nil || !strings.Contains(err.Error(), "--lfs-public-url") {
			t.Errorf("--lfs-public-url %s: %v", bad, err)
		}
	}
	_, err := parseConfig([]string{"--lfs", "--lfs-public-url", "https://ops:pa55word@h"}, env(nil))
	if err == nil || strings.Contains(err.Error(), "pa55word") {
		t.Fatalf("userinfo: %v", err)
	}
}
