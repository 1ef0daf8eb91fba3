package lfs

// Integration tests, continued: routing to the partition owner, the TTL
// after the upload, broker connections per produce, and what the broker
// answers to the Produce request.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/s3seal/s3seal/internal/kafkatest"
	"github.com/s3seal/s3seal/lfs/brokers"
)

// 3 brokers, each leading one partition (0 -> node 0, 1 -> node 2, 2 ->
// node 1), the leases in etcd pointing at the owners: each produce and
// each multipart completion sends its Produce request to the owner only
// and the record lands in its partition. A stale lease (node 1 for
// partition 0) is followed by a retry to the owner once the lease moves
// during the request.
func TestIntegRoutesToPartitionOwner(t *testing.T) {
	owners := []int32{0, 2, 1}
	c := itCluster(t, 3, 3, owners...)
	te := startItEtcd(t)
	te.snapshot(t, c.ListenAddrs()...)
	for p, n := range owners {
		te.lease(t, int32(p), n)
	}
	seen := kafkatest.WatchProduce(c)
	d := itDiscovery(t, brokers.Config{EtcdEndpoints: []string{te.endpoint}})
	e := newEnv(t)
	h, url := e.itServe(d, nil)

	type want struct {
		key       string
		partition int32
		nodes     []int32
	}
	var wants []want
	check := func(what string, a answer, p int32, nodes ...int32) {
		t.Helper()
		env := envelopeOf(t, a)
		before := 0
		for _, w := range wants {
			before += len(w.nodes)
		}
		if got := seen.Nodes()[before:]; !slices.Equal(got, nodes) {
			t.Fatalf("%s: produce requests on nodes %v, want %v", what, got, nodes)
		}
		wants = append(wants, want{env.Key, p, nodes})
	}
	for i := 0; i < 2; i++ { // whichever broker Connect picks
		check("produce to partition 1", produce(t, url, itTopic, randBytes(3000, 20), map[string]string{"X-Kafka-Partition": "1"}), 1, 2)
	}
	kp := keyPartition([]byte("k-7"), 3)
	check("keyed produce", produce(t, url, itTopic, randBytes(3000, 21), map[string]string{"X-Kafka-Key": b64("k-7")}), kp, owners[kp])
	check("multipart to partition 2", itMultipart(t, url, map[string]any{"partition": 2}, randBytes(6<<20, 22)), 2, 1)

	te.lease(t, 0, 1) // stale: node 0 leads partition 0
	c.ControlKey(kmsg.Produce.Int16(), func(kmsg.Request) (kmsg.Response, error, bool) {
		c.KeepControl()
		if c.CurrentNode() == 1 {
			te.lease(t, 0, 0) // leadership settles during the request
		}
		return nil, nil, false // node 1 answers NOT_LEADER_OR_FOLLOWER itself
	})
	check("multipart, stale lease", itMultipart(t, url, map[string]any{"partition": 0}, randBytes(4000, 23)), 0, 1, 0)

	recs := consume(t, c, len(wants))
	for _, w := range wants {
		found := false
		for _, r := range recs {
			var env Envelope
			if json.Unmarshal(r.Value, &env) == nil && env.Key == w.key {
				found = true
				if r.Partition != w.partition {
					t.Fatalf("record of %s in partition %d, want %d", w.key, r.Partition, w.partition)
				}
			}
		}
		if !found {
			t.Fatalf("no record for %s", w.key)
		}
	}
	var keys []string
	for _, w := range wants {
		keys = append(keys, w.key)
	}
	e.checkStorage(h, 0, keys...)
}

// The TTL is checked again after the upload: etcd goes down, the request
// connects within the TTL (cached brokers), the upload outlasts the TTL
// (the backend is slow): the blob is deleted, 503, nothing produced. For
// /lfs/produce and for a multipart completion.
func TestIntegTTLCheckedAgainAfterUpload(t *testing.T) {
	for _, multipart := range []bool{false, true} {
		c := itCluster(t, 1, 1)
		seen := kafkatest.WatchProduce(c)
		te := startItEtcd(t)
		te.snapshot(t, c.ListenAddrs()...)
		const ttl = 2 * time.Second
		d := itDiscovery(t, brokers.Config{EtcdEndpoints: []string{te.endpoint}, CacheTTL: ttl})
		e := newEnv(t)
		var slowUntil atomic.Int64 // unix nanos
		var slowed atomic.Int32
		h, url := e.itServe(d, func() {
			if until := slowUntil.Load(); until != 0 {
				slowed.Add(1)
				time.Sleep(time.Until(time.Unix(0, until)))
			}
		})
		first := envelopeOf(t, produce(t, url, itTopic, randBytes(3000, 24), nil))
		okAt := time.Now()

		te.stop()
		data := randBytes(4000, 25)
		var a answer
		if multipart {
			in := initUpload(t, url, map[string]any{"topic": itTopic, "size_bytes": len(data)})
			p := putPart(t, url, in.UploadID, 1, data)
			var pr struct {
				ETag string `json:"etag"`
			}
			_ = json.Unmarshal(p.body, &pr)
			slowUntil.Store(okAt.Add(ttl + 200*time.Millisecond).UnixNano())
			a = doJSON(t, "POST", url+"/lfs/uploads/"+in.UploadID+"/complete",
				map[string]any{"parts": []map[string]any{{"part_number": 1, "etag": pr.ETag}}})
		} else {
			slowUntil.Store(okAt.Add(ttl + 200*time.Millisecond).UnixNano())
			a = produce(t, url, itTopic, data, nil)
		}
		if slowed.Load() != 1 {
			t.Fatalf("multipart %v: the upload did not reach storage (machine too slow for the TTL?): %d %s", multipart, a.status, a.body)
		}
		wantError(t, a, 503, "backend_unavailable")
		if n := len(seen.Nodes()); n != 1 {
			t.Fatalf("multipart %v: %d produce requests, want only the first", multipart, n)
		}
		e.checkStorage(h, 0, first.Key)
	}
}

