package kafkaproxy

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"sort"
	"sync"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/xdg-go/scram"
)

// SASLConfig is the SASL the listener asks of clients: SaslHandshake v1
// then SaslAuthenticate requests, or SaslHandshake v0 then the tokens
// raw, each a size-prefixed frame answered with one (Kafka before 1.0).
type SASLConfig struct {
	// Mechanisms offered: "PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512".
	Mechanisms []string
	// Password returns the password of user, false for no such user.
	Password func(user string) (string, bool)
	// Salt keys the per-user SCRAM salts (any secret of s3seal's): the
	// salt a user sees is the same on every replica and says nothing.
	Salt []byte

	once   sync.Once
	hashes map[string]scram.HashGeneratorFcn
	mu     sync.Mutex
	stored map[storedKey]scram.StoredCredentials
}

type storedKey struct{ mech, user, pass string }

const scramIters = 4096

func (s *SASLConfig) offers(mech string) bool {
	for _, m := range s.Mechanisms {
		if m == mech {
			return true
		}
	}
	return false
}

func (s *SASLConfig) init() {
	s.once.Do(func() {
		s.hashes = map[string]scram.HashGeneratorFcn{"SCRAM-SHA-256": scram.SHA256, "SCRAM-SHA-512": scram.SHA512}
		s.stored = map[storedKey]scram.StoredCredentials{}
	})
}

// lookup derives a user's SCRAM credentials from the password (cached: the
// key derivation is made to be slow).
func (s *SASLConfig) lookup(mech string, hf scram.HashGeneratorFcn, user string) (scram.StoredCredentials, error) {
	pass, ok := s.Password(user)
	if !ok {
		return scram.StoredCredentials{}, errors.New("unknown user")
	}
	k := storedKey{mech, user, pass}
	s.mu.Lock()
	sc, ok := s.stored[k]
	s.mu.Unlock()
	if ok {
		return sc, nil
	}
	cl, err := hf.NewClient(user, pass, "")
	if err != nil {
		return scram.StoredCredentials{}, err
	}
	m := hmac.New(sha256.New, s.Salt)
	m.Write([]byte(mech + "\x00" + user))
	sc, err = cl.GetStoredCredentialsWithError(scram.KeyFactors{Salt: string(m.Sum(nil)[:16]), Iters: scramIters})
	if err != nil {
		return scram.StoredCredentials{}, err
	}
	s.mu.Lock()
	if len(s.stored) > 10000 {
		clear(s.stored)
	}
	s.stored[k] = sc
	s.mu.Unlock()
	return sc, nil
}

// saslExchange is a connection's authentication in progress.
type saslExchange struct {
	mech string
	conv *scramConv
	// raw: the handshake was v0, so the tokens come as bare frames.
	raw bool
}

func (c *conn) saslHandshake(req *kmsg.SASLHandshakeRequest) kmsg.Response {
	resp := kmsg.NewPtrSASLHandshakeResponse()
	s := c.p.cfg.SASL
	if s == nil {
		resp.ErrorCode = kerr.IllegalSaslState.Code
		return resp
	}
	resp.SupportedMechanisms = append([]string(nil), s.Mechanisms...)
	sort.Strings(resp.SupportedMechanisms)
	if c.authed || !s.offers(req.Mechanism) {
		resp.ErrorCode = kerr.UnsupportedSaslMechanism.Code
		if c.authed {
			resp.ErrorCode = kerr.IllegalSaslState.Code
		}
		return resp
	}
	s.init()
	c.sasl = &saslExchange{mech: req.Mechanism, raw: req.Version == 0}
	if hf := s.hashes[req.Mechanism]; hf != nil {
		mech := req.Mechanism
		c.sasl.conv = &scramConv{hash: hf, lookup: func(user string) (scram.StoredCredentials, error) { return s.lookup(mech, hf, user) }}
	}
	return resp
}

// saslAuthenticate runs one step; a failure closes the connection after
// its answer, as a broker does.
func (c *conn) saslAuthenticate(req *kmsg.SASLAuthenticateRequest) (kmsg.Response, bool) {
	resp := kmsg.NewPtrSASLAuthenticateResponse()
	fail := func(why string) (kmsg.Response, bool) {
		c.p.metrics.refused.WithLabelValues("authentication").Inc()
		c.p.log.Info("kafka listener: SASL authentication failed", "client", c.nc.RemoteAddr().String(), "reason", why)
		resp.ErrorCode = kerr.SaslAuthenticationFailed.Code
		msg := "Authentication failed: invalid credentials"
		resp.ErrorMessage = &msg
		c.sasl = nil
		return resp, false
	}
	x := c.sasl
	if x == nil || c.authed {
		resp.ErrorCode = kerr.IllegalSaslState.Code
		return resp, false
	}
	if x.conv == nil { // PLAIN: authzid NUL user NUL password
		parts := bytes.Split(req.SASLAuthBytes, []byte{0})
		if len(parts) != 3 || (len(parts[0]) > 0 && !bytes.Equal(parts[0], parts[1])) {
			return fail("malformed PLAIN message")
		}
		pass, ok := c.p.cfg.SASL.Password(string(parts[1]))
		if !ok || subtle.ConstantTimeCompare([]byte(pass), parts[2]) != 1 {
			return fail("bad user or password")
		}
		c.authed, c.principal, c.sasl = true, string(parts[1]), nil
		return resp, true
	}
	out, err := x.conv.Step(string(req.SASLAuthBytes))
	if err != nil {
		return fail(err.Error())
	}
	resp.SASLAuthBytes = []byte(out)
	if x.conv.Done() {
		if !x.conv.Valid() {
			return fail("SCRAM proof did not verify")
		}
		c.authed, c.principal, c.sasl = true, x.conv.Username(), nil
	}
	return resp, true
}

// rawSASL reports whether the next frame is a raw SASL token (after a v0
// handshake) instead of a request.
func (c *conn) rawSASL() bool { return !c.authed && c.sasl != nil && c.sasl.raw }

// saslRaw runs one step of a v0 exchange: token is the client's frame,
// the answer the server's token as a frame of its own. A failure closes
// the connection without an answer, as a broker does.
func (c *conn) saslRaw(token []byte) bool {
	req := kmsg.NewPtrSASLAuthenticateRequest()
	req.SASLAuthBytes = token
	resp, keep := c.saslAuthenticate(req)
	c.p.metrics.requests.WithLabelValues(kmsg.NameForKey(req.Key())).Inc()
	if r := resp.(*kmsg.SASLAuthenticateResponse); keep && r.ErrorCode == 0 {
		return c.writeFrame(r.SASLAuthBytes) == nil
	}
	return false
}
