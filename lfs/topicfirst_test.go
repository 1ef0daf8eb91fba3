package lfs

import (
	"sync/atomic"
	"testing"

	"github.com/twmb/franz-go/pkg/kfake"

	"github.com/s3seal/s3seal/lfs/brokers"
)

// A topic the broker does not have and will not create, or a partition
// the topic does not have, is answered before the blob is read: nothing
// is written to storage and no multipart upload is started, so a client
// naming invented topics costs a Metadata request, not a stored and
// deleted blob.
func TestUnknownTopicStoresNothing(t *testing.T) {
	c := autoCluster(t, kfake.SeedTopics(1, "known"))
	d := itDiscovery(t, brokers.Config{Static: c.ListenAddrs()})
	e := newEnv(t)
	var stored atomic.Int32
	h, url := e.itServe(d, func() { stored.Add(1) })
	wantError(t, produce(t, url, "invented", randBytes(2000, 8), nil), 404, "unknown_topic")
	wantError(t, produce(t, url, "known", randBytes(2000, 9), map[string]string{"X-Kafka-Partition": "3"}), 400, "invalid_partition")
	wantError(t, doJSON(t, "POST", url+"/lfs/uploads", map[string]any{"topic": "invented", "size_bytes": 1000}), 404, "unknown_topic")
	wantError(t, doJSON(t, "POST", url+"/lfs/uploads", map[string]any{"topic": "known", "partition": 3, "size_bytes": 1000}), 400, "invalid_partition")
	if n := stored.Load(); n != 0 {
		t.Fatalf("%d blobs reached storage", n)
	}
	e.checkStorage(h, 0)
	if a := produce(t, url, "known", randBytes(2000, 10), nil); a.status != 200 {
		t.Fatalf("produce to a known topic: %d %s", a.status, a.body)
	}
}
