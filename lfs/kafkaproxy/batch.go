package kafkaproxy

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/s2"
	"github.com/klauspost/compress/zstd"
	"github.com/pierrec/lz4/v4"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/s3seal/s3seal/lfs"
)

// A partition's records in a Produce request are record batches (magic 2,
// "v2"), one after another. Each is decoded by kmsg; its records are
// decompressed with the batch's codec, read one at a time, and written
// again only when one of them carries LFS_BLOB.

// batchError is a batch s3seal refuses, with the Kafka error the partition
// is answered with.
type batchError struct {
	code *kerr.Error
	msg  string
}

func (e *batchError) Error() string { return e.code.Message + ": " + e.msg }

func refuse(code *kerr.Error, format string, args ...any) *batchError {
	return &batchError{code: code, msg: fmt.Sprintf(format, args...)}
}

// Limits on what a batch may make s3seal hold.
type batchLimits struct {
	// decompressed bounds the records of one batch once decompressed.
	decompressed int
	// headers bounds the headers of one record.
	headers int
}

const (
	batchHeaderLen = 61 // kmsg.RecordBatch up to and including NumRecords
	crcStart       = 21 // the CRC covers attributes onward
	attrCodec      = 0x07
	attrTxn        = 0x10
	attrControl    = 0x20
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// batch is one decoded record batch and the bytes it came from.
type batch struct {
	kmsg.RecordBatch
	raw []byte
}

// splitBatches splits a partition's records into batches, checking each
// batch's length, magic and CRC.
func splitBatches(records []byte) ([]batch, error) {
	var out []batch
	for len(records) > 0 {
		if len(records) < batchHeaderLen {
			return nil, refuse(kerr.CorruptMessage, "a record batch of %d bytes is shorter than its header", len(records))
		}
		length := int64(int32(binary.BigEndian.Uint32(records[8:12])))
		if magic := int8(records[16]); magic != 2 {
			return nil, refuse(kerr.UnsupportedForMessageFormat, "record batch magic %d: only magic 2 (Kafka 0.11 on) is taken", magic)
		}
		if length < batchHeaderLen-12 || length > int64(len(records)-12) {
			return nil, refuse(kerr.CorruptMessage, "record batch length %d does not fit the %d bytes sent", length, len(records)-12)
		}
		raw := records[:12+length]
		records = records[12+length:]
		if crc32.Checksum(raw[crcStart:], castagnoli) != binary.BigEndian.Uint32(raw[17:21]) {
			return nil, refuse(kerr.CorruptMessage, "record batch CRC does not match its bytes")
		}
		var b batch
		if err := b.ReadFrom(raw); err != nil {
			return nil, refuse(kerr.CorruptMessage, "record batch: %v", err)
		}
		if b.NumRecords < 0 {
			return nil, refuse(kerr.CorruptMessage, "record batch with %d records", b.NumRecords)
		}
		b.raw = raw
		out = append(out, b)
	}
	return out, nil
}

func (b *batch) codec() kgo.CompressionCodecType {
	return kgo.CompressionCodecType(b.Attributes & attrCodec)
}

// records returns the batch's records, decompressed within lim.
func (b *batch) records(lim batchLimits) ([]byte, error) {
	return decompress(b.codec(), b.Records, lim.decompressed)
}

var errTooBig = errors.New("decompresses past the limit")

// decompress undoes codec within max bytes of output: a small batch that
// would decompress to gigabytes is refused at max, never held.
func decompress(codec kgo.CompressionCodecType, src []byte, max int) ([]byte, error) {
	var r io.Reader
	switch codec {
	case kgo.CodecNone:
		return src, nil
	case kgo.CodecGzip:
		gz, err := gzip.NewReader(bytes.NewReader(src))
		if err != nil {
			return nil, refuse(kerr.CorruptMessage, "gzip: %v", err)
		}
		r = gz
	case kgo.CodecLz4:
		r = lz4.NewReader(bytes.NewReader(src))
	case kgo.CodecSnappy:
		return unsnappy(src, max)
	case kgo.CodecZstd:
		d, err := zstd.NewReader(nil, zstd.WithDecoderConcurrency(1), zstd.WithDecoderMaxMemory(uint64(max)), zstd.WithDecoderLowmem(true))
		if err != nil {
			return nil, err
		}
		defer d.Close()
		out, err := d.DecodeAll(src, nil)
		if err != nil || len(out) > max {
			return nil, refuse(kerr.CorruptMessage, "zstd: %v", orTooBig(err))
		}
		return out, nil
	default:
		return nil, refuse(kerr.UnsupportedCompressionType, "compression codec %d", codec)
	}
	out, err := io.ReadAll(io.LimitReader(r, int64(max)+1))
	if err == nil && len(out) > max {
		err = errTooBig
	}
	if err != nil {
		return nil, refuse(kerr.CorruptMessage, "%s: %v", codecName(codec), err)
	}
	return out, nil
}

func orTooBig(err error) error {
	if err == nil {
		return errTooBig
	}
	return err
}

// xerialPrefix starts the Java client's framing of snappy ("xerial"):
// a 16-byte header, then blocks each preceded by its 4-byte length.
var xerialPrefix = []byte{130, 'S', 'N', 'A', 'P', 'P', 'Y', 0}

// unsnappy decodes raw or xerial-framed snappy. Each snappy block states
// its decoded length first, so the bound is checked before decoding.
func unsnappy(src []byte, max int) ([]byte, error) {
	blocks := [][]byte{src}
	if len(src) > 16 && bytes.HasPrefix(src, xerialPrefix) {
		blocks = nil
		for rest := src[16:]; len(rest) > 0; {
			if len(rest) < 4 {
				return nil, refuse(kerr.CorruptMessage, "snappy: truncated xerial block")
			}
			n := binary.BigEndian.Uint32(rest)
			if uint64(n) > uint64(len(rest)-4) {
				return nil, refuse(kerr.CorruptMessage, "snappy: xerial block past the end")
			}
			blocks = append(blocks, rest[4:4+n])
			rest = rest[4+n:]
		}
	}
	total := 0
	for _, b := range blocks {
		n, err := s2.DecodedLen(b)
		if err != nil {
			return nil, refuse(kerr.CorruptMessage, "snappy: %v", err)
		}
		if total += n; total > max {
			return nil, refuse(kerr.CorruptMessage, "snappy: %v", errTooBig)
		}
	}
	out := make([]byte, 0, total)
	for _, b := range blocks {
		d, err := s2.Decode(out[len(out):cap(out)], b)
		if err != nil {
			return nil, refuse(kerr.CorruptMessage, "snappy: %v", err)
		}
		out = out[:len(out)+len(d)]
	}
	return out, nil
}

func codecName(c kgo.CompressionCodecType) string {
	switch c {
	case kgo.CodecGzip:
		return "gzip"
	case kgo.CodecSnappy:
		return "snappy"
	case kgo.CodecLz4:
		return "lz4"
	case kgo.CodecZstd:
		return "zstd"
	}
	return "none"
}

// eachRecord calls fn with every record of raw (decompressed records), in
// order, decoded one at a time into the same Record. It checks that raw
// holds exactly want records and that no record has more than
// lim.headers headers before kmsg allocates them.
func eachRecord(raw []byte, want int32, lim batchLimits, fn func(r *kmsg.Record, enc []byte) error) error {
	var rec kmsg.Record
	var n int32
	for len(raw) > 0 {
		length, used := binary.Varint(raw)
		if used <= 0 || length < 0 || length > int64(len(raw)-used) {
			return refuse(kerr.CorruptMessage, "record %d: bad length", n)
		}
		enc := raw[:used+int(length)]
		raw = raw[used+int(length):]
		if n++; n > want {
			return refuse(kerr.CorruptMessage, "the batch holds more records than the %d it declares", want)
		}
		if h, ok := headerCount(enc[used:]); !ok || h > lim.headers {
			return refuse(kerr.InvalidRecord, "record %d: more than %d headers, or malformed", n-1, lim.headers)
		}
		if err := rec.ReadFrom(enc); err != nil {
			return refuse(kerr.CorruptMessage, "record %d: %v", n-1, err)
		}
		if err := fn(&rec, enc); err != nil {
			return err
		}
	}
	if n != want {
		return refuse(kerr.CorruptMessage, "the batch declares %d records and holds %d", want, n)
	}
	return nil
}

// headerCount reads a record's header count (the record after its
// length): attributes, timestamp delta, offset delta, key, value, count.
func headerCount(b []byte) (int, bool) {
	if len(b) < 1 {
		return 0, false
	}
	b = b[1:]
	for i := 0; i < 2; i++ { // timestamp and offset deltas
		_, n := binary.Varint(b)
		if n <= 0 {
			return 0, false
		}
		b = b[n:]
	}
	for i := 0; i < 2; i++ { // key, value: length (-1 null) and bytes
		l, n := binary.Varint(b)
		if n <= 0 || l > int64(len(b)-n) {
			return 0, false
		}
		b = b[n:]
		if l > 0 {
			b = b[l:]
		}
	}
	c, n := binary.Varint(b)
	if n <= 0 || c < 0 {
		return 0, false
	}
	return int(min(c, 1<<30)), true
}

// hasHeader reports whether a record carries the header key.
func hasHeader(r *kmsg.Record, key string) bool {
	for _, h := range r.Headers {
		if h.Key == key {
			return true
		}
	}
	return false
}

// rewriteRecords returns records (a partition's batches) with the value of
// every record marked LFS_BLOB replaced by what store returns for it, and
// LFS_BLOB dropped from its headers. Only what changes is copied: a batch
// is rebuilt from its first marked record on (the records before it are
// copied as they are), batches without one go on as their bytes, and
// records holding no marked record at all are returned themselves. A
// record value (up to the whole request) is never copied: store reads it
// where it came, in the request.
func rewriteRecords(records []byte, lim batchLimits, store func(b *batch, r *kmsg.Record) ([]byte, error)) ([]byte, error) {
	if len(records) == 0 {
		return records, nil
	}
	batches, err := splitBatches(records)
	if err != nil {
		return nil, err
	}
	var out []byte // the new records, from the first batch that changes
	changed := false
	pos := 0 // bytes of records before the batch at hand
	for i := range batches {
		b := &batches[i]
		raw, err := b.records(lim)
		if err != nil {
			return nil, err
		}
		// The whole batch is read before any of its values is stored: a
		// batch refused for a record after a marked one stores nothing.
		marked := false
		err = eachRecord(raw, b.NumRecords, lim, func(r *kmsg.Record, _ []byte) error {
			if hasHeader(r, lfs.BlobHeader) {
				if b.Attributes&attrControl != 0 {
					return refuse(kerr.InvalidRecord, "a control batch cannot carry an LFS blob")
				}
				marked = true
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
		if !marked {
			if changed {
				out = append(out, b.raw...)
			}
			pos += len(b.raw)
			continue
		}
		var recs []byte // the batch's new records, from its first marked one
		marked = false
		at := 0 // bytes of raw before the record at hand
		err = eachRecord(raw, b.NumRecords, lim, func(r *kmsg.Record, enc []byte) error {
			before := at
			at += len(enc)
			if !hasHeader(r, lfs.BlobHeader) {
				if marked {
					recs = append(recs, enc...)
				}
				return nil
			}
			v, err := store(b, r)
			if err != nil {
				return err
			}
			if !marked {
				marked = true
				recs = append(recs, raw[:before]...)
			}
			r.Value = v
			kept := r.Headers[:0]
			for _, h := range r.Headers {
				if h.Key != lfs.BlobHeader {
					kept = append(kept, h)
				}
			}
			r.Headers = kept
			recs = encodeRecord(recs, r)
			return nil
		})
		if err != nil {
			return nil, err
		}
		nb, err := b.rebuild(recs)
		if err != nil {
			return nil, err
		}
		if !changed {
			changed = true
			out = append(make([]byte, 0, pos+len(nb)), records[:pos]...)
		}
		out = append(out, nb...)
		pos += len(b.raw)
	}
	if !changed {
		return records, nil
	}
	return out, nil
}

// encodeRecord appends r, its Length computed, to dst.
func encodeRecord(dst []byte, r *kmsg.Record) []byte {
	r.Length = 0
	body := r.AppendTo(nil)[1:] // Length 0 takes one varint byte
	dst = binary.AppendVarint(dst, int64(len(body)))
	return append(dst, body...)
}

// rebuild re-encodes b with records (uncompressed), compressed with the
// batch's own codec, its producer id, epoch, base sequence, offsets and
// timestamps kept, and its length and CRC computed again.
func (b *batch) rebuild(records []byte) ([]byte, error) {
	codec := b.codec()
	if codec != kgo.CodecNone {
		comp, err := compressorFor(codec)
		if err != nil {
			return nil, err
		}
		var buf bytes.Buffer
		out, used := comp.Compress(&buf, records)
		if used != codec {
			return nil, fmt.Errorf("compressing with %s failed", codecName(codec))
		}
		records = append([]byte(nil), out...)
	}
	nb := b.RecordBatch
	nb.Records = records
	nb.Length, nb.CRC = 0, 0
	out := nb.AppendTo(nil)
	binary.BigEndian.PutUint32(out[8:12], uint32(len(out)-12))
	binary.BigEndian.PutUint32(out[17:21], crc32.Checksum(out[crcStart:], castagnoli))
	return out, nil
}

func compressorFor(codec kgo.CompressionCodecType) (kgo.Compressor, error) {
	switch codec {
	case kgo.CodecGzip:
		return kgo.DefaultCompressor(kgo.GzipCompression())
	case kgo.CodecSnappy:
		return kgo.DefaultCompressor(kgo.SnappyCompression())
	case kgo.CodecLz4:
		return kgo.DefaultCompressor(kgo.Lz4Compression())
	case kgo.CodecZstd:
		return kgo.DefaultCompressor(kgo.ZstdCompression())
	}
	return nil, fmt.Errorf("codec %d", codec)
}
