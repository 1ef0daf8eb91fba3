package lfs

// Integration tests: the LFS HTTP API (httptest) over a real sealstore on
// the embedded store, producing through a real brokers.Discovery to kfake
// clusters found statically or in an embedded etcd. One test per case of
// the broker rules (KafScale PR 319, issue 8); each checks storage
// afterwards: the blobs in the bucket, the multipart uploads in progress,
// and the orphan metric.

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/s3seal/s3seal/internal/kafkatest"
	"github.com/s3seal/s3seal/lfs/brokers"
)

// itMultipart runs init, the parts, and the completion; it answers the
// completion.
func itMultipart(t *testing.T, url string, init map[string]any, data []byte) answer {
	t.Helper()
	init["topic"], init["size_bytes"] = itTopic, len(data)
	in := initUpload(t, url, init)
	var parts []map[string]any
	for off, n := 0, 1; off < len(data); off, n = off+int(in.PartSize), n+1 {
		a := putPart(t, url, in.UploadID, n, data[off:min(off+int(in.PartSize), len(data))])
		var p struct {
			ETag string `json:"etag"`
		}
		if a.status != 200 || json.Unmarshal(a.body, &p) != nil {
			t.Fatalf("part %d: %d %s", n, a.status, a.body)
		}
		parts = append(parts, map[string]any{"part_number": n, "etag": p.ETag})
	}
	return doJSON(t, "POST", url+"/lfs/uploads/"+in.UploadID+"/complete", map[string]any{"parts": parts})
}

func wantError(t *testing.T, a answer, status int, code string) {
	t.Helper()
	if a.status != status || a.code(t) != code {
		t.Fatalf("answer %d %s, want %d %s", a.status, a.body, status, code)
	}
}

// noBrokerAnswers: /lfs/produce (one PUT and multipart-sized) and
// /lfs/uploads all answer 503 backend_unavailable.
func noBrokerAnswers(t *testing.T, url string) {
	t.Helper()
	wantError(t, produce(t, url, itTopic, randBytes(1000, 3), nil), 503, "backend_unavailable")
	wantError(t, produce(t, url, itTopic, randBytes(6<<20, 4), nil), 503, "backend_unavailable")
	wantError(t, doJSON(t, "POST", url+"/lfs/uploads", map[string]any{"topic": itTopic, "size_bytes": 1000}), 503, "backend_unavailable")
}

func b64(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }

// Brokers come from etcd's snapshot: /lfs/produce and a multipart upload
// answer 200, a Kafka client reads the envelopes (the keyed one in the
// partition Kafka's default partitioner picks), the blobs are stored.
func TestIntegDiscoveredBrokersUsed(t *testing.T) {
	c := itCluster(t, 2, 3)
	te := startItEtcd(t)
	te.snapshot(t, c.ListenAddrs()...)
	dl := &kafkatest.Dialer{}
	d := itDiscovery(t, brokers.Config{EtcdEndpoints: []string{te.endpoint}, Dial: dl.Dial})
	e := newEnv(t)
	h, url := e.itServe(d, nil)

	data := randBytes(200_000, 10)
	a := produce(t, url, itTopic, data, map[string]string{"X-Kafka-Key": b64("order-42")})
	env1 := envelopeOf(t, a)
	big := randBytes(6<<20+7, 11)
	env2 := envelopeOf(t, itMultipart(t, url, map[string]any{"key": b64("order-43")}, big))

	recs := consume(t, c, 2)
	slices.SortFunc(recs, func(x, y *kgo.Record) int { return strings.Compare(string(x.Key), string(y.Key)) })
	if string(recs[0].Key) != "order-42" || !bytes.Equal(recs[0].Value, bytes.TrimSpace(a.body)) ||
		recs[0].Partition != keyPartition([]byte("order-42"), 3) {
		t.Fatalf("record %s/%d %s, want partition %d", recs[0].Key, recs[0].Partition, recs[0].Value, keyPartition([]byte("order-42"), 3))
	}
	var got Envelope
	if string(recs[1].Key) != "order-43" || json.Unmarshal(recs[1].Value, &got) != nil || got.Key != env2.Key ||
		recs[1].Partition != keyPartition([]byte("order-43"), 3) {
		t.Fatalf("multipart record %s/%d %s", recs[1].Key, recs[1].Partition, recs[1].Value)
	}
	if !bytes.Equal(e.readBlob(env1.Key), data) || !bytes.Equal(e.readBlob(env2.Key), big) {
		t.Fatal("stored blobs differ")
	}
	if dl.Total() == 0 || dl.To(c.ListenAddrs()[0])+dl.To(c.ListenAddrs()[1]) != dl.Total() {
		t.Fatalf("dials %v, want only the brokers etcd lists", dl.Counts())
	}
	e.checkStorage(h, 0, env1.Key, env2.Key)
}

