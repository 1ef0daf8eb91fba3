package lfs

import (
	"net"
	"strconv"
	"sync/atomic"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/s3seal/s3seal/lfs/brokers"
)

// Every Kafka topic has a partition 0, so a broker that does not create
// topics answering UNKNOWN_TOPIC_OR_PARTITION for partition 0 of a topic
// means the topic does not exist: 404 unknown_topic, as without a
// partition, with nothing stored. A partition above the topic's last is
// 400 invalid_partition.
func TestPartitionZeroOfUnknownTopicIs404(t *testing.T) {
	c := autoCluster(t, kfake.SeedTopics(1, "known"))
	d := itDiscovery(t, brokers.Config{Static: c.ListenAddrs()})
	e := newEnv(t)
	var stored atomic.Int32
	h, url := e.itServe(d, func() { stored.Add(1) })
	wantError(t, produce(t, url, "invented", randBytes(2000, 8), map[string]string{"X-Kafka-Partition": "0"}), 404, "unknown_topic")
	wantError(t, doJSON(t, "POST", url+"/lfs/uploads", map[string]any{"topic": "invented", "partition": 0, "size_bytes": 1000}), 404, "unknown_topic")
	wantError(t, produce(t, url, "known", randBytes(2000, 9), map[string]string{"X-Kafka-Partition": "1"}), 400, "invalid_partition")
	wantError(t, doJSON(t, "POST", url+"/lfs/uploads", map[string]any{"topic": "known", "partition": 1, "size_bytes": 1000}), 400, "invalid_partition")
	if n := stored.Load(); n != 0 {
		t.Fatalf("%d blobs reached storage", n)
	}
	e.checkStorage(h, 0)
}

// The same refusal from the Produce request itself (the topic deleted
// after the Metadata check): for partition 0 it is 404 unknown_topic, for
// partition 1 400 invalid_partition; the blob is removed either way.
func TestProduceRefusalOfPartitionZeroIs404(t *testing.T) {
	for _, tc := range []struct {
		partition int
		status    int
		api       string
	}{
		{0, 404, "unknown_topic"},
		{1, 400, "invalid_partition"},
	} {
		c := autoCluster(t, kfake.SeedTopics(2, "doomed"))
		c.ControlKey(kmsg.Produce.Int16(), func(req kmsg.Request) (kmsg.Response, error, bool) {
			return itProduceError(req, kerr.UnknownTopicOrPartition.Code), nil, true
		})
		d := itDiscovery(t, brokers.Config{Static: c.ListenAddrs()})
		e := newEnv(t)
		h, url := e.itServe(d, nil)
		a := produce(t, url, "doomed", randBytes(2000, 7), map[string]string{"X-Kafka-Partition": strconv.Itoa(tc.partition)})
		wantError(t, a, tc.status, tc.api)
		e.checkStorage(h, 0)
	}
}

// A broker whose metadata lists the topic but not partition 0 (not Kafka's
// way, but a proxy or another implementation may answer so): the topic
// exists, so a record for partition 0 is 400 invalid_partition, not 404
// unknown_topic, with nothing stored; a partition it lists is served.
func TestListedTopicWithoutThePartitionIs400(t *testing.T) {
	c := autoCluster(t, kfake.SeedTopics(2, "odd"))
	host, port, err := net.SplitHostPort(c.ListenAddrs()[0])
	if err != nil {
		t.Fatal(err)
	}
	pn, err := strconv.Atoi(port)
	if err != nil {
		t.Fatal(err)
	}
	c.ControlKey(kmsg.Metadata.Int16(), func(req kmsg.Request) (kmsg.Response, error, bool) {
		c.KeepControl()
		r := req.(*kmsg.MetadataRequest)
		if len(r.Topics) != 1 || r.Topics[0].Topic == nil || *r.Topics[0].Topic != "odd" {
			return nil, nil, false
		}
		resp := r.ResponseKind().(*kmsg.MetadataResponse)
		b := kmsg.NewMetadataResponseBroker()
		b.NodeID, b.Host, b.Port = 0, host, int32(pn)
		resp.Brokers = append(resp.Brokers, b)
		st := kmsg.NewMetadataResponseTopic()
		st.Topic = r.Topics[0].Topic
		sp := kmsg.NewMetadataResponseTopicPartition()
		sp.Partition, sp.Leader = 1, 0
		st.Partitions = append(st.Partitions, sp)
		resp.Topics = append(resp.Topics, st)
		return resp, nil, true
	})
	d := itDiscovery(t, brokers.Config{Static: c.ListenAddrs()})
	e := newEnv(t)
	h, url := e.itServe(d, nil)
	wantError(t, produce(t, url, "odd", randBytes(2000, 8), map[string]string{"X-Kafka-Partition": "0"}), 400, "invalid_partition")
	e.checkStorage(h, 0)
	env := envelopeOf(t, produce(t, url, "odd", randBytes(2000, 9), map[string]string{"X-Kafka-Partition": "1"}))
	e.checkStorage(h, 0, env.Key)
}
