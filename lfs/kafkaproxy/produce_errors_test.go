package kafkaproxy

import (
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// A refused partition's answer carries s3seal's reason as its error
// message (Produce v8 on), as brokers name theirs: a checksum that does
// not match, and an empty blob, are INVALID_RECORD saying so; nothing is
// stored.
func TestProduceRefusalCarriesReason(t *testing.T) {
	h := newHarness(t, 1, nil, kfake.SeedTopics(1, "refused"))
	for _, tc := range []struct {
		value, sum []byte
		want       string
	}{
		{[]byte("the blob"), []byte(strings.Repeat("0", 64)), "does not match its sha256 checksum"},
		{nil, nil, "the LFS blob is empty"},
	} {
		rec := kmsg.NewRecord()
		rec.Value = tc.value
		rec.Headers = []kmsg.Header{{Key: "LFS_BLOB", Value: tc.sum}}
		b := batch{RecordBatch: kmsg.RecordBatch{Magic: 2, ProducerID: -1, ProducerEpoch: -1, FirstSequence: -1, NumRecords: 1,
			FirstTimestamp: time.Now().UnixMilli(), MaxTimestamp: time.Now().UnixMilli()}}
		raw, err := b.rebuild(encodeRecord(nil, &rec))
		if err != nil {
			t.Fatal(err)
		}
		req := kmsg.NewPtrProduceRequest()
		req.Version, req.Acks, req.TimeoutMillis = 9, -1, 10000
		p := kmsg.NewProduceRequestTopicPartition()
		p.Partition, p.Records = 0, raw
		topic := kmsg.NewProduceRequestTopic()
		topic.Topic, topic.Partitions = "refused", []kmsg.ProduceRequestTopicPartition{p}
		req.Topics = []kmsg.ProduceRequestTopic{topic}
		resp := roundTrip(t, dial(t, h.addr), req).(*kmsg.ProduceResponse)
		if len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 1 {
			t.Fatalf("answer %+v", resp)
		}
		rp := resp.Topics[0].Partitions[0]
		if rp.ErrorCode != kerr.InvalidRecord.Code || rp.ErrorMessage == nil || !strings.Contains(*rp.ErrorMessage, tc.want) {
			t.Errorf("%q: error %v, message %v, want INVALID_RECORD saying %q", tc.want, kerr.ErrorForCode(rp.ErrorCode), rp.ErrorMessage, tc.want)
		}
	}
	if keys := h.blobKeys(); len(keys) != 0 {
		t.Errorf("refused blobs stored: %v", keys)
	}
}
