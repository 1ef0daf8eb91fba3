package main

import (
	"flag"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// lfsConfig holds the settings of the LFS module (serve --lfs). Each flag
// has its S3SEAL_* variable like every other (S3SEAL_LFS_BROKERS, ...).
type lfsConfig struct {
	Enabled       bool
	Listen        string
	Bucket        string
	Namespace     string
	Brokers       string // comma-separated static list; wins over etcd
	EtcdEndpoints string // comma-separated
	CacheTTL      time.Duration
	MaxBlobSize   int64
	APIKey        string
	// AllowUnauthenticated serves the LFS API without an API key on a
	// non-loopback listener (a network that authenticates its clients
	// itself, such as a service mesh with mutual TLS).
	AllowUnauthenticated bool
	DevKafka             string // address of the in-process Kafka without brokers or etcd

	// TLS and SASL toward the brokers (lfskafkaauth.go).
	KafkaTLS                                          bool
	KafkaTLSCAFile, KafkaTLSCertFile, KafkaTLSKeyFile string
	KafkaTLSServerName                                string
	KafkaSASLMechanism, KafkaSASLUser                 string
	KafkaSASLPassword, KafkaSASLPasswordFile          string

	// The Kafka listener (lfskafkalisten.go).
	KafkaListen, KafkaAdvertise           string
	KafkaListenTLSCert, KafkaListenTLSKey string
	KafkaListenSASL                       string
	KafkaMaxRequest                       int
	KafkaMaxInFlight                      int

	// PublicURL is the S3 API's URL as LFS clients reach it (an ingress
	// or load balancer), named by presigned downloads; default the S3
	// listener's address.
	PublicURL string
}

// flags defines the LFS flags on fs, each after the group (start) it is
// listed under in docs/CONFIGURATION.md.
func (l *lfsConfig) flags(fs *flag.FlagSet, start func(group string)) {
	start("LFS: HTTP API")
	fs.BoolVar(&l.Enabled, "lfs", false, "serve the Kafka LFS HTTP API on --lfs-listen")
	fs.StringVar(&l.Listen, "lfs-listen", "127.0.0.1:7071", "address of the LFS HTTP API (a listener of its own)")
	fs.StringVar(&l.Bucket, "lfs-bucket", "lfs", "bucket holding LFS blobs (created if missing)")
	fs.StringVar(&l.Namespace, "lfs-namespace", "default", "first component of every LFS object key")
	fs.Int64Var(&l.MaxBlobSize, "lfs-max-blob-size", 5<<30, "largest LFS blob, in bytes")
	fs.StringVar(&l.APIKey, "lfs-api-key", "", "API key LFS clients must send (X-API-Key or Bearer; prefer S3SEAL_LFS_API_KEY); required on a non-loopback --lfs-listen")
	fs.BoolVar(&l.AllowUnauthenticated, "lfs-allow-unauthenticated", false, "serve the LFS API without --lfs-api-key on a non-loopback --lfs-listen (only where the network authenticates every client)")
	fs.StringVar(&l.PublicURL, "lfs-public-url", "", "URL of the S3 API as LFS clients reach it (an ingress or load balancer: scheme://host[:port]), named by presigned downloads; default the S3 listener's address")
	start("LFS: Kafka brokers")
	fs.StringVar(&l.Brokers, "lfs-brokers", "", "comma-separated Kafka brokers (wins over --lfs-etcd-endpoints)")
	fs.StringVar(&l.EtcdEndpoints, "lfs-etcd-endpoints", "", "comma-separated etcd endpoints to discover KafScale brokers from")
	fs.DurationVar(&l.CacheTTL, "lfs-backend-cache-ttl", 60*time.Second, "how long brokers found in etcd are used while etcd cannot be read")
	fs.StringVar(&l.DevKafka, "lfs-dev-kafka", "127.0.0.1:9092", "address of the in-process Kafka started when neither --lfs-brokers nor --lfs-etcd-endpoints is set")
	fs.BoolVar(&l.KafkaTLS, "lfs-kafka-tls", false, "connect to the Kafka brokers over TLS (implied by the other --lfs-kafka-tls-* flags)")
	fs.StringVar(&l.KafkaTLSCAFile, "lfs-kafka-tls-ca-file", "", "PEM file of the CA certificates the brokers' certificates are checked against (default: the system's)")
	fs.StringVar(&l.KafkaTLSCertFile, "lfs-kafka-tls-cert-file", "", "PEM client certificate for brokers that require one (with --lfs-kafka-tls-key-file)")
	fs.StringVar(&l.KafkaTLSKeyFile, "lfs-kafka-tls-key-file", "", "PEM private key of --lfs-kafka-tls-cert-file (mode 600)")
	fs.StringVar(&l.KafkaTLSServerName, "lfs-kafka-tls-server-name", "", "name the brokers' certificates must carry (default: each broker's host)")
	fs.StringVar(&l.KafkaSASLMechanism, "lfs-kafka-sasl-mechanism", "", "SASL mechanism toward the brokers: PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512")
	fs.StringVar(&l.KafkaSASLUser, "lfs-kafka-sasl-user", "", "SASL user name toward the brokers")
	fs.StringVar(&l.KafkaSASLPassword, "lfs-kafka-sasl-password", "", "SASL password (prefer S3SEAL_LFS_KAFKA_SASL_PASSWORD or --lfs-kafka-sasl-password-file)")
	fs.StringVar(&l.KafkaSASLPasswordFile, "lfs-kafka-sasl-password-file", "", "file holding the SASL password (mode 600)")
	start("LFS: Kafka listener")
	fs.StringVar(&l.KafkaListen, "lfs-kafka-listen", "", "address of a Kafka listener: producers put it in bootstrap.servers and mark large records with the header LFS_BLOB (needs --lfs)")
	fs.StringVar(&l.KafkaAdvertise, "lfs-kafka-advertise", "", "host:port clients are told to connect to (default --lfs-kafka-listen's address; required when it listens on every interface)")
	fs.StringVar(&l.KafkaListenTLSCert, "lfs-kafka-listen-tls-cert-file", "", "PEM certificate of the Kafka listener's TLS toward clients (with --lfs-kafka-listen-tls-key-file)")
	fs.StringVar(&l.KafkaListenTLSKey, "lfs-kafka-listen-tls-key-file", "", "PEM private key of --lfs-kafka-listen-tls-cert-file")
	fs.StringVar(&l.KafkaListenSASL, "lfs-kafka-listen-sasl", "", "SASL mechanisms clients of the Kafka listener authenticate with (PLAIN, SCRAM-SHA-256, SCRAM-SHA-512, comma-separated): user = an s3seal access key, password = its secret key; topics from the credential's kafka_topics")
	fs.IntVar(&l.KafkaMaxRequest, "lfs-kafka-max-request", 64<<20, "largest Kafka request taken, in bytes (producers raise max.request.size / message.max.bytes to it)")
	fs.IntVar(&l.KafkaMaxInFlight, "lfs-kafka-max-inflight", 8, "Kafka requests held at once; memory is about twice --lfs-kafka-max-request times this")
}

func (l *lfsConfig) validate() error {
	if !l.Enabled {
		if l.KafkaListen != "" {
			return usagef("--lfs-kafka-listen needs --lfs: the Kafka listener stores blobs through the LFS module")
		}
		return nil
	}
	switch {
	case l.MaxBlobSize <= 0:
		return usagef("--lfs-max-blob-size must be > 0")
	case l.CacheTTL <= 0:
		return usagef("--lfs-backend-cache-ttl must be > 0")
	case l.Bucket == "":
		return usagef("--lfs-bucket must not be empty")
	case l.Namespace == "" || strings.Contains(l.Namespace, "/") || l.Namespace == "." || l.Namespace == "..":
		return usagef("--lfs-namespace must be one path component")
	}
	if l.KafkaListen != "" {
		switch {
		case l.KafkaMaxRequest < 1<<20:
			return usagef("--lfs-kafka-max-request must be at least 1 MiB")
		case l.KafkaMaxInFlight <= 0:
			return usagef("--lfs-kafka-max-inflight must be > 0")
		case (l.KafkaListenTLSCert == "") != (l.KafkaListenTLSKey == ""):
			return usagef("--lfs-kafka-listen-tls-cert-file and --lfs-kafka-listen-tls-key-file go together")
		}
		for _, m := range splitList(l.KafkaListenSASL) {
			if m != "PLAIN" && m != "SCRAM-SHA-256" && m != "SCRAM-SHA-512" {
				return usagef("--lfs-kafka-listen-sasl %q: the mechanisms are PLAIN, SCRAM-SHA-256 and SCRAM-SHA-512", m)
			}
		}
	}
	if l.PublicURL != "" {
		u, err := url.Parse(l.PublicURL)
		shown := l.PublicURL
		if err == nil && u.User != nil {
			shown = u.Redacted() // no password in the message
		}
		switch {
		case err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Hostname() == "":
			return usagef("--lfs-public-url %q: want http:// or https:// and a host, such as https://blobs.example.com", shown)
		case u.Path != "" && u.Path != "/", u.RawQuery != "", u.Fragment != "", u.User != nil:
			// The signature covers the path the S3 API receives: a prefix
			// the ingress strips would break every URL.
			return usagef("--lfs-public-url %q: give scheme://host[:port] only; the ingress must pass paths to the S3 API unchanged", shown)
		case strings.HasSuffix(u.Host, ":") || !validPort(u.Port()):
			return usagef("--lfs-public-url %q: the port must be 1 to 65535", shown)
		}
	}
	return nil
}

// presignEndpoint is the S3 URL presigned downloads name: --lfs-public-url,
// else the S3 listener's own.
func (l *lfsConfig) presignEndpoint(s3Endpoint string) string {
	if l.PublicURL != "" {
		return strings.TrimSuffix(l.PublicURL, "/")
	}
	return s3Endpoint
}

// validPort reports whether p is empty (the scheme's port) or 1..65535.
func validPort(p string) bool {
	if p == "" {
		return true
	}
	n, err := strconv.Atoi(p)
	return err == nil && n >= 1 && n <= 65535
}
