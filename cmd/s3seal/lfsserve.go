package main

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/twmb/franz-go/pkg/kfake"

	"github.com/s3seal/s3seal/crypto"
	"github.com/s3seal/s3seal/lfs"
	"github.com/s3seal/s3seal/lfs/brokers"
	"github.com/s3seal/s3seal/s3api"
	"github.com/s3seal/s3seal/sealstore"
)

// lfsPresignAccessKey is the S3 credential presigned LFS download URLs are
// signed with. Its secret is derived from the primary master key, so every
// s3seal with the same keyring accepts URLs any of them signed; it may
// only read the LFS bucket.
const lfsPresignAccessKey = "s3seal-lfs-presign"

// lfsPresignCredential adds the presign credential to creds and returns
// it. It owns the LFS bucket, so no credential of the operator's may have
// its access key.
func lfsPresignCredential(kr *crypto.Keyring, bucket string, creds s3api.Credentials) (s3api.Credential, error) {
	if _, ok := creds[lfsPresignAccessKey]; ok {
		return s3api.Credential{}, usagef("access key %q is s3seal's own with --lfs (it signs presigned LFS downloads): give the credential another access key", lfsPresignAccessKey)
	}
	id, ok := kr.DerivationKey()
	if !ok {
		return s3api.Credential{}, usagef("--lfs needs a local master key beside the KMS key (its session ids and presigned downloads are sealed with keys derived from it): give --keys-file with a local key and the KMS key in its \"kms\" entries")
	}
	key, _ := kr.DeriveKey(id, "lfs presign credential")
	c := s3api.Credential{AccessKey: lfsPresignAccessKey, SecretKey: hex.EncodeToString(key), Read: []string{bucket}}
	creds[c.AccessKey] = c
	if err := creds.Check(); err != nil {
		return s3api.Credential{}, usagef("credentials with --lfs: %v", err)
	}
	return c, nil
}

// lfsModule is the running LFS API: its listener and what it started.
type lfsModule struct {
	srv       *http.Server
	ln        net.Listener
	discovery *brokers.Discovery
	dev       *kfake.Cluster
	stop      context.CancelFunc
	metrics   *lfs.Metrics
	kafka     *kafkaListener // nil without --lfs-kafka-listen
}

