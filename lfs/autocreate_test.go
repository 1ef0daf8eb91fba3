package lfs

// Topics as Kafka's producers see them: the produce asks the broker to
// create a missing topic, waits while the broker creates it, and answers a
// 4xx naming the topic when the broker will not.

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/s3seal/s3seal/internal/kafkatest"
	"github.com/s3seal/s3seal/lfs/brokers"
)

func autoCluster(t *testing.T, opts ...kfake.Opt) *kfake.Cluster {
	t.Helper()
	c, err := kfake.NewCluster(append([]kfake.Opt{kfake.NumBrokers(1)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c
}

// consumeTopic reads one record of topic with a real Kafka client.
func consumeTopic(t *testing.T, c *kfake.Cluster, topic string) *kgo.Record {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(c.ListenAddrs()...), kgo.ConsumeTopics(topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("no record in %s", topic)
		}
		if recs := fs.Records(); len(recs) > 0 {
			return recs[0]
		}
	}
}

// A broker that creates topics on first use (auto.create.topics.enable)
// gets a produce to a new topic: the envelope lands in it.
func TestAutoCreatedTopic(t *testing.T) {
	c := autoCluster(t, kfake.AllowAutoTopicCreation())
	d := itDiscovery(t, brokers.Config{Static: c.ListenAddrs()})
	e := newEnv(t)
	h, url := e.itServe(d, nil)
	a := produce(t, url, "brand-new", randBytes(2000, 1), nil)
	if a.status != 200 {
		t.Fatalf("produce to a new topic: %d %s", a.status, a.body)
	}
	env := envelopeOf(t, a)
	if rec := consumeTopic(t, c, "brand-new"); !strings.Contains(string(rec.Value), env.Key) {
		t.Fatalf("record %s does not name %s", rec.Value, env.Key)
	}
	e.checkStorage(h, 0, env.Key)
}

// While the broker creates the topic it answers LEADER_NOT_AVAILABLE, for
// the topic or for its partition (no leader elected yet); the produce asks
// again (more often than the 3 broker attempts) and succeeds.
func TestTopicBeingCreatedIsWaitedFor(t *testing.T) {
	for _, onPartition := range []bool{false, true} {
		c := autoCluster(t, kfake.AllowAutoTopicCreation())
		var asked atomic.Int32
		c.ControlKey(kmsg.Metadata.Int16(), func(req kmsg.Request) (kmsg.Response, error, bool) {
			c.KeepControl()
			if asked.Add(1) > 5 {
				return nil, nil, false
			}
			r := req.(*kmsg.MetadataRequest)
			resp := r.ResponseKind().(*kmsg.MetadataResponse)
			for _, rt := range r.Topics {
				st := kmsg.NewMetadataResponseTopic()
				st.Topic, st.ErrorCode = rt.Topic, kerr.LeaderNotAvailable.Code
				if onPartition {
					sp := kmsg.NewMetadataResponseTopicPartition()
					sp.Leader, sp.ErrorCode = -1, kerr.LeaderNotAvailable.Code
					st.ErrorCode, st.Partitions = 0, append(st.Partitions, sp)
				}
				resp.Topics = append(resp.Topics, st)
			}
			return resp, nil, true
		})
		seen := kafkatest.WatchProduce(c)
		d := itDiscovery(t, brokers.Config{Static: c.ListenAddrs(), RetryBackoff: 20 * time.Millisecond})
		e := newEnv(t)
		_, url := e.itServe(d, nil)
		if a := produce(t, url, "slow-topic", randBytes(2000, 2), nil); a.status != 200 {
			t.Fatalf("partition-level %v: produce while the topic is created: %d %s", onPartition, a.status, a.body)
		}
		if asked.Load() <= 5 || len(seen.Nodes()) != 1 {
			t.Fatalf("partition-level %v: %d metadata requests, produce requests on %v", onPartition, asked.Load(), seen.Nodes())
		}
	}
}

// A broker that does not create topics: 404 unknown_topic naming the
// topic and the header, the blob removed.
func TestTopicRefusedIs4xx(t *testing.T) {
	c := autoCluster(t)
	d := itDiscovery(t, brokers.Config{Static: c.ListenAddrs()})
	e := newEnv(t)
	h, url := e.itServe(d, nil)
	a := produce(t, url, "nowhere", randBytes(2000, 3), nil)
	wantError(t, a, 404, "unknown_topic")
	if !strings.Contains(string(a.body), "nowhere") {
		t.Fatalf("message does not name the topic: %s", a.body)
	}
	e.checkStorage(h, 0)
}

// A topic the broker's ACLs do not let s3seal's Kafka user write: 403
// topic_not_authorized naming it, the blob removed.
func TestTopicNotAuthorizedIs403(t *testing.T) {
	c := autoCluster(t, kfake.SeedTopics(1, "open", "closed"), kfake.EnableSASL(), kfake.EnableACLs(),
		kfake.Superuser("PLAIN", "admin", "admin"),
		kfake.User("PLAIN", "lfs", "pw", kfake.ACL{Allow: true, Resource: kmsg.ACLResourceTypeTopic, Name: "open",
			Pattern: kmsg.ACLResourcePatternTypeLiteral, Operation: kmsg.ACLOperationAll}))
	m, err := brokers.SASL("PLAIN", "lfs", "pw")
	if err != nil {
		t.Fatal(err)
	}
	d := itDiscovery(t, brokers.Config{Static: c.ListenAddrs(), SASL: m})
	e := newEnv(t)
	h, url := e.itServe(d, nil)
	a := produce(t, url, "open", randBytes(2000, 4), nil)
	if a.status != 200 {
		t.Fatalf("produce to an allowed topic: %d %s", a.status, a.body)
	}
	kept := envelopeOf(t, a).Key
	a = produce(t, url, "closed", randBytes(2000, 5), nil)
	wantError(t, a, 403, "topic_not_authorized")
	if !strings.Contains(string(a.body), "closed") {
		t.Fatalf("message does not name the topic: %s", a.body)
	}
	e.checkStorage(h, 0, kept)
}

// A topic name the broker refuses (INVALID_TOPIC_EXCEPTION, such as a name
// it reserves): 400 invalid_topic naming it, the blob removed.
func TestTopicNameRefusedIs400(t *testing.T) {
	c := autoCluster(t, kfake.AllowAutoTopicCreation())
	c.ControlKey(kmsg.Metadata.Int16(), func(req kmsg.Request) (kmsg.Response, error, bool) {
		c.KeepControl()
		r := req.(*kmsg.MetadataRequest)
		if len(r.Topics) != 1 || r.Topics[0].Topic == nil || *r.Topics[0].Topic != "reserved" {
			return nil, nil, false
		}
		resp := r.ResponseKind().(*kmsg.MetadataResponse)
		st := kmsg.NewMetadataResponseTopic()
		st.Topic, st.ErrorCode = r.Topics[0].Topic, kerr.InvalidTopicException.Code
		resp.Topics = append(resp.Topics, st)
		return resp, nil, true
	})
	d := itDiscovery(t, brokers.Config{Static: c.ListenAddrs()})
	e := newEnv(t)
	h, url := e.itServe(d, nil)
	a := produce(t, url, "reserved", randBytes(2000, 6), nil)
	wantError(t, a, 400, "invalid_topic")
	if !strings.Contains(string(a.body), "reserved") {
		t.Fatalf("message does not name the topic: %s", a.body)
	}
	e.checkStorage(h, 0)
}
