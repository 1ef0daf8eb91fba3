package kafkaproxy

import (
	"encoding/binary"
	"io"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// sendWithin sends req (version set) on a fresh connection to addr and
// returns the answer's body, or an error when none came within wait.
func sendWithin(t *testing.T, addr string, req kmsg.Request, wait time.Duration) ([]byte, error) {
	t.Helper()
	nc, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	body := binary.BigEndian.AppendUint16(nil, uint16(req.Key()))
	body = binary.BigEndian.AppendUint16(body, uint16(req.GetVersion()))
	body = binary.BigEndian.AppendUint32(body, 7)
	body = binary.BigEndian.AppendUint16(body, 1)
	body = append(body, 'x')
	if req.IsFlexible() {
		body = append(body, 0)
	}
	body = req.AppendTo(body)
	if _, err := nc.Write(append(binary.BigEndian.AppendUint32(nil, uint32(len(body))), body...)); err != nil {
		return nil, err
	}
	_ = nc.SetReadDeadline(time.Now().Add(wait))
	var size [4]byte
	if _, err := io.ReadFull(nc, size[:]); err != nil {
		return nil, err
	}
	out := make([]byte, binary.BigEndian.Uint32(size[:]))
	_, err = io.ReadFull(nc, out)
	return out, err
}

// metadataCounted is a harness whose topic "few" has one record, and the
// count of Metadata requests its brokers answer from then on.
func metadataCounted(t *testing.T) (*harness, *atomic.Int64) {
	h := newHarness(t, 1, nil)
	if err := produceOne(t, h.client(), "few"); err != nil {
		t.Fatal(err)
	}
	asked := new(atomic.Int64)
	h.kafka.ControlKey(kmsg.Metadata.Int16(), func(kmsg.Request) (kmsg.Response, error, bool) {
		h.kafka.KeepControl()
		asked.Add(1)
		return nil, nil, false
	})
	return h, asked
}

// A Fetch naming a hundred thousand partitions the topic does not have is
// answered at once: the brokers are asked for the topic's metadata once,
// not once per partition.
func TestFetchOfManyMissingPartitionsAsksOnce(t *testing.T) {
	h, asked := metadataCounted(t)
	req := kmsg.NewPtrFetchRequest()
	req.SetVersion(11)
	req.MaxWaitMillis, req.MaxBytes = 0, 1<<20
	rt := kmsg.NewFetchRequestTopic()
	rt.Topic = "few"
	for p := range int32(maxListed - 10) {
		rp := kmsg.NewFetchRequestTopicPartition()
		rp.Partition, rp.PartitionMaxBytes = p, 1<<10
		rt.Partitions = append(rt.Partitions, rp)
	}
	req.Topics = append(req.Topics, rt)
	start := time.Now()
	b, err := sendWithin(t, h.addr, req, 20*time.Second)
	if err != nil {
		t.Fatalf("no answer after %v: %v", time.Since(start), err)
	}
	resp := req.ResponseKind().(*kmsg.FetchResponse)
	resp.SetVersion(11)
	if err := resp.ReadFrom(b[4:]); err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, rt := range resp.Topics {
		n += len(rt.Partitions)
	}
	if n != maxListed-10 {
		t.Fatalf("answered %d partitions of %d", n, maxListed-10)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("a Fetch of 9990 partitions took %v", d)
	}
	if n := asked.Load(); n > 10 {
		t.Fatalf("a Fetch of 9990 partitions asked the brokers for metadata %d times", n)
	}
}

// So is a Produce naming a hundred thousand partitions the topic does not
// have: each is answered UNKNOWN_TOPIC_OR_PARTITION after one Metadata
// request.
func TestProduceToManyMissingPartitionsAsksOnce(t *testing.T) {
	h, asked := metadataCounted(t)
	req := kmsg.NewPtrProduceRequest()
	req.SetVersion(8)
	req.Acks, req.TimeoutMillis = 1, 5000
	rt := kmsg.NewProduceRequestTopic()
	rt.Topic = "few"
	for p := range int32(maxListed - 10) {
		rp := kmsg.NewProduceRequestTopicPartition()
		rp.Partition = p + 3
		rt.Partitions = append(rt.Partitions, rp)
	}
	req.Topics = append(req.Topics, rt)
	start := time.Now()
	b, err := sendWithin(t, h.addr, req, 30*time.Second)
	if err != nil {
		t.Fatalf("no answer after %v: %v", time.Since(start), err)
	}
	resp := req.ResponseKind().(*kmsg.ProduceResponse)
	resp.SetVersion(8)
	if err := resp.ReadFrom(b[4:]); err != nil {
		t.Fatal(err)
	}
	for _, rt := range resp.Topics {
		for _, rp := range rt.Partitions {
			if rp.ErrorCode != kerr.UnknownTopicOrPartition.Code {
				t.Fatalf("partition %d answered %v", rp.Partition, kerr.ErrorForCode(rp.ErrorCode))
			}
		}
	}
	if n := asked.Load(); n > 10 {
		t.Fatalf("a Produce to 9990 partitions asked the brokers for metadata %d times", n)
	}
}
