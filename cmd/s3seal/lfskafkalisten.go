package main

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"time"

	"github.com/s3seal/s3seal/crypto"
	"github.com/s3seal/s3seal/lfs"
	"github.com/s3seal/s3seal/lfs/brokers"
	"github.com/s3seal/s3seal/lfs/kafkaproxy"
	"github.com/s3seal/s3seal/s3api"
)

// kafkaSweepEvery is how often the listener's orphaned blobs are looked for.
const kafkaSweepEvery = 10 * time.Minute

// kafkaListener is the running Kafka listener (--lfs-kafka-listen).
type kafkaListener struct {
	proxy *kafkaproxy.Proxy
	fwd   *brokers.Forwarder
	ln    net.Listener
	stop  context.CancelFunc
}

// startKafkaListener serves the Kafka protocol on --lfs-kafka-listen.
// Clients authenticate (--lfs-kafka-listen-sasl) as an s3seal credential
// and use the topics its kafka_topics grant; without SASL the listener
// must be on loopback, or opened on purpose with
// --lfs-allow-unauthenticated, as the HTTP API is.
func startKafkaListener(cfg *config, h *lfs.Handler, d *brokers.Discovery, creds s3api.Credentials, kr *crypto.Keyring,
	log *slog.Logger) (*kafkaListener, error) {
	l := cfg.LFS
	k := &kafkaListener{fwd: d.Forwarder()}
	pc := kafkaproxy.Config{Blobs: h, Brokers: k.fwd, MaxRequest: l.KafkaMaxRequest, MaxInFlight: l.KafkaMaxInFlight, Logger: log}
	if l.KafkaListenTLSCert != "" {
		cert, err := tls.LoadX509KeyPair(l.KafkaListenTLSCert, l.KafkaListenTLSKey)
		if err != nil {
			return nil, usagef("--lfs-kafka-listen-tls-cert-file: %v", err)
		}
		pc.TLS = &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	}
	if mechs := splitList(l.KafkaListenSASL); len(mechs) > 0 {
		keyID, _ := kr.DerivationKey()
		salt, _ := kr.DeriveKey(keyID, "lfs kafka scram salt")
		pc.SASL = &kafkaproxy.SASLConfig{Mechanisms: mechs, Salt: salt, Password: func(user string) (string, bool) {
			c, ok := creds[user]
			if !ok || user == lfsPresignAccessKey {
				return "", false
			}
			return c.SecretKey, true
		}}
		pc.MayUse = func(principal, topic string) bool {
			c, ok := creds[principal]
			return ok && c.MayUseTopic(topic)
		}
		if pc.TLS == nil && containsPlain(mechs) {
			log.Warn("Kafka listener: SASL PLAIN without TLS lets anyone on the path read the secret keys clients send; add --lfs-kafka-listen-tls-cert-file")
		}
	}
	var err error
	if k.ln, err = net.Listen("tcp", l.KafkaListen); err != nil {
		return nil, usagef("--lfs-kafka-listen %s: %v", l.KafkaListen, err)
	}
	fail := func(err error) (*kafkaListener, error) { k.ln.Close(); return nil, err }
	if pc.SASL == nil && !isLoopback(k.ln.Addr()) {
		if !l.AllowUnauthenticated {
			return fail(usagef("--lfs-kafka-listen %s is reachable beyond this host and clients do not authenticate: anyone who reaches it could produce to and read every topic; give --lfs-kafka-listen-sasl, or --lfs-allow-unauthenticated where the network itself authenticates every client", l.KafkaListen))
		}
		log.Warn("Kafka listener without SASL on a non-loopback address (--lfs-allow-unauthenticated): whoever reaches it can produce to and read every topic", "listen", k.ln.Addr().String())
	}
	pc.Advertise = l.KafkaAdvertise
	if pc.Advertise == "" {
		a := k.ln.Addr().(*net.TCPAddr)
		if a.IP.IsUnspecified() {
			return fail(usagef("--lfs-kafka-listen %s listens on every interface: give --lfs-kafka-advertise, the host:port clients reach it at", l.KafkaListen))
		}
		pc.Advertise = a.String()
	}
	if k.proxy, err = kafkaproxy.New(pc); err != nil {
		return fail(usagef("%v", err))
	}
	go func() {
		if err := k.proxy.Serve(k.ln); err != nil && !errors.Is(err, net.ErrClosed) {
			log.Error("Kafka listener stopped", "err", err)
		}
	}()
	// Every replica sweeps: two deleting the same orphan is harmless.
	sctx, stop := context.WithCancel(context.Background())
	k.stop = stop
	go k.proxy.RunSweeper(sctx, kafkaSweepEvery, kafkaproxy.DefaultSweepGrace)
	scheme := "kafka"
	if pc.TLS != nil {
		scheme = "kafka+tls"
	}
	log.Info(fmt.Sprintf("LFS Kafka listener on %s://%s", scheme, k.ln.Addr()), "advertised", pc.Advertise, "sasl", l.KafkaListenSASL)
	return k, nil
}

// check is the listener's part of /readyz: a broker answers.
func (k *kafkaListener) check(ctx context.Context) error {
	if err := k.fwd.Check(ctx); err != nil {
		return fmt.Errorf("kafka listener: no broker answers: %w", err)
	}
	return nil
}

func (k *kafkaListener) close() {
	if k == nil {
		return
	}
	k.stop()
	_ = k.proxy.Close()
	k.fwd.Close()
}

func containsPlain(mechs []string) bool {
	for _, m := range mechs {
		if m == "PLAIN" {
			return true
		}
	}
	return false
}
