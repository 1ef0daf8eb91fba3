package lfs

// Helpers for the integration tests (integration_test.go): the real HTTP
// handler over a real sealstore, with a real brokers.Discovery on kfake
// clusters and an embedded etcd. The etcd and kfake helpers follow
// lfs/brokers' test helpers (test files cannot be imported across
// packages).

import (
	"context"
	"encoding/json"
	"log/slog"
	"net"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/server/v3/embed"
	"go.uber.org/zap"

	"github.com/s3seal/s3seal/backend"
	"github.com/s3seal/s3seal/lfs/brokers"
	"github.com/s3seal/s3seal/sealstore"
)

const itTopic = "orders"

// KafScale's etcd layout (lfs/brokers/doc.go).
const (
	itSnapshotKey = "/kafscale/metadata/snapshot"
	itLeasePrefix = "/kafscale/partition-leases/"
)

// itCluster starts a kfake cluster of n brokers with itTopic of parts
// partitions; leaders[p], when given, is the node leading partition p.
func itCluster(t *testing.T, n int, parts int32, leaders ...int32) *kfake.Cluster {
	t.Helper()
	c, err := kfake.NewCluster(kfake.NumBrokers(n), kfake.SeedTopics(parts, itTopic))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	for p, node := range leaders {
		if err := c.MoveTopicPartition(itTopic, int32(p), node); err != nil {
			t.Fatal(err)
		}
	}
	return c
}

// itEtcd is an embedded etcd on loopback; stop is the outage.
type itEtcd struct {
	e        *embed.Etcd
	endpoint string
	cli      *clientv3.Client
	once     sync.Once
}

func itFreeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

func startItEtcd(t *testing.T) *itEtcd {
	t.Helper()
	cfg := embed.NewConfig()
	cfg.Dir = t.TempDir()
	cfg.ZapLoggerBuilder = embed.NewZapLoggerBuilder(zap.NewNop())
	cu, _ := url.Parse("http://" + itFreeAddr(t))
	pu, _ := url.Parse("http://" + itFreeAddr(t))
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
	cli, err := clientv3.New(clientv3.Config{Endpoints: []string{cu.String()}, DialTimeout: 2 * time.Second, Logger: zap.NewNop()})
	if err != nil {
		t.Fatal(err)
	}
	te := &itEtcd{e: e, endpoint: cu.String(), cli: cli}
	t.Cleanup(te.stop)
	return te
}

func (te *itEtcd) stop() {
	te.once.Do(func() {
		te.cli.Close()
		te.e.Close()
	})
}

func (te *itEtcd) put(t *testing.T, key, value string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if _, err := te.cli.Put(ctx, key, value); err != nil {
		t.Fatal(err)
	}
}

// snapshot lists the brokers at addrs (node id = index), in the shape
// KafScale's operator writes.
func (te *itEtcd) snapshot(t *testing.T, addrs ...string) {
	t.Helper()
	type b struct {
		NodeID int32
		Host   string
		Port   int32
	}
	snap := struct {
		ClusterID string
		Brokers   []b
	}{ClusterID: "it", Brokers: []b{}}
	for i, a := range addrs {
		h, p, _ := net.SplitHostPort(a)
		port, _ := strconv.Atoi(p)
		snap.Brokers = append(snap.Brokers, b{NodeID: int32(i), Host: h, Port: int32(port)})
	}
	raw, _ := json.Marshal(snap)
	te.put(t, itSnapshotKey, string(raw))
}

func (te *itEtcd) lease(t *testing.T, partition, node int32) {
	t.Helper()
	te.put(t, itLeasePrefix+itTopic+"/"+strconv.Itoa(int(partition)), strconv.Itoa(int(node)))
}

// itProduceError answers a Produce request with code on every partition.
func itProduceError(req kmsg.Request, code int16) kmsg.Response {
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

// itDiscovery is a real Discovery with short test timeouts.
func itDiscovery(t *testing.T, cfg brokers.Config) *brokers.Discovery {
	t.Helper()
	cfg.Logger = slog.New(slog.DiscardHandler)
	if cfg.EtcdTimeout == 0 {
		cfg.EtcdTimeout = 300 * time.Millisecond
	}
	if cfg.RetryBackoff == 0 {
		cfg.RetryBackoff = 50 * time.Millisecond
	}
	cfg.DialTimeout, cfg.RequestTimeout = 2*time.Second, 5*time.Second
	d, err := brokers.New(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	return d
}

// hookBE calls onBlob after each blob (a key under the namespace) is
// written to or completed in the backend: the upload is done, the produce
// not yet.
type hookBE struct {
	backend.Store
	onBlob func()
}

func (b *hookBE) PutObject(ctx context.Context, in backend.PutInput) (backend.PutOutput, error) {
	out, err := b.Store.PutObject(ctx, in)
	if err == nil && strings.HasPrefix(in.Key, "default/") && b.onBlob != nil {
		b.onBlob()
	}
	return out, err
}

func (b *hookBE) CompleteMultipartUpload(ctx context.Context, in backend.CompleteMultipartInput) (backend.CompleteMultipartOutput, error) {
	out, err := b.Store.CompleteMultipartUpload(ctx, in)
	if err == nil && strings.HasPrefix(in.Key, "default/") && b.onBlob != nil {
		b.onBlob()
	}
	return out, err
}

// itServe starts the LFS handler over d; onBlob, when set, runs after each
// blob reaches the backend.
func (e *env) itServe(d *brokers.Discovery, onBlob func()) (*Handler, string) {
	e.t.Helper()
	h, srv := e.replica(func(c *Config) {
		c.Producer = FromDiscovery(d)
		if onBlob != nil {
			st, err := sealstore.New(sealstore.Direct(&hookBE{Store: e.be, onBlob: onBlob}), e.kr, sealstore.Options{SpoolDir: e.t.TempDir(), BackendChecksum: true, OwnerPendingAge: time.Nanosecond})
			if err != nil {
				e.t.Fatal(err)
			}
			c.Store = st
		}
	})
	return h, srv.URL
}

// checkStorage asserts the bucket holds exactly the blobs want, no
// multipart upload is in progress, and orphans were counted.
func (e *env) checkStorage(h *Handler, orphans float64, want ...string) {
	e.t.Helper()
	got := e.blobs()
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		e.t.Fatalf("blobs in storage %v, want %v", got, want)
	}
	if _, ups := e.objects(); len(ups) != 0 {
		e.t.Fatalf("multipart uploads in progress: %v", ups)
	}
	if n := value(h.Metrics().orphans); n != orphans {
		e.t.Fatalf("orphan metric %v, want %v", n, orphans)
	}
}

// consume reads n records of itTopic from the cluster with a real Kafka
// client (and fails on fewer within 10 s).
func consume(t *testing.T, c *kfake.Cluster, n int) []*kgo.Record {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(c.ListenAddrs()...), kgo.ConsumeTopics(itTopic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var recs []*kgo.Record
	for len(recs) < n {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("consumed %d records, want %d", len(recs), n)
		}
		if err := fs.Err0(); err != nil {
			t.Fatal(err)
		}
		recs = append(recs, fs.Records()...)
	}
	return recs
}

// keyPartition is where the Java producer (murmur2) puts key, computed by
// franz-go's own partitioner, not lfs/brokers'.
func keyPartition(key []byte, n int) int32 {
	return int32(kgo.StickyKeyPartitioner(nil).ForTopic(itTopic).Partition(&kgo.Record{Key: key}, n))
}
