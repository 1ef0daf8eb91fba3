package brokers

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/s3seal/s3seal/internal/kafkatest"
)

type syncBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuf) Write(p []byte) (int, error) { s.mu.Lock(); defer s.mu.Unlock(); return s.b.Write(p) }
func (s *syncBuf) String() string              { s.mu.Lock(); defer s.mu.Unlock(); return s.b.String() }

// Leases hold broker ids as strings, resolved as KafScale's proxy does:
// exact match against the decimal node id of a snapshot broker. A lease
// naming no listed broker, a string id such as "broker-a" or a number
// written otherwise ("00"), leaves the Kafka metadata leader (node 2) as
// the owner: one produce request, on node 2, and no warning.
func TestLeaseBrokerIDsAreStrings(t *testing.T) {
	for _, lease := range []string{"broker-a", "kafscale-broker-0", "00", " 0", "2"} {
		t.Run(lease, func(t *testing.T) {
			c, te := etcdCluster(t)
			te.put(t, fmt.Sprintf("%s%s/%d", leasePrefix, testTopic, 1), lease)
			seen := kafkatest.WatchProduce(c)
			var log syncBuf
			d := newDiscovery(t, Config{EtcdEndpoints: []string{te.endpoint},
				Logger: slog.New(slog.NewTextHandler(&log, &slog.HandlerOptions{Level: slog.LevelDebug}))})
			s := connect(t, d)
			if _, err := s.Produce(context.Background(), testTopic, 1, nil, []byte("x"), nil); err != nil {
				t.Fatal(err)
			}
			if got := seen.Nodes(); !slices.Equal(got, []int32{2}) {
				t.Fatalf("lease %q: produce requests on nodes %v, want one on node 2", lease, got)
			}
			if strings.Contains(log.String(), "level=WARN") {
				t.Fatalf("lease %q warned:\n%s", lease, log.String())
			}
			if lease != "2" && !strings.Contains(log.String(), "names no listed broker") {
				t.Fatalf("lease %q: not logged as unresolved:\n%s", lease, log.String())
			}
		})
	}
}
