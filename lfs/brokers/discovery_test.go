package brokers

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/s3seal/s3seal/internal/kafkatest"
	"github.com/twmb/franz-go/pkg/kgo"
)

// Brokers come from etcd's snapshot when no static list is set, and the
// record is readable by a real Kafka client (key, value, headers).
func TestDiscoveredBrokersUsed(t *testing.T) {
	c := newCluster(t, 2, 3)
	te := startEtcd(t)
	te.putSnapshot(t, c.ListenAddrs()...)
	dc := &kafkatest.Dialer{}
	d := newDiscovery(t, Config{EtcdEndpoints: []string{te.endpoint}, Dial: dc.Dial})

	s := connect(t, d)
	if err := s.Check(context.Background()); err != nil {
		t.Fatal(err)
	}
	key := []byte("order-42")
	out, err := s.Produce(context.Background(), testTopic, -1, key, []byte("envelope"), map[string][]byte{"h": []byte("v")})
	if err != nil {
		t.Fatal(err)
	}
	if want := keyPartition(key, 3); out.Partition != want || out.Offset != 0 {
		t.Fatalf("produced %+v, want partition %d offset 0", out, want)
	}
	if dc.Total() == 0 {
		t.Fatal("no broker from etcd was dialed")
	}

	cl, err := kgo.NewClient(kgo.SeedBrokers(c.ListenAddrs()...), kgo.ConsumeTopics(testTopic))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	fs := cl.PollFetches(ctx)
	if err := fs.Err0(); err != nil {
		t.Fatal(err)
	}
	recs := fs.Records()
	if len(recs) != 1 {
		t.Fatalf("%d records", len(recs))
	}
	r := recs[0]
	if string(r.Key) != "order-42" || string(r.Value) != "envelope" || r.Partition != out.Partition ||
		len(r.Headers) != 1 || r.Headers[0].Key != "h" || string(r.Headers[0].Value) != "v" {
		t.Fatalf("record %+v", r)
	}
}

// A static list wins over etcd: etcd is never needed (here it is down) and
// only the static broker is dialed.
func TestStaticListWins(t *testing.T) {
	static := newCluster(t, 1, 1)
	other := newCluster(t, 1, 1)
	te := startEtcd(t)
	te.putSnapshot(t, other.ListenAddrs()...)
	dc := &kafkatest.Dialer{}
	d := newDiscovery(t, Config{
		Static: static.ListenAddrs(), EtcdEndpoints: []string{te.endpoint},
		Dial: dc.Dial, CacheTTL: time.Millisecond,
	})
	te.stop()
	s := connect(t, d)
	if err := s.Check(context.Background()); err != nil {
		t.Fatalf("Check with static brokers and etcd down: %v", err)
	}
	if _, err := s.Produce(context.Background(), testTopic, 0, nil, []byte("x"), nil); err != nil {
		t.Fatal(err)
	}
	if dc.To(other.ListenAddrs()[0]) != 0 || dc.To(static.ListenAddrs()[0]) != 1 {
		t.Fatalf("dials %v", dc.Counts())
	}
}

// etcd lists no brokers (after having listed some): there is no broker,
// even though the cache still holds the old list.
func TestEtcdListsNoBrokerIsNoBroker(t *testing.T) {
	c := newCluster(t, 1, 1)
	te := startEtcd(t)
	te.putSnapshot(t, c.ListenAddrs()...)
	d := newDiscovery(t, Config{EtcdEndpoints: []string{te.endpoint}})
	s := connect(t, d)

	te.putSnapshot(t) // brokers scaled to zero
	if _, err := d.Connect(context.Background()); !errors.Is(err, ErrNoBroker) {
		t.Fatalf("Connect = %v, want ErrNoBroker", err)
	}
	if err := s.Check(context.Background()); !errors.Is(err, ErrNoBroker) {
		t.Fatalf("Check = %v, want ErrNoBroker", err)
	}
	te.put(t, snapshotKey, `{"Brokers":null}`)
	if _, err := d.Connect(context.Background()); !errors.Is(err, ErrNoBroker) {
		t.Fatalf("Connect with null brokers = %v, want ErrNoBroker", err)
	}
}

