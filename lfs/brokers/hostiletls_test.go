package brokers

import (
	"context"
	"crypto/tls"
	"errors"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"

	"github.com/s3seal/s3seal/internal/kafkatest"
)

// TLS toward brokers that should not be trusted or do not answer: an
// expired certificate, a listener that accepts and never speaks, a
// plaintext broker where TLS is configured and a TLS broker where it is
// not. Each is no broker (ErrNoBroker) within DialTimeout.
func TestTLSHostileBroker(t *testing.T) {
	f := kafkatest.NewTLS(t)
	tlsBroker := authCluster(t, kfake.TLS(f.ServerConfig(false)))
	plainBroker := authCluster(t)
	mute, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { mute.Close() })
	go func() {
		for {
			c, err := mute.Accept()
			if err != nil {
				return
			}
			t.Cleanup(func() { c.Close() })
		}
	}()
	later := func() time.Time { return time.Now().Add(200 * 365 * 24 * time.Hour) }
	for _, tc := range []struct {
		name string
		cfg  Config
		want string
	}{
		{"expired certificate", Config{Static: tlsBroker.ListenAddrs(), TLS: &tls.Config{RootCAs: f.Pool, Time: later}}, "expired"},
		{"mute listener", Config{Static: []string{mute.Addr().String()}, TLS: &tls.Config{RootCAs: f.Pool}}, "TLS"},
		{"mute listener, plaintext", Config{Static: []string{mute.Addr().String()}}, "api versions"},
		{"plaintext broker", Config{Static: plainBroker.ListenAddrs(), TLS: &tls.Config{RootCAs: f.Pool}}, "TLS"},
		{"TLS broker, plaintext", Config{Static: tlsBroker.ListenAddrs()}, "api versions"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.cfg.DialTimeout = 500 * time.Millisecond
			d := newDiscovery(t, tc.cfg)
			start := time.Now()
			_, err := d.Connect(context.Background())
			if !errors.Is(err, ErrNoBroker) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Connect = %v, want ErrNoBroker naming %q", err, tc.want)
			}
			if took := time.Since(start); took > 2*time.Second {
				t.Fatalf("Connect took %s", took)
			}
		})
	}
}