// One broker connection per produce: the connection opened before the
// upload carries the produce (2 brokers, no key: a partition the
// session's broker leads). A multipart upload costs one at init and one
// at completion.
func TestIntegOneBrokerConnectionPerProduce(t *testing.T) {
	c := itCluster(t, 2, 2, 0, 1)
	te := startItEtcd(t)
	te.snapshot(t, c.ListenAddrs()...)
	te.lease(t, 0, 0)
	te.lease(t, 1, 1)
	dl := &kafkatest.Dialer{}
	d := itDiscovery(t, brokers.Config{EtcdEndpoints: []string{te.endpoint}, Dial: dl.Dial})
	e := newEnv(t)
	h, url := e.itServe(d, nil)
	var keys []string
	for i := 0; i < 4; i++ {
		before := dl.Total()
		keys = append(keys, envelopeOf(t, produce(t, url, itTopic, randBytes(3000, uint64(30+i)), nil)).Key)
		if n := dl.Total() - before; n != 1 {
			t.Fatalf("produce %d: %d broker connections, want 1", i, n)
		}
	}
	before := dl.Total()
	keys = append(keys, envelopeOf(t, itMultipart(t, url, map[string]any{}, randBytes(3000, 35))).Key)
	if n := dl.Total() - before; n != 2 {
		t.Fatalf("multipart: %d broker connections, want 2 (init, completion)", n)
	}
	consume(t, c, 5)
	e.checkStorage(h, 0, keys...)
}

// The broker's answer to the Produce request is checked: a partition
// error is never a 200. A non-retriable error (or the connection dropped
// after the request was sent) may have written the record: 502, the blob
// kept and counted as an orphan. Not-leader on every attempt: 3 attempts,
// nothing written, the blob deleted, 503.
func TestIntegPartitionErrorNeverOK(t *testing.T) {
	c := itCluster(t, 1, 1)
	d := itDiscovery(t, brokers.Config{Static: c.ListenAddrs()})
	e := newEnv(t)
	h, url := e.itServe(d, nil)
	var kept []string
	newBlob := func() {
		t.Helper()
		for _, b := range e.blobs() {
			if !slices.Contains(kept, b) {
				kept = append(kept, b)
				return
			}
		}
		t.Fatal("the blob was not kept")
	}

	storageErr := func(req kmsg.Request) (kmsg.Response, error, bool) {
		return itProduceError(req, kerr.KafkaStorageError.Code), nil, true
	}
	c.ControlKey(kmsg.Produce.Int16(), storageErr)
	wantError(t, produce(t, url, itTopic, randBytes(3000, 40), nil), 502, "backend_error")
	newBlob()
	c.ControlKey(kmsg.Produce.Int16(), storageErr)
	wantError(t, itMultipart(t, url, map[string]any{}, randBytes(3000, 41)), 502, "backend_error")
	newBlob()
	c.ControlKey(kmsg.Produce.Int16(), func(kmsg.Request) (kmsg.Response, error, bool) {
		return nil, errors.New("test: connection dropped after the request"), true
	})
	wantError(t, produce(t, url, itTopic, randBytes(3000, 42), nil), 502, "backend_error")
	newBlob()
	e.checkStorage(h, 3, kept...)

	var attempts atomic.Int32
	c.ControlKey(kmsg.Produce.Int16(), func(req kmsg.Request) (kmsg.Response, error, bool) {
		c.KeepControl()
		attempts.Add(1)
		return itProduceError(req, kerr.NotLeaderForPartition.Code), nil, true
	})
	wantError(t, produce(t, url, itTopic, randBytes(3000, 43), nil), 503, "backend_unavailable")
	if attempts.Load() != 3 {
		t.Fatalf("%d produce attempts, want 3", attempts.Load())
	}
	e.checkStorage(h, 3, kept...)
}

// The client gives up while the produce waits to retry: the wait ends at
// once, the blob is deleted, nothing is counted as an orphan.
func TestIntegRetryWaitEndsOnCancel(t *testing.T) {
	c := itCluster(t, 1, 1)
	d := itDiscovery(t, brokers.Config{Static: c.ListenAddrs(), RetryBackoff: 30 * time.Second})
	e := newEnv(t)
	h, url := e.itServe(d, nil)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var attempts atomic.Int32
	c.ControlKey(kmsg.Produce.Int16(), func(req kmsg.Request) (kmsg.Response, error, bool) {
		c.KeepControl()
		attempts.Add(1)
		time.AfterFunc(100*time.Millisecond, cancel)
		return itProduceError(req, kerr.NotLeaderForPartition.Code), nil, true
	})
	data := randBytes(3000, 44)
	req, _ := http.NewRequestWithContext(ctx, "POST", url+"/lfs/produce", bytes.NewReader(data))
	req.Header.Set("X-Kafka-Topic", itTopic)
	start := time.Now()
	if resp, err := http.DefaultClient.Do(req); err == nil {
		resp.Body.Close()
		t.Fatalf("answer %d before the cancel", resp.StatusCode)
	}
	// No record was ever accepted for itTopic: its failures count under otherTopics.
	failed := h.Metrics().requests.WithLabelValues(otherTopics, "error", "produce")
	for value(failed) != 1 {
		if time.Since(start) > 10*time.Second {
			t.Fatal("the handler still waits after the cancel")
		}
		time.Sleep(20 * time.Millisecond)
	}
	if attempts.Load() != 1 {
		t.Fatalf("%d produce attempts", attempts.Load())
	}
	e.checkStorage(h, 0)
}
