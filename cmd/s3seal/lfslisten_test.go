package main

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
	"time"
)

// The LFS API hands out every blob decrypted and produces to any topic:
// on a listener reachable beyond this host it needs an API key, or an
// explicit --lfs-allow-unauthenticated (logged at WARN); on loopback it
// runs without one, as the development default does.
func TestLFSListenerOffLoopbackNeedsAnAPIKey(t *testing.T) {
	for _, listen := range []string{"0.0.0.0:0", ":0"} {
		c, err := parseConfig([]string{"--listen", "127.0.0.1:0", "--data-dir", t.TempDir(), "--shutdown-delay", "0s",
			"--lfs", "--lfs-dev-kafka", "127.0.0.1:0", "--lfs-listen", listen}, env(nil))
		if err != nil {
			t.Fatal(err)
		}
		// Bounded: a serve that starts instead of refusing ends here.
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		var log bytes.Buffer
		err = serve(ctx, c, &log)
		cancel()
		var ue *usageError
		if !errors.As(err, &ue) || !strings.Contains(err.Error(), "--lfs-listen "+listen+" is reachable beyond this host") ||
			!strings.Contains(err.Error(), "--lfs-api-key") || !strings.Contains(err.Error(), "--lfs-allow-unauthenticated") {
			t.Errorf("--lfs-listen %s without a key: %v, want a usage error naming the API key", listen, err)
		}
	}
	// With a key, or by decision, it serves; on loopback it needs neither.
	for _, c := range []struct {
		args []string
		warn bool
	}{
		{[]string{"--lfs-listen", "0.0.0.0:0", "--lfs-api-key", "k-0123456789"}, false},
		{[]string{"--lfs-listen", "127.0.0.1:0"}, false},
		{[]string{"--lfs-listen", "0.0.0.0:0", "--lfs-allow-unauthenticated"}, true},
	} {
		_, _, log := startServeWithLog(t, append([]string{"--lfs", "--lfs-dev-kafka", "127.0.0.1:0"}, c.args...)...)
		for deadline := time.Now().Add(20 * time.Second); !strings.Contains(log.String(), "LFS API listening on"); time.Sleep(10 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("%v: the LFS API did not start:\n%s", c.args, log.String())
			}
		}
		if warned := strings.Contains(log.String(), "LFS API without an API key on a non-loopback address"); warned != c.warn {
			t.Errorf("%v: warned %v, want %v:\n%s", c.args, warned, c.warn, log.String())
		}
	}
}
