package brokers

import (
	"context"
	"crypto/tls"
	"log/slog"
	"net"
	"time"

	"github.com/twmb/franz-go/pkg/sasl"
)

// Config configures a Discovery. The zero value of each option takes the
// default named in its comment.
type Config struct {
	// Static is the --lfs-brokers list of host:port addresses. When set it
	// wins over etcd, and CacheTTL does not apply.
	Static []string
	// EtcdEndpoints is the --lfs-etcd-endpoints list, used when Static is
	// empty. New fails when both are empty.
	EtcdEndpoints []string
	// CacheTTL (--lfs-backend-cache-ttl, default 60s) is how long after the
	// last successful etcd read the brokers found then may still be used
	// while etcd cannot be read.
	CacheTTL time.Duration
	// Logger receives discovery and retry messages. Default slog.Default().
	Logger *slog.Logger

	// EtcdTimeout bounds one etcd read (default 3s): a read that takes
	// longer counts as "etcd cannot be read".
	EtcdTimeout time.Duration
	// DialTimeout bounds connecting to one broker, including the ApiVersions
	// handshake (default 5s).
	DialTimeout time.Duration
	// RequestTimeout bounds one Kafka request and its response on an open
	// connection (default 30s); ProduceTimeout is sent inside it.
	RequestTimeout time.Duration
	// ProduceTimeout is the broker-side acks=all timeout of a Produce
	// request (default 10s).
	ProduceTimeout time.Duration
	// RetryBackoff is the wait between two produce attempts (default
	// 250ms). The wait ends early when the context is cancelled; there is
	// no wait after the last attempt.
	RetryBackoff time.Duration
	// ClientID is the Kafka client id sent with each request (default
	// "s3seal-lfs").
	ClientID string
	// TopicWait bounds how long a produce waits for a topic the broker is
	// still creating (its Metadata answers LEADER_NOT_AVAILABLE for the
	// topic), asking again every RetryBackoff (default 10s). These waits
	// are not broker attempts: they do not count against maxAttempts.
	TopicWait time.Duration
	// TLS, when set, is used for every broker connection (its ServerName
	// defaults to the broker's host).
	TLS *tls.Config
	// SASL, when set, authenticates every broker connection right after
	// the ApiVersions handshake (franz-go's sasl/plain or sasl/scram).
	SASL sasl.Mechanism
	// Dial opens a TCP connection to a broker. Default net.Dialer's
	// DialContext. Tests use it to count connections.
	Dial func(ctx context.Context, network, addr string) (net.Conn, error)
}

// maxAttempts is the number of brokers a produce is sent to at most.
const maxAttempts = 3

func (c Config) withDefaults() Config {
	if c.CacheTTL <= 0 {
		c.CacheTTL = 60 * time.Second
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	if c.EtcdTimeout <= 0 {
		c.EtcdTimeout = 3 * time.Second
	}
	if c.DialTimeout <= 0 {
		c.DialTimeout = 5 * time.Second
	}
	if c.RequestTimeout <= 0 {
		c.RequestTimeout = 30 * time.Second
	}
	if c.ProduceTimeout <= 0 {
		c.ProduceTimeout = 10 * time.Second
	}
	if c.RetryBackoff <= 0 {
		c.RetryBackoff = 250 * time.Millisecond
	}
	if c.TopicWait <= 0 {
		c.TopicWait = 10 * time.Second
	}
	if c.ClientID == "" {
		c.ClientID = "s3seal-lfs"
	}
	if c.Dial == nil {
		var d net.Dialer
		c.Dial = d.DialContext
	}
	return c
}
