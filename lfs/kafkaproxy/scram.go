package kafkaproxy

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"strconv"
	"strings"

	"github.com/xdg-go/scram"
)

// scramConv is the server side of one SCRAM exchange (RFC 5802): the
// client-first message, answered with the salt and iterations, then the
// client-final message, whose proof is checked against the user's stored
// key and answered with the server's signature.
//
// The nonce of the client-final message must end with the nonce the
// server sent, as a Kafka broker checks it, rather than equal it:
// librdkafka (kcat, confluent-kafka) sends its own nonce again before
// the combined one, and its proof covers the message as sent.
type scramConv struct {
	hash   scram.HashGeneratorFcn
	lookup func(user string) (scram.StoredCredentials, error)

	step        int
	user        string
	gs2         string // the client-first message's GS2 header
	nonce       string // client nonce + server nonce
	firstBare   string // client-first-message-bare
	serverFirst string
	cred        scram.StoredCredentials
	valid       bool
}

var errSCRAM = errors.New("malformed SCRAM message")

// Step takes the client's message and returns the server's answer; an
// error ends the exchange as failed.
func (s *scramConv) Step(in string) (string, error) {
	s.step++
	switch s.step {
	case 1:
		return s.first(in)
	case 2:
		return s.final(in)
	}
	return "", errors.New("SCRAM exchange already ended")
}

// Done reports whether the exchange ended.
func (s *scramConv) Done() bool { return s.step >= 2 }

// Valid reports whether the client proved it knows the password.
func (s *scramConv) Valid() bool { return s.valid }

// Username is the user the client named.
func (s *scramConv) Username() string { return s.user }

func (s *scramConv) first(in string) (string, error) {
	// gs2-header: "n" or "y" (no channel binding), an optional
	// authzid, then client-first-message-bare.
	parts := strings.SplitN(in, ",", 3)
	if len(parts) != 3 || (parts[0] != "n" && parts[0] != "y") {
		return "", errors.New("SCRAM client-first message: channel binding is not offered")
	}
	s.gs2 = parts[0] + "," + parts[1] + ","
	s.firstBare = parts[2]
	attrs := strings.Split(s.firstBare, ",")
	if len(attrs) < 2 || !strings.HasPrefix(attrs[0], "n=") || !strings.HasPrefix(attrs[1], "r=") || len(attrs[1]) == 2 {
		return "", errSCRAM
	}
	for _, a := range attrs[2:] {
		if strings.HasPrefix(a, "m=") {
			return "", errors.New("SCRAM client-first message: unsupported mandatory extension")
		}
	}
	user, ok := scramName(attrs[0][2:])
	if !ok {
		return "", errSCRAM
	}
	if authz := parts[1]; authz != "" {
		if a, ok := scramName(strings.TrimPrefix(authz, "a=")); !ok || !strings.HasPrefix(authz, "a=") || a != user {
			return "", errors.New("SCRAM client-first message: an authorization id other than the user")
		}
	}
	s.user = user
	cred, err := s.lookup(user)
	if err != nil {
		return "", err
	}
	s.cred = cred
	var b [24]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", err
	}
	s.nonce = attrs[1][2:] + base64.RawURLEncoding.EncodeToString(b[:])
	s.serverFirst = "r=" + s.nonce + ",s=" + base64.StdEncoding.EncodeToString([]byte(cred.Salt)) + ",i=" + strconv.Itoa(cred.Iters)
	return s.serverFirst, nil
}

func (s *scramConv) final(in string) (string, error) {
	// client-final-message: "c=" channel binding, "r=" nonce, maybe
	// extensions, then "p=" proof, last.
	withoutProof, proofB64, ok := strings.Cut(in, ",p=")
	if !ok || strings.Contains(proofB64, ",") {
		return "", errSCRAM
	}
	attrs := strings.Split(withoutProof, ",")
	if len(attrs) < 2 || !strings.HasPrefix(attrs[0], "c=") || !strings.HasPrefix(attrs[1], "r=") {
		return "", errSCRAM
	}
	if cb, err := base64.StdEncoding.DecodeString(attrs[0][2:]); err != nil || string(cb) != s.gs2 {
		return "", errors.New("SCRAM client-final message: channel binding does not match the client-first message")
	}
	if !strings.HasSuffix(attrs[1][2:], s.nonce) {
		return "", errors.New("SCRAM client-final message: the nonce does not end with the server's")
	}
	proof, err := base64.StdEncoding.DecodeString(proofB64)
	if err != nil {
		return "", errSCRAM
	}
	auth := []byte(s.firstBare + "," + s.serverFirst + "," + withoutProof)
	sig := s.hmac(s.cred.StoredKey, auth)
	if len(proof) != len(sig) {
		return "e=invalid-proof", errors.New("SCRAM proof of the wrong length")
	}
	clientKey := make([]byte, len(sig))
	subtle.XORBytes(clientKey, proof, sig)
	h := s.hash()
	h.Write(clientKey)
	if subtle.ConstantTimeCompare(h.Sum(nil), s.cred.StoredKey) != 1 {
		return "e=invalid-proof", errors.New("SCRAM proof did not verify")
	}
	s.valid = true
	return "v=" + base64.StdEncoding.EncodeToString(s.hmac(s.cred.ServerKey, auth)), nil
}

func (s *scramConv) hmac(key, data []byte) []byte {
	m := hmac.New(s.hash, key)
	m.Write(data)
	return m.Sum(nil)
}

// scramName decodes a SCRAM saslname ("=2C" is ",", "=3D" is "=").
func scramName(s string) (string, bool) {
	if s == "" {
		return "", false
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '=' {
			b.WriteByte(s[i])
			continue
		}
		switch {
		case strings.HasPrefix(s[i:], "=2C"):
			b.WriteByte(',')
		case strings.HasPrefix(s[i:], "=3D"):
			b.WriteByte('=')
		default:
			return "", false
		}
		i += 2
	}
	return b.String(), true
}