// A static list wins over etcd: the static cluster gets the record, the
// one etcd lists (etcd is down, too) is never dialed.
func TestIntegStaticListWins(t *testing.T) {
	static, other := itCluster(t, 1, 1), itCluster(t, 1, 1)
	otherSeen := kafkatest.WatchProduce(other)
	te := startItEtcd(t)
	te.snapshot(t, other.ListenAddrs()...)
	dl := &kafkatest.Dialer{}
	d := itDiscovery(t, brokers.Config{Static: static.ListenAddrs(), EtcdEndpoints: []string{te.endpoint},
		Dial: dl.Dial, CacheTTL: time.Millisecond})
	te.stop()
	e := newEnv(t)
	h, url := e.itServe(d, nil)

	env := envelopeOf(t, produce(t, url, itTopic, randBytes(5000, 12), nil))
	if r := consume(t, static, 1)[0]; !bytes.Contains(r.Value, []byte(env.Key)) {
		t.Fatalf("record %s", r.Value)
	}
	if len(otherSeen.Nodes()) != 0 || dl.To(other.ListenAddrs()[0]) != 0 {
		t.Fatalf("the etcd-listed broker was used: produces %v, dials %v", otherSeen.Nodes(), dl.Counts())
	}
	e.checkStorage(h, 0, env.Key)
}

// etcd lists no broker (after having listed one): 503 backend_unavailable
// for /lfs/produce and /lfs/uploads, nothing stored, no multipart upload
// started, no broker dialed, though the cache still holds the old broker.
func TestIntegEtcdListsNoBroker(t *testing.T) {
	c := itCluster(t, 1, 1)
	seen := kafkatest.WatchProduce(c)
	te := startItEtcd(t)
	te.snapshot(t, c.ListenAddrs()...)
	dl := &kafkatest.Dialer{}
	d := itDiscovery(t, brokers.Config{EtcdEndpoints: []string{te.endpoint}, Dial: dl.Dial})
	e := newEnv(t)
	h, url := e.itServe(d, nil)
	first := envelopeOf(t, produce(t, url, itTopic, randBytes(5000, 13), nil))

	te.snapshot(t) // brokers scaled to zero
	dials := dl.Total()
	noBrokerAnswers(t, url)
	if dl.Total() != dials || len(seen.Nodes()) != 1 {
		t.Fatalf("%d dials, %d produce requests after etcd listed no broker", dl.Total()-dials, len(seen.Nodes())-1)
	}
	e.checkStorage(h, 0, first.Key)
}

