package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"os"
	"regexp"
	"strings"
	"testing"
)

// TestReadmeDockerRunStarts: the image's environment (the Dockerfile's
// ENV, S3SEAL_LISTEN=0.0.0.0:7070) with the variables of the README's
// docker run line starts serving, where the image's environment alone
// exits 2. No container engine: serve runs here with the same settings.
func TestReadmeDockerRunStarts(t *testing.T) {
	dockerfile, err := os.ReadFile("../../Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	image := map[string]string{}
	for _, block := range regexp.MustCompile(`(?m)^ENV ((?:.*\\\n)*.*)$`).FindAllSubmatch(dockerfile, -1) {
		for _, kv := range strings.Fields(strings.ReplaceAll(string(block[1]), "\\", " ")) {
			if k, v, _ := strings.Cut(kv, "="); strings.HasPrefix(k, "S3SEAL_") {
				image[k] = v
			}
		}
	}
	if image["S3SEAL_LISTEN"] != "0.0.0.0:7070" {
		t.Fatalf("Dockerfile: S3SEAL_LISTEN=%q", image["S3SEAL_LISTEN"])
	}
	image["S3SEAL_LISTEN"] = "0.0.0.0:0" // not loopback, as in the image; any free port
	image["S3SEAL_DATA_DIR"] = t.TempDir()

	run := regexp.MustCompile(`(?m)^    docker run -p 7070:7070 (?:.*\\\n)*.*$`).Find(readme)
	if run == nil {
		t.Fatal("README: no docker run -p 7070:7070 line")
	}
	given := map[string]string{}
	for k, v := range image {
		given[k] = v
	}
	key := base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{3}, 32))
	for _, m := range regexp.MustCompile(`-e (S3SEAL_\w+)=("[^"]*"|\S+)`).FindAllSubmatch(run, -1) {
		v := strings.Trim(string(m[2]), `"`)
		if v == "$(cat master.key)" {
			v = key
		}
		given[string(m[1])] = v
	}

	start := func(e map[string]string) error {
		c, err := parseConfig(nil, env(e))
		if err != nil {
			return err
		}
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		c.ShutdownDelay = 0
		var log bytes.Buffer
		return serve(ctx, c, &log)
	}
	if err := start(image); err == nil {
		t.Error("the image's environment alone started s3seal; the README says it exits 2")
	}
	if err := start(given); err != nil {
		t.Errorf("the README's docker run (%s): %v", run, err)
	}
}
