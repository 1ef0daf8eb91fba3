package brokers

import (
	"fmt"
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"
)

// Vectors from Kafka's Java Utils.murmur2 (UtilsTest.testMurmur2).
func TestMurmur2JavaVectors(t *testing.T) {
	cases := map[string]int32{
		"21":                         -973932308,
		"foobar":                     -790332482,
		"a-little-bit-long-string":   -985981536,
		"a-little-bit-longer-string": -1486304829,
		"lkjh234lh9fiuh90y23oiuhsafujhadof229phr9h19h89h8": -58897971,
		"abc": 479470107,
	}
	for in, want := range cases {
		if got := int32(murmur2([]byte(in))); got != want {
			t.Errorf("murmur2(%q) = %d, want %d", in, got, want)
		}
	}
}

// The partition for a key matches franz-go's Kafka-compatible key
// partitioner (murmur2, positive, modulo), for every key length class.
func TestKeyPartitionMatchesKgo(t *testing.T) {
	part := kgo.StickyKeyPartitioner(nil).ForTopic("t")
	for _, n := range []int{1, 3, 7, 12, 100} {
		for i := 0; i < 200; i++ {
			key := []byte(fmt.Sprintf("key-%d-%s", i, string(make([]byte, i%5))))
			want := int32(part.Partition(&kgo.Record{Key: key}, n))
			if got := keyPartition(key, int32(n)); got != want {
				t.Fatalf("keyPartition(%q, %d) = %d, kgo says %d", key, n, got, want)
			}
		}
	}
	if got := keyPartition([]byte{}, 5); got != int32(part.Partition(&kgo.Record{Key: []byte{}}, 5)) {
		t.Fatalf("empty key: %d", got)
	}
}