// startLFS starts the LFS HTTP API on its own listener. Without
// --lfs-brokers or --lfs-etcd-endpoints it runs an in-process Kafka
// (franz-go's kfake) on --lfs-dev-kafka, on loopback only, for trying it
// out.
func startLFS(ctx context.Context, cfg *config, store *sealstore.Store, kr *crypto.Keyring, creds s3api.Credentials, presign s3api.Credential,
	s3Endpoint string, log *slog.Logger) (*lfsModule, error) {
	l := cfg.LFS
	m := &lfsModule{}
	auth, err := cfg.lfsKafkaAuth()
	if err != nil {
		return nil, err
	}
	bcfg := brokers.Config{Static: splitList(l.Brokers), EtcdEndpoints: splitList(l.EtcdEndpoints), CacheTTL: l.CacheTTL, Logger: log,
		TLS: auth.tls, SASL: auth.sasl}
	if auth.sasl != nil && auth.tls == nil && auth.sasl.Name() == "PLAIN" {
		log.Warn("LFS: SASL PLAIN without TLS sends the Kafka password in clear; add --lfs-kafka-tls")
	}
	if len(bcfg.Static) == 0 && len(bcfg.EtcdEndpoints) == 0 {
		dev, addr, err := startDevKafka(l.DevKafka)
		if err != nil {
			return nil, err
		}
		m.dev = dev
		bcfg.Static = []string{addr}
		log.Warn("LFS: no --lfs-brokers or --lfs-etcd-endpoints: running an in-process Kafka for development (records are kept in memory only)",
			"kafka", addr)
	}
	fail := func(err error) (*lfsModule, error) { m.close(); return nil, err }
	if m.discovery, err = brokers.New(ctx, bcfg); err != nil {
		return fail(fmt.Errorf("LFS brokers: %w", err))
	}
	// The bucket is LFS's alone: no account reaches it through the S3
	// API but LFS's own presign credential (s3api.ClaimServiceBucket).
	if err := s3api.ClaimServiceBucket(ctx, store, l.Bucket, "LFS API", presign); err != nil {
		return fail(fmt.Errorf("LFS bucket (--lfs-bucket) %s: %w", l.Bucket, err))
	}
	h, err := lfs.New(lfs.Config{Store: store, Producer: lfs.FromDiscovery(m.discovery), Keyring: kr,
		Bucket: l.Bucket, Namespace: l.Namespace, MaxBlobSize: l.MaxBlobSize, APIKey: l.APIKey, Logger: log,
		MaxInFlight: cfg.MaxRequests,
		Presign:     &lfs.PresignConfig{Endpoint: l.presignEndpoint(s3Endpoint), AccessKey: presign.AccessKey, SecretKey: presign.SecretKey}})
	if err != nil {
		return fail(err)
	}
	m.metrics = h.Metrics()
	if m.ln, err = net.Listen("tcp", l.Listen); err != nil {
		return fail(usagef("--lfs-listen %s: %v", l.Listen, err))
	}
	if l.APIKey == "" && !isLoopback(m.ln.Addr()) {
		// The API hands out every blob decrypted, presigned URLs and
		// produces to any topic: open on a network only by decision.
		if !l.AllowUnauthenticated {
			m.ln.Close()
			return fail(usagef("--lfs-listen %s is reachable beyond this host and no --lfs-api-key (S3SEAL_LFS_API_KEY) is given: anyone who reaches it could download every blob decrypted and produce to any topic; give an API key, or --lfs-allow-unauthenticated where the network itself authenticates every client", l.Listen))
		}
		log.Warn("LFS API without an API key on a non-loopback address (--lfs-allow-unauthenticated): whoever reaches it can read every blob decrypted and produce to any topic", "listen", m.ln.Addr().String())
	}
	sctx, stop := context.WithCancel(context.WithoutCancel(ctx))
	m.stop = stop
	go h.RunSweeper(sctx, time.Minute)
	// No read timeout: blobs of GBs stream as long as they move (the
	// storage path bounds memory); a stalled client holds one goroutine.
	mux := http.NewServeMux()
	mux.Handle("/lfs/", h)
	// The module's metrics name every topic produced to: behind the API
	// key when one is set (serve leaves them off the S3 listener's
	// unauthenticated /metrics then). /healthz says nothing and needs
	// nothing, for probes.
	mux.Handle("GET /metrics", h.RequireKey(promhttp.HandlerFor(h.Metrics().Registry(), promhttp.HandlerOpts{})))
	mux.HandleFunc("GET /healthz", healthz)
	// The header is bounded as the S3 API's is (newAPIServer), before
	// any API key is looked at.
	m.srv = &http.Server{Handler: mux, ReadHeaderTimeout: cfg.HeaderTimeout, IdleTimeout: 2 * time.Minute,
		MaxHeaderBytes: maxHeaderBytes, ErrorLog: slog.NewLogLogger(log.Handler(), slog.LevelWarn)}
	go func() {
		if err := m.srv.Serve(m.ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Error("LFS API stopped", "err", err)
		}
	}()
	log.Info(fmt.Sprintf("LFS API listening on http://%s", m.ln.Addr()), "bucket", l.Bucket, "namespace", l.Namespace, "kafka", auth.String())
	if l.KafkaListen != "" {
		if m.kafka, err = startKafkaListener(cfg, h, m.discovery, creds, kr, log); err != nil {
			return fail(err)
		}
	}
	return m, nil
}

// startDevKafka runs a one-broker kfake cluster on addr, which must be a
// loopback address (kfake listens on 127.0.0.1).
func startDevKafka(addr string) (*kfake.Cluster, string, error) {
	host, portStr, err := net.SplitHostPort(addr)
	port, perr := strconv.Atoi(portStr)
	if err != nil || perr != nil || port < 0 || port > 65535 {
		return nil, "", usagef("--lfs-dev-kafka %q: want host:port", addr)
	}
	if ip := net.ParseIP(host); host != "localhost" && (ip == nil || !ip.IsLoopback()) {
		return nil, "", usagef("--lfs-dev-kafka %q: the development Kafka listens on loopback only", addr)
	}
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.Ports(port), kfake.AllowAutoTopicCreation(), kfake.DefaultNumPartitions(1))
	if err != nil {
		return nil, "", fmt.Errorf("development Kafka on %s: %w", addr, err)
	}
	return c, c.ListenAddrs()[0], nil
}

// close stops the API (waiting up to 30 s for requests), the sweeper,
// discovery and the development Kafka.
func (m *lfsModule) close() {
	if m == nil {
		return
	}
	m.kafka.close()
	if m.srv != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		_ = m.srv.Shutdown(ctx)
		cancel()
	}
	if m.stop != nil {
		m.stop()
	}
	if m.discovery != nil {
		_ = m.discovery.Close()
	}
	if m.dev != nil {
		m.dev.Close()
	}
}
