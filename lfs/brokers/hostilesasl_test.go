package brokers

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// A broker that misbehaves during SASL (garbage challenges, a claimed
// success without the server's proof, a stall, a dropped connection, a
// mechanism it does not offer) is no broker: the dial fails within
// DialTimeout, and neither the error nor the log holds the password.
func TestSASLHostileBroker(t *testing.T) {
	const pass = "hunter2-very-secret"
	answer := func(bytes []byte) func(kmsg.Request) (kmsg.Response, error, bool) {
		return func(req kmsg.Request) (kmsg.Response, error, bool) {
			resp := req.ResponseKind().(*kmsg.SASLAuthenticateResponse)
			resp.SASLAuthBytes = bytes
			return resp, nil, true
		}
	}
	for _, tc := range []struct {
		name, mech string
		setup      func(c *kfake.Cluster)
	}{
		{"garbage first challenge", "SCRAM-SHA-256", func(c *kfake.Cluster) {
			c.ControlKey(kmsg.SASLAuthenticate.Int16(), answer([]byte("\x00\xffnot scram")))
		}},
		{"success without proof", "SCRAM-SHA-512", func(c *kfake.Cluster) {
			n := 0
			c.ControlKey(kmsg.SASLAuthenticate.Int16(), func(req kmsg.Request) (kmsg.Response, error, bool) {
				c.KeepControl()
				if n++; n == 1 {
					return nil, nil, false // the real server-first
				}
				return answer(nil)(req) // "ok", no v=
			})
		}},
		{"stall", "PLAIN", func(c *kfake.Cluster) {
			c.ControlKey(kmsg.SASLAuthenticate.Int16(), func(kmsg.Request) (kmsg.Response, error, bool) {
				c.SleepControl(func() { time.Sleep(3 * time.Second) })
				return nil, errors.New("drop"), true
			})
		}},
		{"dropped", "SCRAM-SHA-256", func(c *kfake.Cluster) {
			c.ControlKey(kmsg.SASLHandshake.Int16(), func(kmsg.Request) (kmsg.Response, error, bool) {
				return nil, errors.New("drop"), true
			})
		}},
		{"mechanism not offered", "SCRAM-SHA-512", func(*kfake.Cluster) {}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := authCluster(t, kfake.EnableSASL(), kfake.Superuser("PLAIN", "lfs", pass),
				kfake.Superuser("SCRAM-SHA-256", "lfs", pass))
			if tc.mech == "SCRAM-SHA-512" && tc.name != "mechanism not offered" {
				c = authCluster(t, kfake.EnableSASL(), kfake.Superuser("SCRAM-SHA-512", "lfs", pass))
			}
			tc.setup(c)
			var logs bytes.Buffer
			cfg := mechanism(t, tc.mech, "lfs", pass)
			cfg.Static = c.ListenAddrs()
			cfg.DialTimeout = 500 * time.Millisecond
			cfg.Logger = slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
			d := newDiscovery(t, cfg)
			start := time.Now()
			_, err := d.Connect(context.Background())
			if !errors.Is(err, ErrNoBroker) {
				t.Fatalf("Connect = %v, want ErrNoBroker", err)
			}
			t.Logf("%v", err)
			if took := time.Since(start); took > 2*time.Second {
				t.Fatalf("Connect took %s", took)
			}
			if strings.Contains(err.Error(), pass) || strings.Contains(logs.String(), pass) {
				t.Fatalf("password leaked: %v / %s", err, logs.String())
			}
		})
	}
}
