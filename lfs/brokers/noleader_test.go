package brokers

import (
	"context"
	"net"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// A partition listed with no leader (leader -1) but no error code, as a
// broker may list one whose leader is not elected yet, is waited for like
// LEADER_NOT_AVAILABLE: no Produce request is sent to a broker picked
// blindly (using up the 3 attempts on non-leaders); once a leader is
// listed the record goes to it.
func TestPartitionWithoutLeaderIsWaitedFor(t *testing.T) {
	c := newCluster(t, 2, 1)
	if err := c.MoveTopicPartition(testTopic, 0, 0); err != nil {
		t.Fatal(err)
	}
	var asked atomic.Int32
	c.ControlKey(kmsg.Metadata.Int16(), func(req kmsg.Request) (kmsg.Response, error, bool) {
		c.KeepControl()
		if asked.Add(1) > 6 {
			return nil, nil, false
		}
		r := req.(*kmsg.MetadataRequest)
		resp := r.ResponseKind().(*kmsg.MetadataResponse)
		for i, a := range c.ListenAddrs() {
			b := kmsg.NewMetadataResponseBroker()
			b.NodeID = int32(i)
			b.Host, b.Port = "127.0.0.1", int32(portOf(t, a))
			resp.Brokers = append(resp.Brokers, b)
		}
		st := kmsg.NewMetadataResponseTopic()
		st.Topic = r.Topics[0].Topic
		sp := kmsg.NewMetadataResponseTopicPartition()
		sp.Leader = -1
		st.Partitions = append(st.Partitions, sp)
		resp.Topics = append(resp.Topics, st)
		return resp, nil, true
	})
	var produced []int32
	c.ControlKey(kmsg.Produce.Int16(), func(kmsg.Request) (kmsg.Response, error, bool) {
		c.KeepControl()
		produced = append(produced, c.CurrentNode())
		return nil, nil, false
	})
	// The session's broker is node 1, not the leader.
	d := newDiscovery(t, Config{Static: []string{c.ListenAddrs()[0], c.ListenAddrs()[1]}, RetryBackoff: 20 * time.Millisecond})
	d.next.Store(0) // Connect starts at index 1
	s := connect(t, d)
	if _, err := s.Produce(context.Background(), testTopic, 0, nil, []byte("x"), nil); err != nil {
		t.Fatalf("Produce = %v (produce requests on nodes %v)", err, produced)
	}
	if len(produced) != 1 || produced[0] != 0 {
		t.Fatalf("produce requests on nodes %v, want one on the leader 0", produced)
	}
}

func portOf(t *testing.T, addr string) int {
	t.Helper()
	_, p, err := net.SplitHostPort(addr)
	if err != nil {
		t.Fatal(err)
	}
	n, _ := strconv.Atoi(p)
	return n
}
