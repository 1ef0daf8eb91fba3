package brokers

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net"
	"net/url"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kmsg"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/server/v3/embed"
	"go.uber.org/zap"
)

const testTopic = "lfs-topic"

// newCluster starts a kfake cluster of n brokers (node i listens on
// ListenAddrs()[i]) with testTopic of parts partitions.
func newCluster(t *testing.T, n int, parts int32) *kfake.Cluster {
	t.Helper()
	c, err := kfake.NewCluster(kfake.NumBrokers(n), kfake.SeedTopics(parts, testTopic))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c
}

// testEtcd is an embedded etcd on loopback.
type testEtcd struct {
	e        *embed.Etcd
	endpoint string
	cli      *clientv3.Client
	stopOnce sync.Once
}

func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

func startEtcd(t *testing.T) *testEtcd {
	t.Helper()
	cfg := embed.NewConfig()
	cfg.Dir = t.TempDir()
	cfg.ZapLoggerBuilder = embed.NewZapLoggerBuilder(zap.NewNop())
	cu, _ := url.Parse("http://127.0.0.1:" + strconv.Itoa(freePort(t)))
	pu, _ := url.Parse("http://127.0.0.1:" + strconv.Itoa(freePort(t)))
	cfg.ListenClientUrls, cfg.AdvertiseClientUrls = []url.URL{*cu}, []url.URL{*cu}
	cfg.ListenPeerUrls, cfg.AdvertisePeerUrls = []url.URL{*pu}, []url.URL{*pu}
	cfg.InitialCluster = cfg.InitialClusterFromName(cfg.Name)
	e, err := embed.StartEtcd(cfg)
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-e.Server.ReadyNotify():
	case <-time.After(20 * time.Second):
		e.Close()
		t.Fatal("etcd did not start")
	}
	cli, err := clientv3.New(clientv3.Config{Endpoints: []string{cu.String()}, DialTimeout: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	te := &testEtcd{e: e, endpoint: cu.String(), cli: cli}
	t.Cleanup(te.stop)
	return te
}

// stop simulates an etcd outage: the server goes away.
func (te *testEtcd) stop() {
	te.stopOnce.Do(func() {
		te.cli.Close()
		te.e.Close()
	})
}

func (te *testEtcd) put(t *testing.T, key, value string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if _, err := te.cli.Put(ctx, key, value); err != nil {
		t.Fatal(err)
	}
}

// putSnapshot writes KafScale's snapshot listing the given brokers (node id
// = index) in the shape the operator writes (Go field names).
func (te *testEtcd) putSnapshot(t *testing.T, addrs ...string) {
	t.Helper()
	type b struct {
		NodeID int32
		Host   string
		Port   int32
		Rack   *string
	}
	snap := struct {
		ClusterID string
		Brokers   []b
		Topics    []any
	}{ClusterID: "test", Brokers: []b{}}
	for i, a := range addrs {
		h, p, _ := net.SplitHostPort(a)
		port, _ := strconv.Atoi(p)
		snap.Brokers = append(snap.Brokers, b{NodeID: int32(i), Host: h, Port: int32(port)})
	}
	raw, _ := json.Marshal(snap)
	te.put(t, snapshotKey, string(raw))
}

func (te *testEtcd) putLease(t *testing.T, partition, node int32) {
	t.Helper()
	te.put(t, fmt.Sprintf("%s%s/%d", leasePrefix, testTopic, partition), strconv.Itoa(int(node)))
}

// produceError answers a Produce request with code on every partition.
func produceError(req kmsg.Request, code int16) kmsg.Response {
	preq := req.(*kmsg.ProduceRequest)
	resp := preq.ResponseKind().(*kmsg.ProduceResponse)
	for _, rt := range preq.Topics {
		st := kmsg.NewProduceResponseTopic()
		st.Topic = rt.Topic
		for _, rp := range rt.Partitions {
			sp := kmsg.NewProduceResponseTopicPartition()
			sp.Partition = rp.Partition
			sp.ErrorCode = code
			st.Partitions = append(st.Partitions, sp)
		}
		resp.Topics = append(resp.Topics, st)
	}
	return resp
}

// newDiscovery builds a Discovery with test-friendly defaults.
func newDiscovery(t *testing.T, cfg Config) *Discovery {
	t.Helper()
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.EtcdTimeout == 0 {
		cfg.EtcdTimeout = 300 * time.Millisecond
	}
	if cfg.RetryBackoff == 0 {
		cfg.RetryBackoff = 50 * time.Millisecond
	}
	d, err := New(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	return d
}

func connect(t *testing.T, d *Discovery) *Session {
	t.Helper()
	s, err := d.Connect(context.Background())
	if err != nil {
		t.Fatalf("Connect: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// closedAddr is a loopback address nothing listens on.
func closedAddr(t *testing.T) string {
	return "127.0.0.1:" + strconv.Itoa(freePort(t))
}
