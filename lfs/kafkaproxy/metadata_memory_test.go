package kafkaproxy

import (
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// encodedMetadata is a Metadata request already encoded.
type encodedMetadata struct {
	*kmsg.MetadataRequest
	b []byte
}

func (e *encodedMetadata) AppendTo(dst []byte) []byte { return append(dst, e.b...) }

// A Metadata request within the 1 MiB bound of requests other than
// Produce, naming half a million empty topics, costs s3seal no more than
// the room it takes for decoding (decodeFactor times its size), and is
// refused past maxListed names: nothing is forwarded or answered.
func TestMetadataOfManyTopicsBounded(t *testing.T) {
	h := newHarness(t, 1, func(c *Config) { c.MayUse = func(_, topic string) bool { return topic == "a" } })
	req := kmsg.NewPtrMetadataRequest()
	req.SetVersion(4)
	for range maxOtherRequest/2 - 100 {
		rt := kmsg.NewMetadataRequestTopic()
		rt.Topic = kmsg.StringPtr("")
		req.Topics = append(req.Topics, rt)
	}
	enc := &encodedMetadata{kmsg.NewPtrMetadataRequest(), req.AppendTo(nil)}
	enc.SetVersion(4)
	req = nil
	runtime.GC()
	var base runtime.MemStats
	runtime.ReadMemStats(&base)
	var peak uint64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			var m runtime.MemStats
			runtime.ReadMemStats(&m)
			peak = max(peak, m.HeapInuse)
			select {
			case <-stop:
				return
			case <-time.After(10 * time.Millisecond):
			}
		}
	}()
	_, err := sendWithin(t, h.addr, enc, 60*time.Second)
	close(stop)
	wg.Wait()
	grew := int64(peak) - int64(base.HeapInuse)
	t.Logf("a %d-byte Metadata request (answer err %v): heap in use grew %d MiB", len(enc.b), err, grew>>20)
	if err == nil {
		t.Fatal("a request naming half a million topics was answered")
	}
	if grew > decodeFactor*int64(len(enc.b)) {
		t.Fatalf("a %d-byte Metadata request took %d MiB of heap", len(enc.b), grew>>20)
	}
}
