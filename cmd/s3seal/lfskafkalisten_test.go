package main

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/s3seal/s3seal/crypto"
)

// The Kafka listener's settings are checked before anything starts, each
// refusal naming the flag.
func TestKafkaListenerSettingsRefused(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--lfs-kafka-listen", "127.0.0.1:0"}, "--lfs-kafka-listen needs --lfs"},
		{[]string{"--lfs", "--lfs-kafka-listen", "127.0.0.1:0", "--lfs-kafka-max-request", "1000"}, "--lfs-kafka-max-request must be at least 1 MiB"},
		{[]string{"--lfs", "--lfs-kafka-listen", "127.0.0.1:0", "--lfs-kafka-max-inflight", "0"}, "--lfs-kafka-max-inflight must be > 0"},
		{[]string{"--lfs", "--lfs-kafka-listen", "127.0.0.1:0", "--lfs-kafka-listen-tls-cert-file", "c.pem"}, "go together"},
		{[]string{"--lfs", "--lfs-kafka-listen", "127.0.0.1:0", "--lfs-kafka-listen-sasl", "GSSAPI"}, "PLAIN, SCRAM-SHA-256 and SCRAM-SHA-512"},
	} {
		_, err := parseConfig(c.args, env(nil))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: %v, want %q", c.args, err, c.want)
		}
	}
	c, err := parseConfig([]string{"--lfs", "--lfs-kafka-listen", "127.0.0.1:0"}, env(map[string]string{
		"S3SEAL_LFS_KAFKA_MAX_REQUEST": "2097152", "S3SEAL_LFS_KAFKA_LISTEN_SASL": "SCRAM-SHA-512"}))
	if err != nil || c.LFS.KafkaMaxRequest != 2<<20 || c.LFS.KafkaListenSASL != "SCRAM-SHA-512" {
		t.Fatalf("%+v %v", c.LFS, err)
	}
}

// Clients of a listener reachable beyond this host must authenticate, or
// the operator says the network does (--lfs-allow-unauthenticated); one
// on every interface needs the address clients reach it at.
func TestKafkaListenerOffLoopbackNeedsSASL(t *testing.T) {
	run := func(args ...string) error {
		c, err := parseConfig(append([]string{"--listen", "127.0.0.1:0", "--data-dir", t.TempDir(), "--shutdown-delay", "0s",
			"--lfs", "--lfs-dev-kafka", "127.0.0.1:0", "--lfs-listen", "127.0.0.1:0"}, args...), env(nil))
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		var log bytes.Buffer
		return serve(ctx, c, &log)
	}
	var ue *usageError
	err := run("--lfs-kafka-listen", "0.0.0.0:0", "--lfs-kafka-advertise", "kafka.example:9092")
	if !errors.As(err, &ue) || !strings.Contains(err.Error(), "--lfs-kafka-listen-sasl") || !strings.Contains(err.Error(), "--lfs-allow-unauthenticated") {
		t.Errorf("a non-loopback listener without SASL: %v", err)
	}
	err = run("--lfs-kafka-listen", "0.0.0.0:0", "--lfs-kafka-listen-sasl", "SCRAM-SHA-256")
	if !errors.As(err, &ue) || !strings.Contains(err.Error(), "--lfs-kafka-advertise") {
		t.Errorf("a listener on every interface without an advertised address: %v", err)
	}
	_, _, log := startServeWithLog(t, "--lfs", "--lfs-dev-kafka", "127.0.0.1:0", "--lfs-listen", "127.0.0.1:0",
		"--lfs-kafka-listen", "0.0.0.0:0", "--lfs-kafka-advertise", "kafka.example:9092", "--lfs-kafka-listen-sasl", "SCRAM-SHA-256")
	for deadline := time.Now().Add(20 * time.Second); !strings.Contains(log.String(), "LFS Kafka listener on"); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the listener did not start:\n%s", log.String())
		}
	}
}

// With the Kafka listener on, /readyz follows its brokers: a replica whose
// Kafka clients would find no broker says so, naming only "kafka".
func TestReadinessFollowsTheKafkaListener(t *testing.T) {
	key, _ := crypto.GenerateKey()
	kr, err := crypto.NewKeyring("k", map[string][]byte{"k": key})
	if err != nil {
		t.Fatal(err)
	}
	r := newReadiness(&flakyLister{}, kr, nil)
	r.ttl = 0
	var down atomic.Bool
	r.kafka = func(context.Context) error {
		if down.Load() {
			return errors.New("kafka listener: no broker answers: dial tcp 10.0.0.7:9092: connection refused")
		}
		return nil
	}
	if err := r.check(context.Background()); err != nil {
		t.Fatal(err)
	}
	down.Store(true)
	err = r.check(context.Background())
	if !errors.Is(err, errNotReadyKafka) || strings.Contains(err.Error(), "10.0.0.7") {
		t.Fatalf("%v, want the kafka reason without the broker's address", err)
	}
}