// No snapshot at all: no broker.
func TestNoSnapshotIsNoBroker(t *testing.T) {
	te := startEtcd(t)
	d := newDiscovery(t, Config{EtcdEndpoints: []string{te.endpoint}})
	if _, err := d.Connect(context.Background()); !errors.Is(err, ErrNoBroker) {
		t.Fatalf("Connect = %v, want ErrNoBroker", err)
	}
}

// etcd down: the cache serves while the TTL since the last successful read
// has not passed (a blip), and failed reads do not refresh it: past the TTL
// Connect, Check and Produce all answer ErrNoBroker and nothing is sent.
func TestEtcdOutageCacheTTL(t *testing.T) {
	c := newCluster(t, 1, 1)
	seen := kafkatest.WatchProduce(c)
	te := startEtcd(t)
	te.putSnapshot(t, c.ListenAddrs()...)
	const ttl = 1500 * time.Millisecond
	d := newDiscovery(t, Config{EtcdEndpoints: []string{te.endpoint}, CacheTTL: ttl})
	s := connect(t, d) // last successful read
	okAt := time.Now()

	te.stop()
	// Blip, within the TTL: a new session and a produce still work.
	s2 := connect(t, d)
	if err := s2.Check(context.Background()); err != nil {
		t.Fatalf("Check within TTL: %v", err)
	}
	if _, err := s2.Produce(context.Background(), testTopic, 0, nil, []byte("x"), nil); err != nil {
		t.Fatalf("Produce within TTL: %v", err)
	}
	if time.Since(okAt) >= ttl {
		t.Skip("machine too slow for this TTL")
	}

	time.Sleep(time.Until(okAt.Add(ttl + 50*time.Millisecond)))
	if _, err := d.Connect(context.Background()); !errors.Is(err, ErrNoBroker) {
		t.Fatalf("Connect past TTL = %v, want ErrNoBroker", err)
	}
	if err := s.Check(context.Background()); !errors.Is(err, ErrNoBroker) {
		t.Fatalf("Check past TTL = %v, want ErrNoBroker", err)
	}
	before := len(seen.Nodes())
	if _, err := s.Produce(context.Background(), testTopic, 0, nil, []byte("x"), nil); !errors.Is(err, ErrNoBroker) {
		t.Fatalf("Produce past TTL = %v, want ErrNoBroker", err)
	}
	if n := len(seen.Nodes()); n != before {
		t.Fatalf("%d produce requests sent past the TTL", n-before)
	}
}

// etcd down from the start: no cache, no broker.
func TestEtcdDownWithoutCacheIsNoBroker(t *testing.T) {
	d := newDiscovery(t, Config{EtcdEndpoints: []string{closedAddr(t)}})
	if _, err := d.Connect(context.Background()); !errors.Is(err, ErrNoBroker) {
		t.Fatalf("Connect = %v, want ErrNoBroker", err)
	}
}

// A broker listed in etcd (or statically) that cannot be reached: Connect
// fails with ErrNoBroker, before the caller writes anything.
func TestUnreachableListedBrokerIsNoBroker(t *testing.T) {
	te := startEtcd(t)
	dead := closedAddr(t)
	te.putSnapshot(t, dead)
	dc := &kafkatest.Dialer{}
	d := newDiscovery(t, Config{EtcdEndpoints: []string{te.endpoint}, Dial: dc.Dial})
	if _, err := d.Connect(context.Background()); !errors.Is(err, ErrNoBroker) {
		t.Fatalf("Connect = %v, want ErrNoBroker", err)
	}
	if dc.To(dead) != 1 {
		t.Fatalf("dials %v", dc.Counts())
	}
	ds := newDiscovery(t, Config{Static: []string{dead}})
	if _, err := ds.Connect(context.Background()); !errors.Is(err, ErrNoBroker) {
		t.Fatalf("static Connect = %v, want ErrNoBroker", err)
	}

	// One dead, one live: the live one is used.
	c := newCluster(t, 1, 1)
	d2 := newDiscovery(t, Config{Static: []string{dead, c.ListenAddrs()[0]}})
	for i := 0; i < 2; i++ {
		s := connect(t, d2)
		if s.conn.addr != c.ListenAddrs()[0] {
			t.Fatalf("connected to %s", s.conn.addr)
		}
	}
}
