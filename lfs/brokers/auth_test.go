package brokers

import (
	"context"
	"crypto/tls"
	"errors"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/s3seal/s3seal/internal/kafkatest"
)

func authCluster(t *testing.T, opts ...kfake.Opt) *kfake.Cluster {
	t.Helper()
	c, err := kfake.NewCluster(append([]kfake.Opt{kfake.NumBrokers(1), kfake.SeedTopics(1, testTopic)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c
}

func mechanism(t *testing.T, name, user, pass string) Config {
	t.Helper()
	m, err := SASL(name, user, pass)
	if err != nil {
		t.Fatal(err)
	}
	return Config{SASL: m}
}

// produceOnce connects and produces one record; the error of either.
func produceOnce(d *Discovery) error {
	s, err := d.Connect(context.Background())
	if err != nil {
		return err
	}
	defer s.Close()
	_, err = s.Produce(context.Background(), testTopic, 0, nil, []byte("x"), nil)
	return err
}

// Each SASL mechanism authenticates against a broker that requires it; a
// wrong password is no broker (nothing written), with the SASL failure
// in the error.
func TestSASLMechanisms(t *testing.T) {
	for _, mech := range SASLMechanisms {
		t.Run(mech, func(t *testing.T) {
			c := authCluster(t, kfake.EnableSASL(), kfake.Superuser(mech, "lfs", "s3cret"))
			cfg := mechanism(t, strings.ToLower(mech), "lfs", "s3cret")
			cfg.Static = c.ListenAddrs()
			if err := produceOnce(newDiscovery(t, cfg)); err != nil {
				t.Fatalf("produce with %s: %v", mech, err)
			}
			bad := mechanism(t, mech, "lfs", "wrong")
			bad.Static = c.ListenAddrs()
			err := produceOnce(newDiscovery(t, bad))
			if !errors.Is(err, ErrNoBroker) || !strings.Contains(err.Error(), "SASL "+mech) {
				t.Fatalf("wrong password: %v", err)
			}
		})
	}
	// Without SASL configured, a SASL broker refuses the produce.
	c := authCluster(t, kfake.EnableSASL(), kfake.Superuser("PLAIN", "lfs", "s3cret"))
	if err := produceOnce(newDiscovery(t, Config{Static: c.ListenAddrs()})); err == nil {
		t.Fatal("produce without SASL accepted")
	}
	if _, err := SASL("GSSAPI", "u", "p"); err == nil || !strings.Contains(err.Error(), "GSSAPI") {
		t.Fatalf("unknown mechanism: %v", err)
	}
}

// A SASL user that is not a superuser, allowed the test topic only: its
// produce there works; another topic is TOPIC_AUTHORIZATION_FAILED,
// nothing sent.
func TestSASLUserWithACL(t *testing.T) {
	c := authCluster(t, kfake.SeedTopics(1, testTopic, "secret-topic"), kfake.EnableSASL(), kfake.EnableACLs(), kfake.Superuser("PLAIN", "admin", "admin"),
		kfake.User("SCRAM-SHA-512", "writer", "pw",
			kfake.ACL{Allow: true, Resource: kmsg.ACLResourceTypeTopic, Name: testTopic, Pattern: kmsg.ACLResourcePatternTypeLiteral, Operation: kmsg.ACLOperationAll}))
	cfg := mechanism(t, "SCRAM-SHA-512", "writer", "pw")
	cfg.Static = c.ListenAddrs()
	d := newDiscovery(t, cfg)
	if err := produceOnce(d); err != nil {
		t.Fatalf("produce as writer: %v", err)
	}
	s := connect(t, d)
	_, err := s.Produce(context.Background(), "secret-topic", 0, nil, []byte("x"), nil)
	if !errors.Is(err, kerr.TopicAuthorizationFailed) || errors.Is(err, ErrSentThenFailed) {
		t.Fatalf("produce to a topic the user may not write: %v", err)
	}
}

// TLS toward the broker: the CA verifies it, a client certificate is sent
// when the broker requires one, the server name can be set; a broker whose
// certificate the CA did not sign is no broker.
func TestTLSToBroker(t *testing.T) {
	f := kafkatest.NewTLS(t)
	c := authCluster(t, kfake.TLS(f.ServerConfig(false)))
	if err := produceOnce(newDiscovery(t, Config{Static: c.ListenAddrs(), TLS: &tls.Config{RootCAs: f.Pool}})); err != nil {
		t.Fatalf("produce over TLS: %v", err)
	}
	named := &tls.Config{RootCAs: f.Pool, ServerName: "kafka.test"}
	if err := produceOnce(newDiscovery(t, Config{Static: c.ListenAddrs(), TLS: named})); err != nil {
		t.Fatalf("produce over TLS with a server name: %v", err)
	}
	wrongName := &tls.Config{RootCAs: f.Pool, ServerName: "other.test"}
	if err := produceOnce(newDiscovery(t, Config{Static: c.ListenAddrs(), TLS: wrongName})); !errors.Is(err, ErrNoBroker) || !strings.Contains(err.Error(), "TLS") {
		t.Fatalf("wrong server name: %v", err)
	}
	other := kafkatest.NewTLS(t)
	if err := produceOnce(newDiscovery(t, Config{Static: c.ListenAddrs(), TLS: &tls.Config{RootCAs: other.Pool}})); !errors.Is(err, ErrNoBroker) {
		t.Fatalf("unknown CA: %v", err)
	}

	mtls := authCluster(t, kfake.TLS(f.ServerConfig(true)), kfake.EnableSASL(), kfake.Superuser("SCRAM-SHA-256", "lfs", "pw"))
	cert, err := tls.LoadX509KeyPair(f.ClientCertFile, f.ClientKeyFile)
	if err != nil {
		t.Fatal(err)
	}
	cfg := mechanism(t, "SCRAM-SHA-256", "lfs", "pw")
	cfg.Static, cfg.TLS = mtls.ListenAddrs(), &tls.Config{RootCAs: f.Pool, Certificates: []tls.Certificate{cert}}
	if err := produceOnce(newDiscovery(t, cfg)); err != nil {
		t.Fatalf("produce over mutual TLS with SASL: %v", err)
	}
	cfg.TLS = &tls.Config{RootCAs: f.Pool}
	if err := produceOnce(newDiscovery(t, cfg)); !errors.Is(err, ErrNoBroker) {
		t.Fatalf("no client certificate: %v", err)
	}
}
