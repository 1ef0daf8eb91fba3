package brokers

// TLS and SASL toward brokers. TLS wraps the connection before the
// ApiVersions handshake; SASL (any franz-go sasl.Mechanism: plain, scram)
// runs right after it, over SaslHandshake v1 and SaslAuthenticate, as
// Kafka's clients do, so every request after it is authenticated.

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"strings"

	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/sasl"
	"github.com/twmb/franz-go/pkg/sasl/plain"
	"github.com/twmb/franz-go/pkg/sasl/scram"
)

// SASLMechanisms are the mechanism names SASL accepts (any case).
var SASLMechanisms = []string{"PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"}

// SASL returns franz-go's mechanism of that name for user and password.
func SASL(mechanism, user, password string) (sasl.Mechanism, error) {
	switch strings.ToUpper(mechanism) {
	case "PLAIN":
		return plain.Auth{User: user, Pass: password}.AsMechanism(), nil
	case "SCRAM-SHA-256":
		return scram.Auth{User: user, Pass: password}.AsSha256Mechanism(), nil
	case "SCRAM-SHA-512":
		return scram.Auth{User: user, Pass: password}.AsSha512Mechanism(), nil
	}
	return nil, fmt.Errorf("SASL mechanism %q: want one of %s", mechanism, strings.Join(SASLMechanisms, ", "))
}

// maxSASLRounds bounds a SASL exchange (SCRAM takes two).
const maxSASLRounds = 8

// startTLS runs the TLS handshake on nc; the server name defaults to the
// broker's host.
func startTLS(ctx context.Context, cfg *tls.Config, nc net.Conn, addr string) (net.Conn, error) {
	cfg = cfg.Clone()
	if cfg.ServerName == "" {
		if host, _, err := net.SplitHostPort(addr); err == nil {
			cfg.ServerName = host
		}
	}
	tc := tls.Client(nc, cfg)
	if err := tc.HandshakeContext(ctx); err != nil {
		return nil, fmt.Errorf("TLS handshake: %w", err)
	}
	return tc, nil
}

// authenticate runs the SASL exchange of m on c.
func (c *brokerConn) authenticate(ctx context.Context, m sasl.Mechanism) error {
	hv, ok := c.version(kmsg.SASLHandshake.Int16(), 1)
	av, aok := c.version(kmsg.SASLAuthenticate.Int16(), 2)
	if !ok || !aok || hv < 1 {
		return fmt.Errorf("SASL %s: the broker does not offer SASL (SaslHandshake v1, SaslAuthenticate); is its listener a SASL one?", m.Name())
	}
	hs := kmsg.NewPtrSASLHandshakeRequest()
	hs.SetVersion(hv)
	hs.Mechanism = m.Name()
	kresp, _, err := c.request(ctx, hs)
	if err != nil {
		return fmt.Errorf("SASL handshake: %w", err)
	}
	if resp := kresp.(*kmsg.SASLHandshakeResponse); resp.ErrorCode != 0 {
		return fmt.Errorf("SASL %s: %w (the broker offers %v)", m.Name(), kerrFor(resp.ErrorCode), resp.SupportedMechanisms)
	}
	session, out, err := m.Authenticate(ctx, c.addr)
	if err != nil {
		return fmt.Errorf("SASL %s: %w", m.Name(), err)
	}
	for round, last := 0, false; round < maxSASLRounds; round++ {
		req := kmsg.NewPtrSASLAuthenticateRequest()
		req.SetVersion(av)
		req.SASLAuthBytes = out
		kresp, _, err := c.request(ctx, req)
		if err != nil {
			return fmt.Errorf("SASL %s authenticate: %w", m.Name(), err)
		}
		resp := kresp.(*kmsg.SASLAuthenticateResponse)
		if resp.ErrorCode != 0 {
			msg := ""
			if resp.ErrorMessage != nil {
				msg = ": " + *resp.ErrorMessage
			}
			return fmt.Errorf("SASL %s authentication failed: %w%s", m.Name(), kerrFor(resp.ErrorCode), msg)
		}
		if last {
			return nil
		}
		done, next, err := session.Challenge(resp.SASLAuthBytes)
		if err != nil {
			return fmt.Errorf("SASL %s: %w", m.Name(), err)
		}
		if done && len(next) == 0 {
			return nil
		}
		out, last = next, done // done with a message: send it, then stop
	}
	return fmt.Errorf("SASL %s: no end after %d rounds", m.Name(), maxSASLRounds)
}
