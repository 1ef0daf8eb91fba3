package kafkaproxy

import (
	"context"
	"crypto/hmac"
	"crypto/pbkdf2"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"hash"
	"io"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/sasl"
	"github.com/twmb/franz-go/pkg/sasl/plain"
	"github.com/twmb/franz-go/pkg/sasl/scram"
	xscram "github.com/xdg-go/scram"
)

const (
	saslUser = "app"
	saslPass = "app-secret"
)

// saslHarness is a harness whose listener asks for SASL with every
// mechanism, the one user app/app-secret allowed every topic but those
// named secret*.
func saslHarness(t *testing.T) *harness {
	return newHarness(t, 1, func(c *Config) {
		c.SASL = &SASLConfig{Mechanisms: []string{"PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"}, Salt: []byte("salt key"),
			Password: func(user string) (string, bool) { return saslPass, user == saslUser }}
		c.MayUse = func(principal, topic string) bool {
			return principal == saslUser && !strings.HasPrefix(topic, "secret")
		}
	})
}

// kgo authenticates with each mechanism (SaslHandshake v1, then
// SaslAuthenticate) and produces; a topic its user may not use is
// answered TOPIC_AUTHORIZATION_FAILED; a wrong password fails with
// SASL_AUTHENTICATION_FAILED.
func TestSASLKgoProduces(t *testing.T) {
	h := saslHarness(t)
	for name, m := range map[string]sasl.Mechanism{
		"PLAIN":         plain.Auth{User: saslUser, Pass: saslPass}.AsMechanism(),
		"SCRAM-SHA-256": scram.Auth{User: saslUser, Pass: saslPass}.AsSha256Mechanism(),
		"SCRAM-SHA-512": scram.Auth{User: saslUser, Pass: saslPass}.AsSha512Mechanism(),
	} {
		t.Run(name, func(t *testing.T) {
			cl := h.client(kgo.SASL(m), kgo.RecordDeliveryTimeout(5*time.Second))
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			if err := cl.ProduceSync(ctx, &kgo.Record{Topic: "open", Value: []byte("v")}).FirstErr(); err != nil {
				t.Fatalf("produce: %v", err)
			}
			if err := cl.ProduceSync(ctx, &kgo.Record{Topic: "secret", Value: []byte("v")}).FirstErr(); !errors.Is(err, kerr.TopicAuthorizationFailed) {
				t.Fatalf("produce to a topic not granted: %v, want TOPIC_AUTHORIZATION_FAILED", err)
			}
		})
	}
	cl := h.client(kgo.SASL(scram.Auth{User: saslUser, Pass: "wrong"}.AsSha256Mechanism()), kgo.RecordDeliveryTimeout(3*time.Second))
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := cl.ProduceSync(ctx, &kgo.Record{Topic: "open", Value: []byte("v")}).FirstErr(); !errors.Is(err, kerr.SaslAuthenticationFailed) {
		t.Fatalf("produce with a wrong password: %v, want SASL_AUTHENTICATION_FAILED", err)
	}
}

// A client authenticating with SaslHandshake v0 (Kafka before 1.0) sends
// its tokens as bare size-prefixed frames and reads the server's the same
// way: PLAIN and both SCRAMs authenticate so, and requests follow; a
// wrong password closes the connection.
func TestSASLHandshakeV0RawTokens(t *testing.T) {
	h := saslHarness(t)
	for _, tc := range []struct {
		mech string
		hash xscram.HashGeneratorFcn
		pass string
	}{{"PLAIN", nil, saslPass}, {"SCRAM-SHA-256", xscram.SHA256, saslPass}, {"SCRAM-SHA-512", xscram.SHA512, saslPass},
		{"PLAIN", nil, "wrong"}, {"SCRAM-SHA-256", xscram.SHA256, "wrong"}} {
		t.Run(tc.mech+"/"+tc.pass, func(t *testing.T) {
			nc := dial(t, h.addr)
			hs := kmsg.NewPtrSASLHandshakeRequest()
			hs.Version, hs.Mechanism = 0, tc.mech
			if r := roundTrip(t, nc, hs).(*kmsg.SASLHandshakeResponse); r.ErrorCode != 0 {
				t.Fatalf("handshake v0: error %d", r.ErrorCode)
			}
			var ok bool
			if tc.hash == nil {
				_, ok = rawStep(t, nc, []byte("\x00"+saslUser+"\x00"+tc.pass))
			} else {
				cl, err := tc.hash.NewClient(saslUser, tc.pass, "")
				if err != nil {
					t.Fatal(err)
				}
				conv := cl.NewConversation()
				var in []byte
				for !conv.Done() {
					out, err := conv.Step(string(in))
					if err != nil || conv.Done() {
						break
					}
					if in, ok = rawStep(t, nc, []byte(out)); !ok {
						break
					}
				}
				ok = ok && conv.Valid()
			}
			if ok != (tc.pass == saslPass) {
				t.Fatalf("authenticated: %v", ok)
			}
			if ok {
				md := kmsg.NewPtrMetadataRequest()
				md.Version = 4
				roundTrip(t, nc, md)
			}
		})
	}
}

