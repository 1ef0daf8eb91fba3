package kafkaproxy

import (
	"bytes"
	"runtime"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// testBatch encodes one uncompressed batch of records (magic 2, CRC set).
func testBatch(t *testing.T, recs ...kmsg.Record) []byte {
	t.Helper()
	var raw []byte
	for i := range recs {
		recs[i].OffsetDelta = int32(i)
		raw = encodeRecord(raw, &recs[i])
	}
	b := batch{RecordBatch: kmsg.RecordBatch{Magic: 2, ProducerID: -1, ProducerEpoch: -1, FirstSequence: -1,
		LastOffsetDelta: int32(len(recs) - 1), NumRecords: int32(len(recs))}}
	out, err := b.rebuild(raw)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func plainRecord(v string) kmsg.Record {
	return kmsg.Record{Value: []byte(v), Headers: []kmsg.Header{{Key: "app", Value: []byte("kept")}}}
}

func markedRecord(v []byte) kmsg.Record {
	return kmsg.Record{Value: v, Headers: []kmsg.Header{{Key: "LFS_BLOB"}, {Key: "content-type", Value: []byte("x/y")}}}
}

// decodeAll returns every record of records, batch by batch.
func decodeAll(t *testing.T, records []byte) [][]kmsg.Record {
	t.Helper()
	bs, err := splitBatches(records)
	if err != nil {
		t.Fatal(err)
	}
	lim := batchLimits{decompressed: 64 << 20, headers: maxHeaders}
	var out [][]kmsg.Record
	for i := range bs {
		raw, err := bs[i].records(lim)
		if err != nil {
			t.Fatal(err)
		}
		var recs []kmsg.Record
		if err := eachRecord(raw, bs[i].NumRecords, lim, func(r *kmsg.Record, _ []byte) error {
			c := *r
			c.Headers = append([]kmsg.Header(nil), r.Headers...)
			recs = append(recs, c)
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		out = append(out, recs)
	}
	return out
}

// Records without a marked value come back as they are, not copied; in a
// partition of three batches whose middle one holds a marked record
// between two plain ones, the first and last batches keep their bytes and
// the middle one has the marked value replaced, LFS_BLOB dropped, and
// every other record and header where it was.
func TestRewriteRecordsCopiesOnlyWhatChanges(t *testing.T) {
	lim := batchLimits{decompressed: 64 << 20, headers: maxHeaders}
	never := func(*batch, *kmsg.Record) ([]byte, error) {
		t.Fatal("store called for a record without LFS_BLOB")
		return nil, nil
	}
	plain := append(testBatch(t, plainRecord("a"), plainRecord("b")), testBatch(t, plainRecord("c"))...)
	got, err := rewriteRecords(plain, lim, never)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(plain) || &got[0] != &plain[0] {
		t.Fatal("records without a marked value were copied")
	}

	first, last := testBatch(t, plainRecord("a")), testBatch(t, plainRecord("z"))
	blob := bytes.Repeat([]byte{7}, 1000)
	var records []byte
	records = append(records, first...)
	records = append(records, testBatch(t, plainRecord("b"), markedRecord(blob), plainRecord("c"))...)
	records = append(records, last...)
	stored := 0
	got, err = rewriteRecords(records, lim, func(_ *batch, r *kmsg.Record) ([]byte, error) {
		if !bytes.Equal(r.Value, blob) {
			t.Fatal("store was given another value")
		}
		stored++
		return []byte("envelope"), nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if stored != 1 {
		t.Fatalf("store called %d times", stored)
	}
	if !bytes.HasPrefix(got, first) || !bytes.HasSuffix(got, last) {
		t.Fatal("the batches without a marked record did not keep their bytes")
	}
	bs := decodeAll(t, got)
	if len(bs) != 3 || len(bs[1]) != 3 {
		t.Fatalf("got %d batches, the middle one of %d records", len(bs), len(bs[1]))
	}
	mid := bs[1]
	if string(mid[0].Value) != "b" || string(mid[1].Value) != "envelope" || string(mid[2].Value) != "c" {
		t.Fatalf("middle batch values %q %q %q", mid[0].Value, mid[1].Value, mid[2].Value)
	}
	if len(mid[0].Headers) != 1 || mid[0].Headers[0].Key != "app" || len(mid[2].Headers) != 1 {
		t.Fatal("a plain record's headers changed")
	}
	if h := mid[1].Headers; len(h) != 1 || h[0].Key != "content-type" || string(h[0].Value) != "x/y" {
		t.Fatalf("the marked record's headers are %+v, want content-type alone", h)
	}
	for i, r := range mid {
		if r.OffsetDelta != int32(i) {
			t.Fatalf("record %d has offset delta %d", i, r.OffsetDelta)
		}
	}
}

// Rewriting a request of one large marked record allocates about nothing
// beside it: the value is read where it is, and no buffer the size of the
// request is made for the small records that replace it.
func TestRewriteRecordsAllocatesNoCopyOfTheRequest(t *testing.T) {
	lim := batchLimits{decompressed: 64 << 20, headers: maxHeaders}
	records := testBatch(t, markedRecord(bytes.Repeat([]byte{1}, 16<<20)))
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	got, err := rewriteRecords(records, lim, func(*batch, *kmsg.Record) ([]byte, error) { return []byte("envelope"), nil })
	runtime.ReadMemStats(&after)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) > 200 {
		t.Fatalf("the rewritten batch is %d bytes", len(got))
	}
	if n := after.TotalAlloc - before.TotalAlloc; n > 1<<20 {
		t.Fatalf("rewriting a 16 MiB record allocated %d bytes", n)
	}
}
