package kafkaproxy

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"runtime"
	"testing"
	"time"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/s2"
	"github.com/klauspost/compress/zstd"
	"github.com/pierrec/lz4/v4"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// batchOf encodes a batch of attributes attrs whose (already compressed)
// records are recs, declaring n records, its length and CRC computed.
func batchOf(attrs int16, n int32, recs []byte) []byte {
	b := kmsg.RecordBatch{Magic: 2, Attributes: attrs, LastOffsetDelta: n - 1, ProducerID: 5, ProducerEpoch: 0,
		NumRecords: n, PartitionLeaderEpoch: -1, Records: recs}
	out := b.AppendTo(nil)
	binary.BigEndian.PutUint32(out[8:12], uint32(len(out)-12))
	binary.BigEndian.PutUint32(out[17:21], crc32.Checksum(out[crcStart:], castagnoli))
	return out
}

// xerial frames src as the Java client frames snappy: the header, then
// blocks of at most block bytes, each raw snappy preceded by its length.
func xerial(src []byte, block int) []byte {
	out := append(bytes.Clone(xerialPrefix), 0, 0, 0, 1, 0, 0, 0, 1)
	for len(src) > 0 {
		n := min(block, len(src))
		enc := s2.EncodeSnappy(nil, src[:n])
		out = binary.BigEndian.AppendUint32(out, uint32(len(enc)))
		out = append(out, enc...)
		src = src[n:]
	}
	return out
}

// codecForms are the ways a producer may compress a batch's records.
var codecForms = []struct {
	name  string
	codec kgo.CompressionCodecType
	enc   func(t *testing.T, src []byte) []byte
}{
	{"none", kgo.CodecNone, func(_ *testing.T, src []byte) []byte { return src }},
	{"gzip", kgo.CodecGzip, func(t *testing.T, src []byte) []byte {
		var b bytes.Buffer
		w := gzip.NewWriter(&b)
		w.Write(src)
		w.Close()
		return b.Bytes()
	}},
	{"snappy", kgo.CodecSnappy, func(_ *testing.T, src []byte) []byte { return s2.EncodeSnappy(nil, src) }},
	{"snappy-xerial", kgo.CodecSnappy, func(_ *testing.T, src []byte) []byte { return xerial(src, 64) }},
	{"lz4", kgo.CodecLz4, func(t *testing.T, src []byte) []byte {
		var b bytes.Buffer
		w := lz4.NewWriter(&b)
		// 64 KiB blocks, not the default 4 MiB, whose buffer the decoder
		// takes for every batch the mutation tests read (minutes under
		// the race detector); a changed byte still names the larger
		// sizes.
		if err := w.Apply(lz4.BlockSizeOption(lz4.Block64Kb)); err != nil {
			t.Fatal(err)
		}
		w.Write(src)
		w.Close()
		return b.Bytes()
	}},
	{"zstd", kgo.CodecZstd, func(t *testing.T, src []byte) []byte {
		e, err := zstd.NewWriter(nil)
		if err != nil {
			t.Fatal(err)
		}
		return e.EncodeAll(src, nil)
	}},
}

// lfsRecords are three records, the middle one marked LFS_BLOB.
func lfsRecords() []byte {
	var raw []byte
	for i, r := range []kmsg.Record{
		{Key: []byte("k0"), Value: []byte("plain before")},
		{Key: []byte("k1"), Value: bytes.Repeat([]byte("blob"), 40), Headers: []kmsg.Header{{Key: "LFS_BLOB"}, {Key: "h", Value: []byte("v")}}},
		{Key: []byte("k2"), Value: []byte("plain after")},
	} {
		r.OffsetDelta = int32(i)
		raw = encodeRecord(raw, &r)
	}
	return raw
}

// rewriteOutcome runs records through rewriteRecords as the produce path
// does, and says what happened: whether it panicked, how long it took,
// how many bytes it allocated, and how many values it stored.
type rewriteOutcome struct {
	err    error
	panic  any
	stored int
	took   time.Duration
	alloc  uint64
}

func rewriteOnce(records []byte, lim batchLimits) (o rewriteOutcome) {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	start := time.Now()
	defer func() {
		o.took = time.Since(start)
		runtime.ReadMemStats(&after)
		o.alloc = after.TotalAlloc - before.TotalAlloc
		o.panic = recover()
	}()
	_, o.err = rewriteRecords(records, lim, func(b *batch, r *kmsg.Record) ([]byte, error) {
		o.stored++
		return []byte(`{"kfs_lfs":1}`), nil
	})
	return o
}

