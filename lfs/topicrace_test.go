package lfs

import (
	"fmt"
	"sync"
	"testing"

	"github.com/twmb/franz-go/pkg/kfake"

	"github.com/s3seal/s3seal/lfs/brokers"
)

// Produces racing the creation of the topic they name (each asks the
// broker to create it) all land in the one topic created; none is lost
// or orphaned.
func TestProducesRaceTopicCreation(t *testing.T) {
	c := autoCluster(t, kfake.AllowAutoTopicCreation(), kfake.DefaultNumPartitions(3))
	d := itDiscovery(t, brokers.Config{Static: c.ListenAddrs()})
	e := newEnv(t)
	h, url := e.itServe(d, nil)
	const n = 16
	var wg sync.WaitGroup
	keys := make([]string, n)
	errs := make([]string, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			a := produce(t, url, "racy", randBytes(300, uint64(100+i)), map[string]string{"X-Kafka-Key": "a2V5"})
			if a.status != 200 {
				errs[i] = fmt.Sprintf("%d %s", a.status, a.body)
				return
			}
			keys[i] = envelopeOf(t, a).Key
		}()
	}
	wg.Wait()
	for i, s := range errs {
		if s != "" {
			t.Fatalf("produce %d: %s", i, s)
		}
	}
	e.checkStorage(h, 0, keys...)
}
