package kafkaproxy

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/s3seal/s3seal/backend"
	"github.com/s3seal/s3seal/backend/embedded"
	"github.com/s3seal/s3seal/crypto"
	"github.com/s3seal/s3seal/lfs"
	"github.com/s3seal/s3seal/lfs/brokers"
	"github.com/s3seal/s3seal/sealstore"
)

const testBucket = "lfs"

// harness is a kfake cluster, an embedded store, the LFS module on it and
// a Proxy in front of the cluster.
type harness struct {
	t     *testing.T
	kafka *kfake.Cluster
	be    backend.Store
	kr    *crypto.Keyring
	blobs *lfs.Handler
	proxy *Proxy
	addr  string
	fwd   *brokers.Forwarder
}

// newHarness starts everything; edit tweaks the Proxy's Config.
func newHarness(t *testing.T, brokersN int, edit func(*Config), kopts ...kfake.Opt) *harness {
	t.Helper()
	return newHarnessDial(t, brokersN, nil, edit, kopts...)
}

// newHarnessDial is newHarness with every broker connection s3seal opens
// made by dial (nil: net.Dialer's).
func newHarnessDial(t *testing.T, brokersN int, dial func(ctx context.Context, network, addr string) (net.Conn, error),
	edit func(*Config), kopts ...kfake.Opt) *harness {
	t.Helper()
	be, closer, err := embedded.NewStore(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { closer.Close() })
	key, _ := crypto.GenerateKey()
	kr, err := crypto.NewKeyring("k1", map[string][]byte{"k1": key})
	if err != nil {
		t.Fatal(err)
	}
	if err := be.CreateBucket(context.Background(), testBucket); err != nil {
		t.Fatal(err)
	}
	opts := append([]kfake.Opt{kfake.NumBrokers(brokersN), kfake.AllowAutoTopicCreation(), kfake.DefaultNumPartitions(3)}, kopts...)
	kc, err := kfake.NewCluster(opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(kc.Close)
	d, err := brokers.New(context.Background(), brokers.Config{Static: kc.ListenAddrs(), Dial: dial})
	if err != nil {
		t.Fatal(err)
	}
	h := &harness{t: t, kafka: kc, be: be, kr: kr}
	h.blobs, err = lfs.New(lfs.Config{Store: h.store(), Producer: lfs.FromDiscovery(d), Keyring: kr, Bucket: testBucket,
		PartSize: sealstore.MinPartSize})
	if err != nil {
		t.Fatal(err)
	}
	h.fwd = d.Forwarder()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	cfg := Config{Blobs: h.blobs, Brokers: h.fwd, Advertise: ln.Addr().String()}
	if edit != nil {
		edit(&cfg)
	}
	if h.proxy, err = New(cfg); err != nil {
		t.Fatal(err)
	}
	h.addr = ln.Addr().String()
	go h.proxy.Serve(ln)
	t.Cleanup(func() { h.proxy.Close(); h.fwd.Close() })
	return h
}

func (h *harness) store() *sealstore.Store {
	st, err := sealstore.New(sealstore.Direct(h.be), h.kr, sealstore.Options{SpoolDir: h.t.TempDir(), BackendChecksum: true, OwnerPendingAge: time.Nanosecond})
	if err != nil {
		h.t.Fatal(err)
	}
	return st
}

// client is a kgo client of the proxy.
func (h *harness) client(opts ...kgo.Opt) *kgo.Client {
	h.t.Helper()
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(h.addr), kgo.ProducerBatchMaxBytes(32 << 20),
		kgo.AllowAutoTopicCreation()}, opts...)...)
	if err != nil {
		h.t.Fatal(err)
	}
	h.t.Cleanup(cl.Close)
	return cl
}

// direct is a kgo client of the cluster itself.
func (h *harness) direct(opts ...kgo.Opt) *kgo.Client {
	h.t.Helper()
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(h.kafka.ListenAddrs()...)}, opts...)...)
	if err != nil {
		h.t.Fatal(err)
	}
	h.t.Cleanup(cl.Close)
	return cl
}

// consume reads n records of topic straight from the cluster.
func (h *harness) consume(topic string, n int, opts ...kgo.Opt) []*kgo.Record {
	h.t.Helper()
	cl := h.direct(append([]kgo.Opt{kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart())}, opts...)...)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var out []*kgo.Record
	for len(out) < n {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			h.t.Fatalf("consumed %d of %d records of %s", len(out), n, topic)
		}
		fs.EachRecord(func(r *kgo.Record) { out = append(out, r) })
	}
	return out
}

// envelope decodes a record value as an envelope.
func (h *harness) envelope(r *kgo.Record) lfs.Envelope {
	h.t.Helper()
	var env lfs.Envelope
	if err := json.Unmarshal(r.Value, &env); err != nil || env.Key == "" {
		h.t.Fatalf("record value is no envelope (%v): %.200q", err, r.Value)
	}
	return env
}

// readBlob reads a blob back through a fresh sealstore.
func (h *harness) readBlob(key string) []byte {
	h.t.Helper()
	_, rd, err := h.store().Get(context.Background(), testBucket, key, nil)
	if err != nil {
		h.t.Fatal(err)
	}
	defer rd.Close()
	b, err := io.ReadAll(rd)
	if err != nil {
		h.t.Fatal(err)
	}
	return b
}

// blobKeys lists the blobs in the store (s3seal's own state left out).
func (h *harness) blobKeys() []string {
	h.t.Helper()
	out, err := h.be.ListObjects(context.Background(), backend.ListInput{Bucket: testBucket, V2: true})
	if err != nil {
		h.t.Fatal(err)
	}
	var keys []string
	for _, o := range out.Entries {
		if !bytes.HasPrefix([]byte(o.Key), []byte(".s3seal/")) {
			keys = append(keys, o.Key)
		}
	}
	return keys
}

// rawObject is an object's bytes as the store holds them.
func (h *harness) rawObject(key string) []byte {
	h.t.Helper()
	obj, err := h.be.GetObject(context.Background(), backend.GetInput{Bucket: testBucket, Key: key})
	if err != nil {
		h.t.Fatal(err)
	}
	defer obj.Body.Close()
	b, _ := io.ReadAll(obj.Body)
	return b
}

// onlyCommittedBlobs checks that the n committed records of topic (read
// with read_committed) each have their blob in the store, and that the
// bucket holds no other blob.
func (h *harness) onlyCommittedBlobs(ctx context.Context, topic string, n int) {
	h.t.Helper()
	for _, r := range h.consume(topic, n, kgo.FetchIsolationLevel(kgo.ReadCommitted())) {
		env := h.envelope(r)
		if _, err := h.store().Head(ctx, testBucket, env.Key); err != nil {
			h.t.Fatalf("the blob %s of a committed record was deleted: %v", env.Key, err)
		}
	}
	if got := len(h.blobKeys()); got != n {
		h.t.Fatalf("%d blobs, want the committed records' %d", got, n)
	}
}
