package kafkaproxy

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// encodeBatch builds a record batch of recs with codec, as a producer
// does (CRC included).
func encodeBatch(t *testing.T, codec kgo.CompressionCodecType, pid int64, recs ...kmsg.Record) []byte {
	t.Helper()
	var raw []byte
	for i := range recs {
		recs[i].OffsetDelta = int32(i)
		raw = encodeRecord(raw, &recs[i])
	}
	b := batch{RecordBatch: kmsg.RecordBatch{Magic: 2, Attributes: int16(codec), LastOffsetDelta: int32(len(recs) - 1),
		ProducerID: pid, ProducerEpoch: 0, FirstSequence: 0, NumRecords: int32(len(recs)), PartitionLeaderEpoch: -1}}
	if pid < 0 {
		b.ProducerEpoch, b.FirstSequence = -1, -1
	}
	out, err := b.rebuild(raw)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func codeOfErr(err error) *kerr.Error {
	var be *batchError
	if errors.As(err, &be) {
		return be.code
	}
	return nil
}

// Batches s3seal refuses, each with the Kafka error the partition gets:
// a CRC that does not match, magic 0 and 1, a length past the bytes sent,
// more or fewer records than declared, an unknown codec.
func TestBatchesRefused(t *testing.T) {
	good := encodeBatch(t, kgo.CodecNone, -1, kmsg.Record{Value: []byte("v")})
	if _, err := splitBatches(good); err != nil {
		t.Fatalf("a good batch: %v", err)
	}
	mut := func(f func(b []byte)) []byte {
		b := bytes.Clone(good)
		f(b)
		return b
	}
	recrc := func(b []byte) { binary.BigEndian.PutUint32(b[17:21], crc32.Checksum(b[crcStart:], castagnoli)) }
	for _, tc := range []struct {
		name string
		b    []byte
		want *kerr.Error
	}{
		{"crc", mut(func(b []byte) { b[len(b)-1] ^= 1 }), kerr.CorruptMessage},
		{"magic 1", mut(func(b []byte) { b[16] = 1 }), kerr.UnsupportedForMessageFormat},
		{"length past the end", mut(func(b []byte) { binary.BigEndian.PutUint32(b[8:], uint32(len(b))) }), kerr.CorruptMessage},
		{"short", good[:40], kerr.CorruptMessage},
		{"negative length", mut(func(b []byte) { binary.BigEndian.PutUint32(b[8:], 0xffffff00) }), kerr.CorruptMessage},
	} {
		_, err := splitBatches(tc.b)
		if got := codeOfErr(err); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, err, tc.want)
		}
	}
	// Declared counts that do not match the records, and a codec number
	// no producer sends, pass the CRC (recomputed) and are refused when
	// read.
	for _, tc := range []struct {
		name string
		b    []byte
		want *kerr.Error
	}{
		{"more records declared", mut(func(b []byte) { binary.BigEndian.PutUint32(b[57:61], 2); recrc(b) }), kerr.CorruptMessage},
		{"fewer records declared", mut(func(b []byte) { binary.BigEndian.PutUint32(b[57:61], 0); recrc(b) }), kerr.CorruptMessage},
		{"codec 5", mut(func(b []byte) { b[22] |= 5; recrc(b) }), kerr.UnsupportedCompressionType},
	} {
		bs, err := splitBatches(tc.b)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		lim := batchLimits{decompressed: 1 << 20, headers: 10}
		raw, err := bs[0].records(lim)
		if err == nil {
			err = eachRecord(raw, bs[0].NumRecords, lim, func(*kmsg.Record, []byte) error { return nil })
		}
		if got := codeOfErr(err); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, err, tc.want)
		}
	}
}

// A small batch that decompresses past the bound is refused at the bound,
// whatever its codec, and never held whole.
func TestCompressionBombsRefused(t *testing.T) {
	zeros := make([]byte, 8<<20)
	for _, codec := range []kgo.CompressionCodecType{kgo.CodecGzip, kgo.CodecSnappy, kgo.CodecLz4, kgo.CodecZstd} {
		b := encodeBatch(t, codec, -1, kmsg.Record{Value: zeros})
		if len(b) > 1<<20 {
			t.Fatalf("%s: compressed to %d bytes", codecName(codec), len(b))
		}
		bs, err := splitBatches(b)
		if err != nil {
			t.Fatal(err)
		}
		_, err = bs[0].records(batchLimits{decompressed: 1 << 20, headers: 10})
		if got := codeOfErr(err); got != kerr.CorruptMessage {
			t.Errorf("%s: %v, want CORRUPT_MESSAGE", codecName(codec), err)
		}
		raw, err := bs[0].records(batchLimits{decompressed: 16 << 20, headers: 10})
		if err != nil || len(raw) < len(zeros) {
			t.Errorf("%s within the bound: %d bytes, %v", codecName(codec), len(raw), err)
		}
	}
}

