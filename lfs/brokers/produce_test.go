package brokers

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/s3seal/s3seal/internal/kafkatest"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// etcdCluster is 3 kfake brokers listed in an embedded etcd; each leads
// one partition of testTopic: 0 -> node 0, 1 -> node 2, 2 -> node 1.
// Partition 1 also has its etcd lease (node 2).
func etcdCluster(t *testing.T) (*kfake.Cluster, *testEtcd) {
	t.Helper()
	c := newCluster(t, 3, 3)
	for p, node := range []int32{0, 2, 1} {
		if err := c.MoveTopicPartition(testTopic, int32(p), node); err != nil {
			t.Fatal(err)
		}
	}
	te := startEtcd(t)
	te.putSnapshot(t, c.ListenAddrs()...)
	te.putLease(t, 1, 2)
	return c, te
}

// The produce goes to the partition owner from its etcd lease: first try,
// one produce request, on node 2.
func TestRoutesToLeaseOwner(t *testing.T) {
	c, te := etcdCluster(t)
	seen := kafkatest.WatchProduce(c)
	d := newDiscovery(t, Config{EtcdEndpoints: []string{te.endpoint}})
	for i := 0; i < 3; i++ { // whichever broker Connect picked
		s := connect(t, d)
		if _, err := s.Produce(context.Background(), testTopic, 1, nil, []byte("x"), nil); err != nil {
			t.Fatal(err)
		}
	}
	if got := seen.Nodes(); !slices.Equal(got, []int32{2, 2, 2}) {
		t.Fatalf("produce requests on nodes %v, want only node 2", got)
	}
}