// Every codec's LFS batch, cut at each byte of its records or with each
// byte of them changed (the CRC computed again, so the bytes reach the
// decompressor and the record parser), is rewritten or refused: nothing
// panics or hangs, nothing allocates far past the bound, and a refused
// batch has no value stored.
func TestMalformedBatchesRefusedBeforeStoring(t *testing.T) {
	lim := batchLimits{decompressed: 64 << 10, headers: 16}
	recs := lfsRecords()
	check := func(t *testing.T, what string, records []byte) {
		t.Helper()
		o := rewriteOnce(records, lim)
		switch {
		case o.panic != nil:
			t.Fatalf("%s: panic %v", what, o.panic)
		case o.took > 2*time.Second:
			t.Fatalf("%s: took %v", what, o.took)
		case o.alloc > 40<<20:
			// lz4 frames name blocks of up to 4 MiB, whose buffers the
			// decoder takes whatever the data; the race detector's
			// sync.Pool drops some of them, so a few are allocated
			// again. Past that, allocation would follow the data.
			t.Fatalf("%s: allocated %d bytes for a bound of %d", what, o.alloc, lim.decompressed)
		case o.err != nil && o.stored > 0:
			t.Fatalf("%s: refused (%v) after storing %d values", what, o.err, o.stored)
		}
	}
	for _, f := range codecForms {
		t.Run(f.name, func(t *testing.T) {
			attrs := int16(f.codec)
			comp := f.enc(t, recs)
			if o := rewriteOnce(batchOf(attrs, 3, comp), lim); o.err != nil || o.stored != 1 {
				t.Fatalf("the batch as sent: %v, %d stored", o.err, o.stored)
			}
			whole := batchOf(attrs, 3, comp)
			for n := 0; n < len(whole); n++ {
				check(t, fmt.Sprintf("batch cut at %d", n), whole[:n])
			}
			for n := 0; n < len(comp); n++ {
				check(t, fmt.Sprintf("records cut at %d", n), batchOf(attrs, 3, comp[:n]))
			}
			// Each byte changed by one of the masks in turn (every mask
			// at every byte cost minutes under the race detector, the
			// lz4 decoder taking a 4 MiB block buffer each time).
			flips := []byte{0x01, 0x80, 0xff}
			for i := range comp {
				m := bytes.Clone(comp)
				x := flips[i%len(flips)]
				m[i] ^= x
				check(t, fmt.Sprintf("records byte %d ^ %#x", i, x), batchOf(attrs, 3, m))
			}
			// The uncompressed records changed, then compressed again:
			// the decompressor succeeds, the record parser judges.
			flips = []byte{0x01, 0x7f, 0x80, 0xff}
			for i := range recs {
				m := bytes.Clone(recs)
				x := flips[i%len(flips)]
				m[i] ^= x
				check(t, fmt.Sprintf("record byte %d ^ %#x", i, x), batchOf(attrs, 3, f.enc(t, m)))
			}
			for _, n := range []int32{-1, 0, 1, 2, 4, 1 << 30, -1 << 31} {
				check(t, fmt.Sprintf("%d records declared", n), batchOf(attrs, n, comp))
			}
			check(t, "control batch", batchOf(attrs|attrControl|attrTxn, 3, comp))
			// A record length varint that overflows, after the first
			// record.
			first, used := binary.Varint(recs)
			over := append(bytes.Clone(recs[:used+int(first)]), bytes.Repeat([]byte{0xff}, 10)...)
			over = append(over, 1)
			check(t, "overflowing length", batchOf(attrs, 3, f.enc(t, over)))
		})
	}
}

// Batches that inflate past the bound through many small members or
// frames (gzip members, lz4 frames, zstd frames, xerial snappy blocks,
// each well under the bound) are refused at the bound, and what s3seal
// allocates reading them stays near the bound, not near what they
// inflate to.
func TestConcatenatedCompressionBombsBounded(t *testing.T) {
	const bound = 1 << 20
	zeros := make([]byte, bound/2)
	members := func(one func() []byte) []byte {
		var out []byte
		m := one()
		for i := 0; i < 400; i++ { // 200 MiB once inflated
			out = append(out, m...)
		}
		return out
	}
	for _, f := range codecForms[1:] {
		src := members(func() []byte { return f.enc(t, zeros) })
		if f.name == "snappy" {
			continue // raw snappy is one block: its length is read first
		}
		if f.name == "snappy-xerial" {
			src = xerial(make([]byte, 200<<20), 32<<10)
		}
		runtime.GC()
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		out, err := decompress(f.codec, src, bound)
		runtime.ReadMemStats(&after)
		if err == nil || out != nil {
			t.Errorf("%s: %d bytes, %v: not refused", f.name, len(out), err)
		}
		limit := uint64(16 * bound)
		if f.name == "lz4" {
			// Each lz4 frame takes block buffers (up to 4 MiB) from the
			// decoder's pool, which the race detector empties at random:
			// allocated again, and freed, frame after frame.
			limit = 40 << 20
		}
		if a := after.TotalAlloc - before.TotalAlloc; a > limit {
			t.Errorf("%s: %d bytes allocated refusing %d bytes of input under a bound of %d", f.name, a, len(src), bound)
		}
	}
}
