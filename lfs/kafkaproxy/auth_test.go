package kafkaproxy

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/sasl"
	"github.com/twmb/franz-go/pkg/sasl/plain"
	"github.com/twmb/franz-go/pkg/sasl/scram"
)

var users = map[string]string{"alice": "alice-secret", "bob": "bob-secret"}

// withSASL requires SASL of clients: alice may use topics a-*, bob b-*.
func withSASL(mechs ...string) func(*Config) {
	return func(c *Config) {
		c.SASL = &SASLConfig{Mechanisms: mechs, Salt: []byte("salt"), Password: func(u string) (string, bool) {
			p, ok := users[u]
			return p, ok
		}}
		c.MayUse = func(principal, topic string) bool {
			return principal != "" && strings.HasPrefix(topic, principal[:1]+"-")
		}
	}
}

func produceOne(t *testing.T, cl *kgo.Client, topic string) error {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return cl.ProduceSync(ctx, &kgo.Record{Topic: topic, Value: randBytes(3000, 1), Headers: []kgo.RecordHeader{{Key: "LFS_BLOB"}}}).FirstErr()
}

// Each mechanism authenticates a client by an s3seal credential; a wrong
// password is refused and nothing gets through.
func TestSASLMechanisms(t *testing.T) {
	h := newHarness(t, 1, withSASL("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"))
	for name, m := range map[string]func(user, pass string) sasl.Mechanism{
		"PLAIN":         func(u, p string) sasl.Mechanism { return plain.Auth{User: u, Pass: p}.AsMechanism() },
		"SCRAM-SHA-256": func(u, p string) sasl.Mechanism { return scram.Auth{User: u, Pass: p}.AsSha256Mechanism() },
		"SCRAM-SHA-512": func(u, p string) sasl.Mechanism { return scram.Auth{User: u, Pass: p}.AsSha512Mechanism() },
	} {
		t.Run(name, func(t *testing.T) {
			ok := h.client(kgo.SASL(m("alice", "alice-secret")))
			if err := produceOne(t, ok, "a-"+strings.ToLower(name)); err != nil {
				t.Fatalf("alice: %v", err)
			}
			for _, who := range [][2]string{{"alice", "wrong"}, {"mallory", "x"}, {"alice", "alice-secreT"}} {
				bad := h.client(kgo.SASL(m(who[0], who[1])), kgo.RequestRetries(0))
				ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
				_, err := bad.Request(ctx, kmsg.NewPtrMetadataRequest())
				cancel()
				if !errors.Is(err, kerr.SaslAuthenticationFailed) {
					t.Fatalf("%s with password %q: %v, want SASL_AUTHENTICATION_FAILED", who[0], who[1], err)
				}
			}
		})
	}
	if n := len(h.blobKeys()); n != 3 {
		t.Fatalf("%d blobs, want 3 (one per mechanism)", n)
	}
}

// A client that skips SASL gets its connection closed at its first
// request other than ApiVersions and the SASL ones.
func TestRequestsBeforeSASLClose(t *testing.T) {
	h := newHarness(t, 1, withSASL("PLAIN"))
	cl := h.client(kgo.RequestRetries(0), kgo.RetryTimeout(time.Second))
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_, err := cl.Request(ctx, kmsg.NewPtrMetadataRequest())
	if err == nil {
		t.Fatal("metadata before SASL was answered")
	}
}

