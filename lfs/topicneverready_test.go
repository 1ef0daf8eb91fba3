package lfs

import (
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/s3seal/s3seal/internal/kafkatest"
	"github.com/s3seal/s3seal/lfs/brokers"
)

// A broker that never finishes creating the topic (LEADER_NOT_AVAILABLE
// forever, or the topic listed without partitions forever, as with an
// auto-create of 0 partitions) holds the produce for TopicWait and a few
// retries, not longer: 503 backend_unavailable, nothing sent, the blob
// removed, no orphan.
func TestTopicNeverReadyIsBounded(t *testing.T) {
	for _, noPartitions := range []bool{false, true} {
		c := autoCluster(t)
		c.ControlKey(kmsg.Metadata.Int16(), func(req kmsg.Request) (kmsg.Response, error, bool) {
			c.KeepControl()
			r := req.(*kmsg.MetadataRequest)
			resp := r.ResponseKind().(*kmsg.MetadataResponse)
			for _, rt := range r.Topics {
				st := kmsg.NewMetadataResponseTopic()
				st.Topic = rt.Topic
				if !noPartitions {
					st.ErrorCode = kerr.LeaderNotAvailable.Code
				}
				resp.Topics = append(resp.Topics, st)
			}
			return resp, nil, true
		})
		seen := kafkatest.WatchProduce(c)
		d := itDiscovery(t, brokers.Config{Static: c.ListenAddrs(), TopicWait: 500 * time.Millisecond, RetryBackoff: 20 * time.Millisecond})
		e := newEnv(t)
		h, url := e.itServe(d, nil)
		start := time.Now()
		a := produce(t, url, "limbo", randBytes(2000, 11), nil)
		if took := time.Since(start); took > 3*time.Second {
			t.Fatalf("no partitions %v: answered after %s", noPartitions, took)
		}
		wantError(t, a, 503, "backend_unavailable")
		if len(seen.Nodes()) != 0 {
			t.Fatalf("no partitions %v: a produce request was sent", noPartitions)
		}
		e.checkStorage(h, 0)
	}
}
