package brokers

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/s3seal/s3seal/internal/kafkatest"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// produceOne sends a one-record Produce of testTopic/p to broker id.
func forwardProduce(t *testing.T, f *Forwarder, id, p int32) int16 {
	t.Helper()
	req := kmsg.NewPtrProduceRequest()
	req.SetVersion(9)
	req.Acks, req.TimeoutMillis = -1, 5000
	rt := kmsg.NewProduceRequestTopic()
	rt.Topic = testTopic
	rp := kmsg.NewProduceRequestTopicPartition()
	rp.Partition, rp.Records = p, recordBatch(nil, []byte("x"), nil, time.Now())
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	kr, err := f.Send(context.Background(), id, req)
	if err != nil {
		t.Fatal(err)
	}
	return kr.(*kmsg.ProduceResponse).Topics[0].Partitions[0].ErrorCode
}

// The forwarder routes as the HTTP API's produce does: the etcd lease
// owner first, the Kafka metadata leader for a partition without a lease,
// node ids resolved through etcd's snapshot.
func TestForwarderRoutesToLeaseOwnerThenLeader(t *testing.T) {
	c, te := etcdCluster(t) // partition 1 leased to node 2; 0 led by node 0, 2 by node 1
	seen := kafkatest.WatchProduce(c)
	d := newDiscovery(t, Config{EtcdEndpoints: []string{te.endpoint}})
	f := d.Forwarder()
	defer f.Close()
	ctx := context.Background()
	for p, want := range []int32{0, 2, 1} {
		id, err := f.Leader(ctx, testTopic, int32(p))
		if err != nil || id != want {
			t.Fatalf("partition %d: leader %d (%v), want %d", p, id, err, want)
		}
		if code := forwardProduce(t, f, id, int32(p)); code != 0 {
			t.Fatalf("partition %d: %v", p, kerr.ErrorForCode(code))
		}
	}
	if got := seen.Nodes(); !slices.Equal(got, []int32{0, 2, 1}) {
		t.Fatalf("produce requests on nodes %v", got)
	}
	// The lease wins over Kafka's leader (KafScale's brokers own what
	// they lease).
	te.putLease(t, 1, 0)
	if id, err := f.Leader(ctx, testTopic, 1); err != nil || id != 0 {
		t.Fatalf("partition 1 leased to node 0: leader %d (%v)", id, err)
	}
	if _, err := f.Leader(ctx, testTopic, 7); !errors.Is(err, kerr.UnknownTopicOrPartition) {
		t.Fatalf("a partition the topic lacks: %v", err)
	}
	// The versions every broker takes are known once one answered.
	v, err := f.Versions(ctx)
	if err != nil || v[kmsg.Produce.Int16()][1] < 9 {
		t.Fatalf("versions %v %v", v[kmsg.Produce.Int16()], err)
	}
}

// A broker that cannot be reached is ErrUnsent: nothing was sent.
func TestForwarderUnreachableBrokerUnsent(t *testing.T) {
	d := newDiscovery(t, Config{Static: []string{closedAddr(t)}})
	f := d.Forwarder()
	_, err := f.Send(context.Background(), AnyBroker, kmsg.NewPtrApiVersionsRequest())
	if !errors.Is(err, ErrUnsent) {
		t.Fatalf("%v, want ErrUnsent", err)
	}
	if err := f.Check(context.Background()); err == nil {
		t.Fatal("Check of an unreachable cluster passed")
	}
}
