package lfs

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"time"
)

// An upload session lives in its id, not in a process: the id is the
// session (storage upload id, object key, topic, Kafka key, partition,
// content type, declared size and checksum, expiry) sealed with
// AES-256-GCM under a key derived from the master key (HKDF, purpose
// sessionPurpose), so any replica with the same keyring serves any part and
// the completion, no one can forge or alter a session, and the Kafka key
// and topic are not readable from logs of URLs. The id names the master key
// it was sealed under, so a key rotation does not end live sessions.
//
//	id = base64url( len(keyID) | keyID | nonce(12) | GCM(json) ), AAD = keyID

const sessionPurpose = "lfs upload session v1"

type session struct {
	Bucket      string `json:"b"`
	UploadID    string `json:"u"`
	Key         string `json:"k"`
	Topic       string `json:"t"`
	KafkaKey    []byte `json:"kk,omitempty"`
	Partition   int32  `json:"p"`
	ContentType string `json:"ct,omitempty"`
	Size        int64  `json:"s"`
	ChecksumAlg string `json:"ca,omitempty"`
	Checksum    string `json:"c,omitempty"`
	Expires     int64  `json:"e"` // unix seconds
}

func (s *session) expires() time.Time { return time.Unix(s.Expires, 0) }

var errBadSession = errors.New("not an upload id of this service")

func (h *Handler) sessionAEAD(keyID string) (cipher.AEAD, bool) {
	k, ok := h.cfg.Keyring.DeriveKey(keyID, sessionPurpose)
	if !ok {
		return nil, false
	}
	b, _ := aes.NewCipher(k)
	g, _ := cipher.NewGCM(b)
	return g, true
}

func (h *Handler) sealSession(s *session) (string, error) {
	keyID, _ := h.cfg.Keyring.DerivationKey() // serve refuses --lfs without one
	g, _ := h.sessionAEAD(keyID)
	pt, err := json.Marshal(s)
	if err != nil {
		return "", err
	}
	out := make([]byte, 0, 1+len(keyID)+g.NonceSize()+len(pt)+g.Overhead())
	out = append(out, byte(len(keyID)))
	out = append(out, keyID...)
	nonce := make([]byte, g.NonceSize())
	if _, err := rand.Read(nonce); err != nil {
		return "", err
	}
	out = append(out, nonce...)
	out = g.Seal(out, nonce, pt, []byte(keyID))
	return base64.RawURLEncoding.EncodeToString(out), nil
}

func (h *Handler) openSession(id string) (*session, error) {
	b, err := base64.RawURLEncoding.DecodeString(id)
	if err != nil || len(b) < 1 || len(b) < 1+int(b[0]) {
		return nil, errBadSession
	}
	keyID := string(b[1 : 1+int(b[0])])
	g, ok := h.sessionAEAD(keyID)
	if !ok {
		return nil, errBadSession
	}
	rest := b[1+int(b[0]):]
	if len(rest) < g.NonceSize()+g.Overhead() {
		return nil, errBadSession
	}
	pt, err := g.Open(nil, rest[:g.NonceSize()], rest[g.NonceSize():], []byte(keyID))
	if err != nil {
		return nil, errBadSession
	}
	var s session
	if err := json.Unmarshal(pt, &s); err != nil || s.Bucket != h.cfg.Bucket {
		return nil, errBadSession
	}
	return &s, nil
}