// rawStep sends a raw SASL token and reads the server's; false: the
// connection was closed.
func rawStep(t *testing.T, nc net.Conn, token []byte) ([]byte, bool) {
	t.Helper()
	if _, err := nc.Write(append(binary.BigEndian.AppendUint32(nil, uint32(len(token))), token...)); err != nil {
		return nil, false
	}
	var size [4]byte
	if _, err := io.ReadFull(nc, size[:]); err != nil {
		return nil, false
	}
	b := make([]byte, binary.BigEndian.Uint32(size[:]))
	if _, err := io.ReadFull(nc, b); err != nil {
		return nil, false
	}
	return b, true
}

// ApiVersions lists SaslHandshake from v0, as brokers do: librdkafka
// (kcat, confluent-kafka) takes a broker for one without SASL handshakes
// unless v0 is in the range, and then refuses to authenticate at all.
func TestApiVersionsListSaslHandshakeFromV0(t *testing.T) {
	h := saslHarness(t)
	nc := dial(t, h.addr)
	req := kmsg.NewPtrApiVersionsRequest()
	req.Version = 0
	resp := roundTrip(t, nc, req).(*kmsg.ApiVersionsResponse)
	for _, k := range resp.ApiKeys {
		if k.ApiKey == kmsg.SASLHandshake.Int16() {
			if k.MinVersion != 0 || k.MaxVersion != 1 {
				t.Fatalf("SaslHandshake versions %d..%d, want 0..1", k.MinVersion, k.MaxVersion)
			}
			return
		}
	}
	t.Fatal("ApiVersions does not list SaslHandshake")
}

// SCRAM as librdkafka speaks it: its client-final message names its own
// nonce and then the combined nonce the server sent ("r=" cnonce cnonce
// snonce), its proof computed over that message; a Kafka broker takes a
// nonce that ends with the server's. The exact nonce of RFC 5802 is
// taken too; a nonce that does not end with the server's, a wrong
// password, or a channel binding other than the client-first message's
// is refused with SASL_AUTHENTICATION_FAILED.
func TestSCRAMClientFinalNonce(t *testing.T) {
	h := saslHarness(t)
	for _, mech := range []string{"SCRAM-SHA-256", "SCRAM-SHA-512"} {
		for _, tc := range []struct {
			name  string
			pass  string
			nonce func(cnonce, combined string) string
			cbind string
			ok    bool
		}{
			{"librdkafka", saslPass, func(c, s string) string { return c + s }, "n,,", true},
			{"rfc5802", saslPass, func(_, s string) string { return s }, "n,,", true},
			{"not the server's", saslPass, func(c, s string) string { return s[:len(s)-1] + "!" }, "n,,", false},
			{"client nonce only", saslPass, func(c, _ string) string { return c }, "n,,", false},
			{"wrong password", "wrong", func(_, s string) string { return s }, "n,,", false},
			{"other channel binding", saslPass, func(_, s string) string { return s }, "y,,", false},
		} {
			t.Run(mech+"/"+tc.name, func(t *testing.T) {
				nc := dial(t, h.addr)
				hs := kmsg.NewPtrSASLHandshakeRequest()
				hs.Version, hs.Mechanism = 1, mech
				if r := roundTrip(t, nc, hs).(*kmsg.SASLHandshakeResponse); r.ErrorCode != 0 {
					t.Fatalf("handshake: error %d", r.ErrorCode)
				}
				cnonce := "k_HmJ9Q_3kxT-J^W=WC^Z>;GqgW7\\3QE" // printable, '=' included, as librdkafka's are
				firstBare := "n=" + saslUser + ",r=" + cnonce
				serverFirst := string(authenticate(t, nc, []byte("n,,"+firstBare)).SASLAuthBytes)
				attrs := map[string]string{}
				for _, a := range strings.Split(serverFirst, ",") {
					attrs[a[:1]] = a[2:]
				}
				if !strings.HasPrefix(attrs["r"], cnonce) || len(attrs["r"]) <= len(cnonce) {
					t.Fatalf("server-first %q does not extend the client nonce", serverFirst)
				}
				salt, _ := base64.StdEncoding.DecodeString(attrs["s"])
				iters, _ := strconv.Atoi(attrs["i"])
				hf := map[string]func() hash.Hash{"SCRAM-SHA-256": sha256.New, "SCRAM-SHA-512": sha512.New}[mech]
				salted, err := pbkdf2.Key(hf, tc.pass, salt, iters, hf().Size())
				if err != nil {
					t.Fatal(err)
				}
				clientKey := hmacOf(hf, salted, "Client Key")
				stored := hf()
				stored.Write(clientKey)
				withoutProof := "c=" + base64.StdEncoding.EncodeToString([]byte(tc.cbind)) + ",r=" + tc.nonce(cnonce, attrs["r"])
				auth := firstBare + "," + serverFirst + "," + withoutProof
				sig := hmacOf(hf, stored.Sum(nil), auth)
				proof := make([]byte, len(sig))
				for i := range sig {
					proof[i] = clientKey[i] ^ sig[i]
				}
				final := authenticate(t, nc, []byte(withoutProof+",p="+base64.StdEncoding.EncodeToString(proof)))
				if !tc.ok {
					if final.ErrorCode == 0 {
						t.Fatalf("authenticated: %q", final.SASLAuthBytes)
					}
					return
				}
				if final.ErrorCode != 0 {
					t.Fatalf("refused: error %d %v", final.ErrorCode, final.ErrorMessage)
				}
				want := "v=" + base64.StdEncoding.EncodeToString(hmacOf(hf, hmacOf(hf, salted, "Server Key"), auth))
				if string(final.SASLAuthBytes) != want {
					t.Fatalf("server-final %q, want %q", final.SASLAuthBytes, want)
				}
				// Authenticated: a request past SASL is answered.
				md := kmsg.NewPtrMetadataRequest()
				md.Version = 4
				if _, ok := roundTrip(t, nc, md).(*kmsg.MetadataResponse); !ok {
					t.Fatal("no metadata answer after SCRAM")
				}
			})
		}
	}
}