// A record claiming more headers than the bound is refused before kmsg
// allocates them.
func TestRecordHeaderCountBounded(t *testing.T) {
	hs := make([]kmsg.Header, 11)
	for i := range hs {
		hs[i] = kmsg.Header{Key: "h"}
	}
	b := encodeBatch(t, kgo.CodecNone, -1, kmsg.Record{Value: []byte("v"), Headers: hs})
	bs, _ := splitBatches(b)
	lim := batchLimits{decompressed: 1 << 20, headers: 10}
	raw, _ := bs[0].records(lim)
	err := eachRecord(raw, 1, lim, func(*kmsg.Record, []byte) error { return nil })
	if got := codeOfErr(err); got != kerr.InvalidRecord {
		t.Fatalf("%v, want INVALID_RECORD", err)
	}
	lim.headers = 11
	if err := eachRecord(raw, 1, lim, func(*kmsg.Record, []byte) error { return nil }); err != nil {
		t.Fatal(err)
	}
}

// A rewritten batch keeps its producer id, epoch, sequence, codec, offsets
// and timestamps; its length and CRC are those of its new bytes.
func TestRebuildKeepsBatchIdentity(t *testing.T) {
	for _, codec := range []kgo.CompressionCodecType{kgo.CodecNone, kgo.CodecGzip, kgo.CodecSnappy, kgo.CodecLz4, kgo.CodecZstd} {
		in := encodeBatch(t, codec, 7, kmsg.Record{Value: []byte("one")}, kmsg.Record{Value: []byte("two"), TimestampDelta64: 5})
		bs, err := splitBatches(in)
		if err != nil {
			t.Fatal(err)
		}
		b := bs[0]
		b.FirstTimestamp, b.MaxTimestamp, b.FirstSequence, b.ProducerEpoch = 1000, 1005, 42, 3
		var recs []byte
		raw, _ := b.records(batchLimits{decompressed: 1 << 20, headers: 10})
		_ = eachRecord(raw, 2, batchLimits{decompressed: 1 << 20, headers: 10}, func(r *kmsg.Record, _ []byte) error {
			r.Value = append([]byte("new-"), r.Value...)
			recs = encodeRecord(recs, r)
			return nil
		})
		out, err := b.rebuild(recs)
		if err != nil {
			t.Fatal(err)
		}
		got, err := splitBatches(out) // checks length, magic, CRC
		if err != nil {
			t.Fatalf("%s: %v", codecName(codec), err)
		}
		g := got[0]
		if g.ProducerID != 7 || g.ProducerEpoch != 3 || g.FirstSequence != 42 || g.codec() != codec || g.NumRecords != 2 ||
			g.LastOffsetDelta != 1 || g.FirstTimestamp != 1000 || g.MaxTimestamp != 1005 {
			t.Fatalf("%s: batch %+v", codecName(codec), g.RecordBatch)
		}
		raw, _ = g.records(batchLimits{decompressed: 1 << 20, headers: 10})
		var vals []string
		_ = eachRecord(raw, 2, batchLimits{decompressed: 1 << 20, headers: 10}, func(r *kmsg.Record, _ []byte) error {
			vals = append(vals, string(r.Value))
			if r.OffsetDelta == 1 && r.TimestampDelta64 != 5 {
				t.Errorf("timestamp delta %d", r.TimestampDelta64)
			}
			return nil
		})
		if len(vals) != 2 || vals[0] != "new-one" || vals[1] != "new-two" {
			t.Fatalf("%s: %q", codecName(codec), vals)
		}
	}
}

// Through the listener, a batch with a bad CRC is answered CORRUPT_MESSAGE
// for its partition and stores nothing; the connection stays usable.
func TestCorruptBatchAnsweredPerPartition(t *testing.T) {
	h := newHarness(t, 1, nil)
	cl := h.client()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := cl.ProduceSync(ctx, &kgo.Record{Topic: "crc", Value: []byte("warm")}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	bad := encodeBatch(t, kgo.CodecNone, -1, kmsg.Record{Value: []byte("blob"), Headers: []kmsg.Header{{Key: "LFS_BLOB"}}})
	bad[len(bad)-1] ^= 1
	req := kmsg.NewPtrProduceRequest()
	req.Acks, req.TimeoutMillis = -1, 5000
	rt := kmsg.NewProduceRequestTopic()
	rt.Topic = "crc"
	rp := kmsg.NewProduceRequestTopicPartition()
	rp.Partition, rp.Records = 0, bad
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	kr, err := cl.Request(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	resp := kr.(*kmsg.ProduceResponse)
	if code := resp.Topics[0].Partitions[0].ErrorCode; code != kerr.CorruptMessage.Code {
		t.Fatalf("error %v, want CORRUPT_MESSAGE", kerr.ErrorForCode(code))
	}
	if n := len(h.blobKeys()); n != 0 {
		t.Fatalf("%d blobs stored", n)
	}
	if err := cl.ProduceSync(ctx, &kgo.Record{Topic: "crc", Value: []byte("after")}).FirstErr(); err != nil {
		t.Fatal(err)
	}
}