// A stale lease names a non-owner; it answers NOT_LEADER_OR_FOLLOWER while
// leadership moves (the lease is updated during the request), and the retry
// reads the lease again and goes to the current owner.
func TestStaleLeaseThenOwner(t *testing.T) {
	c, te := etcdCluster(t)
	te.putLease(t, 1, 0) // stale: Kafka's leader is node 2
	var seen []int32
	c.ControlKey(kmsg.Produce.Int16(), func(kmsg.Request) (kmsg.Response, error, bool) {
		c.KeepControl()
		n := c.CurrentNode()
		seen = append(seen, n)
		if n == 0 {
			te.putLease(t, 1, 2) // the lease moves; node 0 answers not-leader itself
		}
		return nil, nil, false
	})
	d := newDiscovery(t, Config{EtcdEndpoints: []string{te.endpoint}})
	s := connect(t, d)
	out, err := s.Produce(context.Background(), testTopic, 1, nil, []byte("x"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if out.Partition != 1 || !slices.Equal(seen, []int32{0, 2}) {
		t.Fatalf("produced %+v via nodes %v, want node 0 then 2", out, seen)
	}
}

// Static brokers: the owner is the Kafka metadata leader, and leadership
// moving during the request (node 1 answers not-leader, partition moved to
// node 2) sends the retry to the new leader. The static list names only
// node 0.
func TestStaticRoutesToMetadataLeaderAndFollowsMove(t *testing.T) {
	c := newCluster(t, 3, 3)
	if err := c.MoveTopicPartition(testTopic, 0, 1); err != nil {
		t.Fatal(err)
	}
	var seen []int32
	moved := make(chan struct{})
	c.ControlKey(kmsg.Produce.Int16(), func(req kmsg.Request) (kmsg.Response, error, bool) {
		c.KeepControl()
		n := c.CurrentNode()
		seen = append(seen, n)
		if n == 1 && len(seen) == 1 {
			go func() { _ = c.MoveTopicPartition(testTopic, 0, 2); close(moved) }()
			return produceError(req, kerr.NotLeaderForPartition.Code), nil, true
		}
		return nil, nil, false
	})
	d := newDiscovery(t, Config{Static: c.ListenAddrs()[:1], RetryBackoff: 200 * time.Millisecond})
	s := connect(t, d)
	if _, err := s.Produce(context.Background(), testTopic, 0, nil, []byte("x"), nil); err != nil {
		t.Fatal(err)
	}
	<-moved
	if !slices.Equal(seen, []int32{1, 2}) {
		t.Fatalf("produce requests on nodes %v, want 1 then 2", seen)
	}
}

// Each retriable answer is retried on the current owner; once accepted the
// produce succeeds.
func TestRetriableAnswersRetried(t *testing.T) {
	for _, code := range []int16{kerr.NotLeaderForPartition.Code, kerr.LeaderNotAvailable.Code,
		kerr.FencedLeaderEpoch.Code, kerr.UnknownLeaderEpoch.Code} {
		c := newCluster(t, 1, 1)
		n := 0
		c.ControlKey(kmsg.Produce.Int16(), func(req kmsg.Request) (kmsg.Response, error, bool) {
			c.KeepControl()
			n++
			if n <= 2 {
				return produceError(req, code), nil, true
			}
			return nil, nil, false
		})
		d := newDiscovery(t, Config{Static: c.ListenAddrs()})
		s := connect(t, d)
		if _, err := s.Produce(context.Background(), testTopic, 0, nil, []byte("x"), nil); err != nil {
			t.Fatalf("code %d: %v", code, err)
		}
		if n != 3 {
			t.Fatalf("code %d: %d produce requests, want 3", code, n)
		}
	}
}

// No broker accepts the record: exactly 3 attempts, ErrNoBroker, and no
// wait after the last attempt.
func TestNoOwnerAcceptsIsNoBroker(t *testing.T) {
	c := newCluster(t, 1, 1)
	n := 0
	c.ControlKey(kmsg.Produce.Int16(), func(req kmsg.Request) (kmsg.Response, error, bool) {
		c.KeepControl()
		n++
		return produceError(req, kerr.NotLeaderForPartition.Code), nil, true
	})
	const backoff = 300 * time.Millisecond
	d := newDiscovery(t, Config{Static: c.ListenAddrs(), RetryBackoff: backoff})
	s := connect(t, d)
	start := time.Now()
	_, err := s.Produce(context.Background(), testTopic, 0, nil, []byte("x"), nil)
	took := time.Since(start)
	if !errors.Is(err, ErrNoBroker) || errors.Is(err, ErrSentThenFailed) {
		t.Fatalf("Produce = %v, want ErrNoBroker", err)
	}
	if n != maxAttempts {
		t.Fatalf("%d produce requests, want %d", n, maxAttempts)
	}
	if took < 2*backoff || took >= 3*backoff {
		t.Fatalf("took %s, want two waits of %s and none after the last attempt", took, backoff)
	}
}

// The wait between attempts ends when the request is cancelled.
func TestRetryWaitEndsOnCancel(t *testing.T) {
	c := newCluster(t, 1, 1)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	n := 0
	c.ControlKey(kmsg.Produce.Int16(), func(req kmsg.Request) (kmsg.Response, error, bool) {
		c.KeepControl()
		n++
		time.AfterFunc(100*time.Millisecond, cancel)
		return produceError(req, kerr.NotLeaderForPartition.Code), nil, true
	})
	d := newDiscovery(t, Config{Static: c.ListenAddrs(), RetryBackoff: 30 * time.Second})
	s := connect(t, d)
	start := time.Now()
	_, err := s.Produce(ctx, testTopic, 0, nil, []byte("x"), nil)
	if !errors.Is(err, ErrNoBroker) || !errors.Is(err, context.Canceled) {
		t.Fatalf("Produce = %v, want ErrNoBroker and context.Canceled", err)
	}
	if took := time.Since(start); took > 5*time.Second || n != 1 {
		t.Fatalf("returned after %s and %d attempts", took, n)
	}
}

// Sent, then failed for another reason: a partition error in the Produce
// response, or the connection dropped before the answer.
func TestSentThenFailed(t *testing.T) {
	c := newCluster(t, 1, 1)
	d := newDiscovery(t, Config{Static: c.ListenAddrs()})

	c.ControlKey(kmsg.Produce.Int16(), func(req kmsg.Request) (kmsg.Response, error, bool) {
		return produceError(req, kerr.KafkaStorageError.Code), nil, true
	})
	s := connect(t, d)
	_, err := s.Produce(context.Background(), testTopic, 0, nil, []byte("x"), nil)
	if !errors.Is(err, ErrSentThenFailed) || !errors.Is(err, kerr.KafkaStorageError) {
		t.Fatalf("partition error: Produce = %v, want ErrSentThenFailed", err)
	}

	c.ControlKey(kmsg.Produce.Int16(), func(kmsg.Request) (kmsg.Response, error, bool) {
		return nil, errors.New("drop the connection"), true
	})
	s = connect(t, d)
	if _, err := s.Produce(context.Background(), testTopic, 0, nil, []byte("x"), nil); !errors.Is(err, ErrSentThenFailed) {
		t.Fatalf("dropped connection: Produce = %v, want ErrSentThenFailed", err)
	}
}

// Unknown topic or partition: nothing sent, neither sentinel.
func TestUnknownTopicOrPartition(t *testing.T) {
	c := newCluster(t, 1, 2)
	seen := kafkatest.WatchProduce(c)
	d := newDiscovery(t, Config{Static: c.ListenAddrs()})
	s := connect(t, d)
	for _, tc := range []struct {
		topic string
		p     int32
	}{{"missing", 0}, {testTopic, 2}} {
		_, err := s.Produce(context.Background(), tc.topic, tc.p, nil, []byte("x"), nil)
		if !errors.Is(err, kerr.UnknownTopicOrPartition) || errors.Is(err, ErrNoBroker) || errors.Is(err, ErrSentThenFailed) {
			t.Fatalf("%s/%d: Produce = %v", tc.topic, tc.p, err)
		}
	}
	if len(seen.Nodes()) != 0 {
		t.Fatal("a produce request was sent")
	}
}

// One broker connection per produce: Connect, Check and Produce share it
// when the session's broker owns the partition (and for a record without a
// key, which prefers such a partition); a remote owner costs one more.
func TestOneConnectionPerProduce(t *testing.T) {
	c, te := etcdCluster(t)
	dc := &kafkatest.Dialer{}
	d := newDiscovery(t, Config{EtcdEndpoints: []string{te.endpoint}, Dial: dc.Dial})
	for i := 0; i < 3; i++ {
		before := dc.Total()
		s := connect(t, d)
		if err := s.Check(context.Background()); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Produce(context.Background(), testTopic, -1, nil, []byte("x"), nil); err != nil {
			t.Fatal(err)
		}
		if n := dc.Total() - before; n != 1 {
			t.Fatalf("no key: %d connections for one produce", n)
		}
		s.Close()
	}
	for i := 0; i < 3; i++ {
		before, owner := dc.Total(), c.ListenAddrs()[2]
		ownerBefore := dc.To(owner)
		s := connect(t, d)
		onOwner := dc.To(owner) > ownerBefore
		if err := s.Check(context.Background()); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Produce(context.Background(), testTopic, 1, nil, []byte("x"), nil); err != nil {
			t.Fatal(err)
		}
		want := 2
		if onOwner {
			want = 1
		}
		if n := dc.Total() - before; n != want {
			t.Fatalf("partition 1, session on owner %v: %d connections, want %d", onOwner, n, want)
		}
		s.Close()
	}
}

// Check finds a dead connection and connects again before the produce.
func TestCheckReconnectsDeadConnection(t *testing.T) {
	c := newCluster(t, 1, 1)
	dc := &kafkatest.Dialer{}
	d := newDiscovery(t, Config{Static: c.ListenAddrs(), Dial: dc.Dial})
	s := connect(t, d)
	c.ControlKey(kmsg.ApiVersions.Int16(), func(kmsg.Request) (kmsg.Response, error, bool) {
		return nil, errors.New("drop"), true // closes the session's connection
	})
	if err := s.Check(context.Background()); err != nil {
		t.Fatalf("Check: %v", err)
	}
	if dc.Total() != 2 {
		t.Fatalf("%d dials, want a reconnect", dc.Total())
	}
	if _, err := s.Produce(context.Background(), testTopic, 0, nil, []byte("x"), nil); err != nil {
		t.Fatal(err)
	}
	if dc.Total() != 2 {
		t.Fatalf("%d dials after produce", dc.Total())
	}
	c.Close() // broker gone: Check fails
	if err := s.Check(context.Background()); !errors.Is(err, ErrNoBroker) {
		t.Fatalf("Check with broker gone = %v", err)
	}
}