func hmacOf(hf func() hash.Hash, key []byte, msg string) []byte {
	m := hmac.New(hf, key)
	m.Write([]byte(msg))
	return m.Sum(nil)
}

func authenticate(t *testing.T, nc net.Conn, token []byte) *kmsg.SASLAuthenticateResponse {
	t.Helper()
	req := kmsg.NewPtrSASLAuthenticateRequest()
	req.Version, req.SASLAuthBytes = 1, token
	return roundTrip(t, nc, req).(*kmsg.SASLAuthenticateResponse)
}

func dial(t *testing.T, addr string) net.Conn {
	t.Helper()
	nc, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nc.Close() })
	_ = nc.SetDeadline(time.Now().Add(20 * time.Second))
	return nc
}

// roundTrip sends req (its version set) and reads its answer; the
// connection closed instead fails the test.
func roundTrip(t *testing.T, nc net.Conn, req kmsg.Request) kmsg.Response {
	t.Helper()
	buf := make([]byte, 4, 64)
	buf = binary.BigEndian.AppendUint16(buf, uint16(req.Key()))
	buf = binary.BigEndian.AppendUint16(buf, uint16(req.GetVersion()))
	buf = binary.BigEndian.AppendUint32(buf, 7)
	buf = binary.BigEndian.AppendUint16(buf, 4)
	buf = append(buf, "test"...)
	if req.IsFlexible() {
		buf = append(buf, 0)
	}
	buf = req.AppendTo(buf)
	binary.BigEndian.PutUint32(buf, uint32(len(buf)-4))
	if _, err := nc.Write(buf); err != nil {
		t.Fatal(err)
	}
	var size [4]byte
	if _, err := io.ReadFull(nc, size[:]); err != nil {
		t.Fatalf("%s v%d: no answer: %v", kmsg.NameForKey(req.Key()), req.GetVersion(), err)
	}
	body := make([]byte, binary.BigEndian.Uint32(size[:]))
	if _, err := io.ReadFull(nc, body); err != nil {
		t.Fatal(err)
	}
	if corr := binary.BigEndian.Uint32(body); corr != 7 {
		t.Fatalf("correlation id %d", corr)
	}
	body = body[4:]
	resp := req.ResponseKind()
	resp.SetVersion(req.GetVersion())
	if resp.IsFlexible() && req.Key() != kmsg.ApiVersions.Int16() {
		body = body[1:] // the header's empty tag buffer
	}
	if err := resp.ReadFrom(body); err != nil {
		t.Fatal(fmt.Errorf("decode %s: %w", kmsg.NameForKey(req.Key()), err))
	}
	return resp
}
