package sealstore

import (
	"bytes"
	"context"
	"crypto/sha512"
	"encoding/base64"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/s3seal/s3seal/backend"
	"github.com/s3seal/s3seal/backend/embedded"
	"github.com/s3seal/s3seal/crypto"
)

// slowGets counts backend GETs and how many run at once, each held for a
// moment so that concurrent ones overlap.
type slowGets struct {
	backend.Store
	gets, inFlight, maxInFlight atomic.Int64
}

func (g *slowGets) GetObject(ctx context.Context, in backend.GetInput) (*backend.Object, error) {
	g.gets.Add(1)
	n := g.inFlight.Add(1)
	defer g.inFlight.Add(-1)
	for m := g.maxInFlight.Load(); n > m && !g.maxInFlight.CompareAndSwap(m, n); m = g.maxInFlight.Load() {
	}
	time.Sleep(5 * time.Millisecond)
	return g.Store.GetObject(ctx, in)
}

// sha512Upload starts an upload of n one-line parts with SHA-512 part
// checksums on the embedded store, with the records in bodies as earlier
// s3seal wrote them (and as records too long for a key are), and returns
// the store, its GET counter, the upload id and the parts' MD5 ETags.
func sha512Upload(t *testing.T, n int) (*Store, *slowGets, string, []string) {
	t.Helper()
	be, closer, err := embedded.NewStore(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { closer.Close() })
	g := &slowGets{Store: be}
	key, _ := crypto.GenerateKey()
	kr, _ := crypto.NewKeyring("k1", map[string][]byte{"k1": key})
	st, err := New(Direct(g), kr, Options{SpoolDir: t.TempDir(), ListConcurrency: 4})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := be.CreateBucket(ctx, bucket); err != nil {
		t.Fatal(err)
	}
	id, err := st.CreateMultipart(ctx, CreateMultipartInput{Bucket: bucket, Key: "k", ChecksumAlgorithm: "sha512", ChecksumType: "COMPOSITE"})
	if err != nil {
		t.Fatal(err)
	}
	etags := make([]string, n+1)
	for i := 1; i <= n; i++ {
		data := []byte(fmt.Sprintf("part %d", i))
		sum := sha512.Sum512(data)
		val := base64.StdEncoding.EncodeToString(sum[:])
		pi, err := st.UploadPart(ctx, UploadPartInput{Bucket: bucket, Key: "k", UploadID: id, PartNumber: i,
			Body: bytes.NewReader(data), Size: int64(len(data)),
			Finalize: func() (map[string]string, error) { return map[string]string{"sha512": val}, nil }})
		if err != nil {
			t.Fatal(err)
		}
		etags[i] = pi.ETag
	}
	if m := toBodyRecords(t, be, uploadPrefix(bucket, "k", id)); m != n {
		t.Fatalf("%d of %d records moved to bodies", m, n)
	}
	return st, g, id, etags
}

// Paging through an upload whose records are in bodies lists every part
// once, in order, reading each record once, and the last page is not
// truncated.
func TestListPartsPagesLongRecords(t *testing.T) {
	st, g, id, _ := sha512Upload(t, 25)
	var got []int
	marker, pages := 0, 0
	for ; pages < 10; pages++ {
		page, err := st.ListParts(context.Background(), bucket, "k", id, marker, 10)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range page.Parts {
			got = append(got, p.PartNumber)
			if p.Checksums["sha512"] == "" {
				t.Errorf("part %d listed without its checksum", p.PartNumber)
			}
		}
		if !page.IsTruncated {
			break
		}
		marker = page.NextMarker
	}
	if len(got) != 25 || pages != 2 {
		t.Fatalf("listed %v in %d pages", got, pages+1)
	}
	for i, n := range got {
		if n != i+1 {
			t.Fatalf("listed %v", got)
		}
	}
	if n := g.gets.Load(); n != 25 {
		t.Errorf("paging through 25 parts made %d backend GETs, want 25", n)
	}
}

// Completion reads the records of the parts it is asked to complete only,
// and those ListConcurrency at a time, not one after another.
func TestCompleteReadsRecordsOfListedPartsInParallel(t *testing.T) {
	st, g, id, etags := sha512Upload(t, 30)
	u, err := st.loadUpload(context.Background(), bucket, "k", id)
	if err != nil {
		t.Fatal(err)
	}
	cur, _, _, err := st.currentParts(context.Background(), u, nil)
	if err != nil || len(cur) != 30 {
		t.Fatalf("currentParts: %d parts, %v", len(cur), err)
	}
	if m := g.maxInFlight.Load(); m < 2 || m > 4 {
		t.Errorf("reading 30 records ran at most %d GETs at once, want 2 to ListConcurrency (4)", m)
	}
	g.gets.Store(0)
	if _, err := st.CompleteMultipart(context.Background(), CompleteInput{Bucket: bucket, Key: "k", UploadID: id,
		Parts: []CompletePart{{PartNumber: 30, ETag: etags[30]}}, ExpectSize: -1}); err != nil {
		t.Fatal(err)
	}
	if n := g.gets.Load(); n > 1 {
		t.Errorf("completing 1 part of an upload of 30 made %d backend GETs, want at most 1", n)
	}
}

// A part uploaded twice at the same size leaves two records; the part the
// store kept pairs with the record of its own backend ETag, whichever
// record comes first. A record of the kept ETag with another size (not
// what the store holds) pairs with nothing.
func TestPairRecordsTakesTheKeptBodysRecord(t *testing.T) {
	const n = 1000
	kept := crypto.PartRecord{Stream: crypto.Stream{Part: 1}, PlainSize: n, PlainMD5: [16]byte{1}, BackendETag: "kept"}
	earlier := crypto.PartRecord{Stream: crypto.Stream{Part: 1}, PlainSize: n, PlainMD5: [16]byte{2}, BackendETag: "earlier"}
	parts := []backend.Part{{PartNumber: 1, ETag: `"kept"`, Size: crypto.CiphertextSize(n)}}
	for _, recs := range [][]crypto.PartRecord{{kept, earlier}, {earlier, kept}} {
		cur := map[uint32]crypto.PartRecord{}
		pairRecords(cur, parts, map[uint32][]crypto.PartRecord{1: recs})
		if got, ok := cur[1]; !ok || got.BackendETag != "kept" {
			t.Fatalf("records %s, %s: part 1 paired with %+v (%v), want the record of ETag kept", recs[0].BackendETag, recs[1].BackendETag, got, ok)
		}
	}
	other := kept
	other.PlainSize = n + 1
	cur := map[uint32]crypto.PartRecord{}
	pairRecords(cur, parts, map[uint32][]crypto.PartRecord{1: {other}})
	if got, ok := cur[1]; ok {
		t.Fatalf("a record of another size paired: %+v", got)
	}
}