// Topic access: a client produces only to its topics, sees only its
// topics in a listing, and is answered TOPIC_AUTHORIZATION_FAILED for
// another's; nothing is stored for a refused record.
func TestTopicAccessPerClient(t *testing.T) {
	h := newHarness(t, 1, withSASL("PLAIN"))
	alice := h.client(kgo.SASL(plain.Auth{User: "alice", Pass: "alice-secret"}.AsMechanism()), kgo.RecordRetries(1))
	bob := h.client(kgo.SASL(plain.Auth{User: "bob", Pass: "bob-secret"}.AsMechanism()))
	if err := produceOne(t, bob, "b-topic"); err != nil {
		t.Fatal(err)
	}
	if err := produceOne(t, alice, "b-topic"); !errors.Is(err, kerr.TopicAuthorizationFailed) {
		t.Fatalf("alice to bob's topic: %v", err)
	}
	if n := len(h.blobKeys()); n != 1 {
		t.Fatalf("%d blobs, want bob's one", n)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	// A fresh client: kgo keeps the refusal of its earlier produce.
	lister := h.client(kgo.SASL(plain.Auth{User: "alice", Pass: "alice-secret"}.AsMechanism()))
	kr, err := lister.Request(ctx, kmsg.NewPtrMetadataRequest())
	if err != nil {
		t.Fatal(err)
	}
	if len(kr.(*kmsg.MetadataResponse).Topics) != 0 {
		t.Fatalf("alice lists %d topics, she has none yet", len(kr.(*kmsg.MetadataResponse).Topics))
	}
	for _, tp := range kr.(*kmsg.MetadataResponse).Topics {
		if *tp.Topic == "b-topic" {
			t.Fatal("alice's listing shows bob's topic")
		}
	}
	// Consuming is checked as well.
	req := kmsg.NewPtrListOffsetsRequest()
	rt := kmsg.NewListOffsetsRequestTopic()
	rt.Topic = "b-topic"
	rp := kmsg.NewListOffsetsRequestTopicPartition()
	rp.Timestamp = -1
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	kr, err = lister.Broker(nodeID).Request(ctx, req) // straight to s3seal, not routed by kgo
	if err != nil {
		t.Fatal(err)
	}
	if code := kr.(*kmsg.ListOffsetsResponse).Topics[0].Partitions[0].ErrorCode; code != kerr.TopicAuthorizationFailed.Code {
		t.Fatalf("alice's ListOffsets of bob's topic: %v", kerr.ErrorForCode(code))
	}
}

// Two clients naming the same transactional id name two transactions:
// bob's InitProducerID does not fence alice, and both commit.
func TestTransactionalIDsKeptApart(t *testing.T) {
	h := newHarness(t, 1, withSASL("PLAIN"))
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	alice := h.client(kgo.SASL(plain.Auth{User: "alice", Pass: "alice-secret"}.AsMechanism()), kgo.TransactionalID("shared"))
	if err := alice.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	if err := produceOne(t, alice, "a-txn"); err != nil {
		t.Fatal(err)
	}
	bob := h.client(kgo.SASL(plain.Auth{User: "bob", Pass: "bob-secret"}.AsMechanism()), kgo.TransactionalID("shared"))
	if err := bob.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	if err := produceOne(t, bob, "b-txn"); err != nil {
		t.Fatalf("bob: %v", err)
	}
	if err := bob.EndTransaction(ctx, kgo.TryCommit); err != nil {
		t.Fatalf("bob's commit: %v", err)
	}
	if err := alice.EndTransaction(ctx, kgo.TryCommit); err != nil {
		t.Fatalf("alice fenced by bob naming her transactional id: %v", err)
	}
}

// Access keys may hold a slash: the prefixes principals' transactional
// and group ids get must still keep them apart ("alice" naming "x/t" is
// not "alice/x" naming "t"), and a principal lists only its own groups.
func TestPrincipalsWithSlashesKeptApart(t *testing.T) {
	alice, other := &conn{principal: "alice"}, &conn{principal: "alice/x"}
	if a, o := *alice.txnID("x/t"), *other.txnID("t"); a == o {
		t.Fatalf("alice's transactional id x/t and alice/x's t both reach the brokers as %q", a)
	}
	if a, o := alice.groupID("x/g"), other.groupID("g"); a == o {
		t.Fatalf("alice's group x/g and alice/x's g both reach the brokers as %q", a)
	}
	if name, ok := alice.ownGroup(other.groupID("g")); ok {
		t.Fatalf("alice lists alice/x's group g as its own %q", name)
	}
	for _, c := range []*conn{alice, other, {principal: "a%2Fb"}, {principal: "a/b"}} {
		if name, ok := c.ownGroup(c.groupID("g/h")); !ok || name != "g/h" {
			t.Fatalf("%q does not find its own group back: %q %v", c.principal, name, ok)
		}
	}
	if (&conn{principal: "a%2Fb"}).groupID("g") == (&conn{principal: "a/b"}).groupID("g") {
		t.Fatal("principals a%2Fb and a/b share a prefix")
	}
}
