package kafkaproxy

import (
	"encoding/json"
	"maps"
	"slices"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/s3seal/s3seal/lfs"
)

// logBatch is a batch at offset first of producer pid's transaction: a
// control batch when marker is 0 (abort), 1 (commit) or 3 (a marker whose
// key is cut short), else a batch of records whose values are vals; with
// pid -1, a batch outside any transaction.
func logBatch(t *testing.T, first, pid int64, marker byte, vals ...[]byte) []byte {
	t.Helper()
	var raw []byte
	attrs := int16(attrTxn)
	if pid < 0 {
		attrs = 0
	}
	control := marker <= 1 || marker == cutMarker
	if control {
		attrs |= attrControl
		vals = [][]byte{nil}
	}
	for i, v := range vals {
		r := kmsg.Record{OffsetDelta: int32(i), Value: v}
		if control {
			r.Key = []byte{0, 0, 0, marker} // version 0, abort or commit
			if marker == cutMarker {
				r.Key = r.Key[:2]
			}
		}
		raw = encodeRecord(raw, &r)
	}
	b := batch{RecordBatch: kmsg.RecordBatch{FirstOffset: first, Magic: 2, Attributes: attrs, LastOffsetDelta: int32(len(vals) - 1),
		ProducerID: pid, NumRecords: int32(len(vals)), PartitionLeaderEpoch: -1}}
	out, err := b.rebuild(raw)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

const (
	abort     = 0
	commit    = 1
	data      = 2
	cutMarker = 3
)

func envelopeValue(t *testing.T, key string) []byte {
	t.Helper()
	v, err := json.Marshal(lfs.Envelope{Version: 1, Bucket: testBucket, Key: key})
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// readNames reads the batches raw from offset from, as a fetch answer,
// and returns the keys named (those of open transactions included), the
// keys still in a transaction with no marker, and the offset after the
// last batch.
func readNames(t *testing.T, raw []byte, from int64) (named, open []string, next int64) {
	t.Helper()
	n := newLogNames(testBucket, from)
	if err := n.add(raw, 1<<20); err != nil {
		t.Fatal(err)
	}
	for _, keys := range n.open {
		for _, k := range keys {
			if !n.holdsOpen(map[string]bool{k: true}) {
				t.Fatalf("%s is open, and holdsOpen does not say so", k)
			}
			open = append(open, k)
		}
	}
	slices.Sort(open)
	return slices.Sorted(maps.Keys(n.result())), open, n.from
}

// A fetch answer may start before the offset asked (a broker answers from
// the start of a batch, or sends more than asked): batches ending before
// it are not read, and the producer's next transaction, committed after
// it, is.
func TestLogNamesStartAtTheOffsetAsked(t *testing.T) {
	const pid = 7
	var recs []byte
	recs = append(recs, logBatch(t, 10, pid, data, envelopeValue(t, "aborted"))...)
	recs = append(recs, logBatch(t, 11, pid, abort)...)
	recs = append(recs, logBatch(t, 12, pid, data, envelopeValue(t, "committed"))...)
	recs = append(recs, logBatch(t, 13, pid, commit)...)
	named, open, next := readNames(t, recs, 12)
	if next != 14 {
		t.Errorf("next offset %d, want 14", next)
	}
	if !slices.Equal(named, []string{"committed"}) || len(open) != 0 {
		t.Fatalf("named %v, open %v, want only the committed transaction's envelope named", named, open)
	}
}

// Transactions are judged by their markers, each producer's apart: a
// commit names its records' blobs, an abort does not, another producer's
// marker ends nothing of this one, and a transaction with no marker yet
// (still open, or just aborted with its marker not yet written) names its
// blobs, and says they are open (an abort waits for their marker). A
// record outside any
// transaction names its blob at once, and a marker whose type cannot be
// read counts as a commit (keeping is the safe side).
func TestLogNamesFollowMarkersPerProducer(t *testing.T) {
	var recs []byte
	recs = append(recs, logBatch(t, 10, 7, data, envelopeValue(t, "open7"))...)
	recs = append(recs, logBatch(t, 11, 8, data, envelopeValue(t, "aborted8"))...)
	recs = append(recs, logBatch(t, 12, -1, data, envelopeValue(t, "plain"))...)
	recs = append(recs, logBatch(t, 13, 8, abort)...)
	recs = append(recs, logBatch(t, 14, 9, data, envelopeValue(t, "committed9a"), envelopeValue(t, "committed9b"))...)
	recs = append(recs, logBatch(t, 16, 8, commit)...) // producer 8 has nothing open: names nothing
	recs = append(recs, logBatch(t, 17, 9, commit)...)
	recs = append(recs, logBatch(t, 18, 10, data, envelopeValue(t, "cut10"))...)
	recs = append(recs, logBatch(t, 19, 10, cutMarker)...)
	named, open, next := readNames(t, recs, 10)
	if next != 20 {
		t.Errorf("next offset %d, want 20", next)
	}
	if want := []string{"committed9a", "committed9b", "cut10", "open7", "plain"}; !slices.Equal(named, want) {
		t.Errorf("named %v, want %v", named, want)
	}
	if want := []string{"open7"}; !slices.Equal(open, want) {
		t.Errorf("open %v, want %v", open, want)
	}
}

// A record whose offset delta puts it before the offset asked (a broker's
// mistake) still names its blob: naming one more keeps one more, hiding
// one would delete a committed record's blob.
func TestLogNamesRecordsWhateverTheirOffsetDelta(t *testing.T) {
	r := kmsg.Record{OffsetDelta: -5, Value: envelopeValue(t, "named")}
	b := batch{RecordBatch: kmsg.RecordBatch{FirstOffset: 12, Magic: 2, ProducerID: -1, ProducerEpoch: -1, FirstSequence: -1,
		NumRecords: 1, PartitionLeaderEpoch: -1}}
	raw, err := b.rebuild(encodeRecord(nil, &r))
	if err != nil {
		t.Fatal(err)
	}
	if named, _, _ := readNames(t, raw, 12); !slices.Equal(named, []string{"named"}) {
		t.Fatalf("named %v: the record's envelope was not read", named)
	}
}