// The broker goes away between Connect and the produce (the cluster is
// closed once the blob is in the backend): the check after the upload
// dials again, fails, deletes the blob: 503, for /lfs/produce and for a
// multipart completion.
func TestIntegDialFailureAfterUploadDeletesObject(t *testing.T) {
	te := startItEtcd(t)
	for _, multipart := range []bool{false, true} {
		c := itCluster(t, 1, 1)
		seen := kafkatest.WatchProduce(c)
		te.snapshot(t, c.ListenAddrs()...)
		dl := &kafkatest.Dialer{}
		d := itDiscovery(t, brokers.Config{EtcdEndpoints: []string{te.endpoint}, Dial: dl.Dial})
		e := newEnv(t)
		var dialsAtUpload atomic.Int64
		var armed atomic.Bool
		h, url := e.itServe(d, func() {
			if armed.Load() {
				dialsAtUpload.Store(int64(dl.Total()))
				c.Close()
			}
		})
		data := randBytes(3000, 14)
		var a answer
		if multipart {
			in := initUpload(t, url, map[string]any{"topic": itTopic, "size_bytes": len(data)})
			p := putPart(t, url, in.UploadID, 1, data)
			var pr struct {
				ETag string `json:"etag"`
			}
			_ = json.Unmarshal(p.body, &pr)
			armed.Store(true)
			a = doJSON(t, "POST", url+"/lfs/uploads/"+in.UploadID+"/complete",
				map[string]any{"parts": []map[string]any{{"part_number": 1, "etag": pr.ETag}}})
		} else {
			armed.Store(true)
			a = produce(t, url, itTopic, data, nil)
		}
		wantError(t, a, 503, "backend_unavailable")
		if dialsAtUpload.Load() == 0 || int64(dl.Total()) <= dialsAtUpload.Load() || len(seen.Nodes()) != 0 {
			t.Fatalf("multipart %v: dials at upload %d, after %d (want a failed redial); %d produce requests",
				multipart, dialsAtUpload.Load(), dl.Total(), len(seen.Nodes()))
		}
		e.checkStorage(h, 0)
	}
}

// etcd down past the cache TTL: the cache is stale, so there is no broker:
// 503, nothing stored, no upload started, nothing produced.
func TestIntegStaleCacheIsNoBroker(t *testing.T) {
	c := itCluster(t, 1, 1)
	seen := kafkatest.WatchProduce(c)
	te := startItEtcd(t)
	te.snapshot(t, c.ListenAddrs()...)
	const ttl = time.Second
	d := itDiscovery(t, brokers.Config{EtcdEndpoints: []string{te.endpoint}, CacheTTL: ttl})
	e := newEnv(t)
	h, url := e.itServe(d, nil)
	first := envelopeOf(t, produce(t, url, itTopic, randBytes(5000, 15), nil))
	okAt := time.Now() // after the last successful etcd read

	te.stop()
	time.Sleep(time.Until(okAt.Add(ttl + 100*time.Millisecond)))
	noBrokerAnswers(t, url)
	if n := len(seen.Nodes()); n != 1 {
		t.Fatalf("%d produce requests, want only the first", n)
	}
	e.checkStorage(h, 0, first.Key)
}

// An etcd blip within the TTL: the cached brokers still serve /lfs/produce
// and a multipart upload, and the records reach Kafka.
func TestIntegFreshCacheStillWorks(t *testing.T) {
	c := itCluster(t, 1, 1)
	te := startItEtcd(t)
	te.snapshot(t, c.ListenAddrs()...)
	d := itDiscovery(t, brokers.Config{EtcdEndpoints: []string{te.endpoint}, CacheTTL: 20 * time.Second})
	e := newEnv(t)
	h, url := e.itServe(d, nil)
	env1 := envelopeOf(t, produce(t, url, itTopic, randBytes(5000, 16), nil))

	te.stop()
	env2 := envelopeOf(t, produce(t, url, itTopic, randBytes(5000, 17), nil))
	env3 := envelopeOf(t, itMultipart(t, url, map[string]any{}, randBytes(7000, 18)))
	if recs := consume(t, c, 3); !bytes.Contains(recs[2].Value, []byte(env3.Key)) {
		t.Fatalf("last record %s", recs[2].Value)
	}
	e.checkStorage(h, 0, env1.Key, env2.Key, env3.Key)
}

// A listed broker nobody listens on (etcd still lists a scaled-down
// broker; or the static list): 503 before anything is stored.
func TestIntegUnreachableListedBroker(t *testing.T) {
	dead := itFreeAddr(t)
	te := startItEtcd(t)
	te.snapshot(t, dead)
	for _, cfg := range []brokers.Config{{EtcdEndpoints: []string{te.endpoint}}, {Static: []string{dead}}} {
		dl := &kafkatest.Dialer{}
		cfg.Dial = dl.Dial
		d := itDiscovery(t, cfg)
		e := newEnv(t)
		h, url := e.itServe(d, nil)
		noBrokerAnswers(t, url)
		if dl.To(dead) != 3 {
			t.Fatalf("dials %v, want the listed broker tried once per request", dl.Counts())
		}
		e.checkStorage(h, 0)
	}
}
