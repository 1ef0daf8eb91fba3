package sealstore

import (
	"errors"
	"io"
	"testing"

	"github.com/s3seal/s3seal/crypto"
)

// TestMultipartCutAtPartBoundaries: whole and ranged GETs
// of a multipart object whose backend body is cut at and around part
// boundaries, including right before an empty last part, fail; none ends
// cleanly short.
func TestMultipartCutAtPartBoundaries(t *testing.T) {
	f := newFixture(t)
	p1, p2, p3 := randBytes(5*mib+3, 51), randBytes(5*mib, 52), []byte{}
	id := f.create(t, "cut")
	e1, e2, e3 := f.part(t, f.st, "cut", id, 1, p1), f.part(t, f.st, "cut", id, 2, p2), f.part(t, f.st, "cut", id, 7, p3)
	if _, err := f.st.CompleteMultipart(f.ctx, CompleteInput{ExpectSize: -1, Bucket: bucket, Key: "cut", UploadID: id,
		Parts: completeParts([]int{1, 2, 7}, []string{e1.ETag, e2.ETag, e3.ETag})}); err != nil {
		t.Fatal(err)
	}
	c1, c2 := crypto.CiphertextSize(int64(len(p1))), crypto.CiphertextSize(int64(len(p2)))
	for _, keep := range []int64{0, c1 - 1, c1, c1 + 1, c1 + 12, c1 + c2 - 1, c1 + c2, c1 + c2 + 27} {
		for _, end := range []error{io.EOF, io.ErrUnexpectedEOF} {
			cs := &cuttingStore{Store: f.be, keep: keep, end: end}
			st, _ := New(Direct(cs), f.kr, Options{SpoolDir: t.TempDir()})
			for _, rng := range []*Range{nil, {First: 5, Last: -1}, {First: 0, Last: int64(len(p1))}, {Part: 2}, {Part: 1}} {
				_, rd, err := st.Get(f.ctx, bucket, "cut", rng)
				if err == nil {
					_, err = io.ReadAll(io.LimitReader(rd, rd.Len+1))
					rd.Close()
				}
				need := int64(-1)
				if rng != nil {
					need = 0 // ranges that end inside what was kept may succeed
					switch {
					case rng.Part == 1:
						need = c1
					case rng.Part == 2:
						need = c2 // the ranged body starts at part 2
					case rng.Last == int64(len(p1)):
						need = c1 + crypto.SegmentOverhead + 1
					default:
						need = c1 + c2
					}
				}
				if err == nil && (need < 0 || keep < need) {
					t.Errorf("cut at %d (%v), range %+v: read succeeded", keep, end, rng)
				}
				if err != nil && !errors.Is(err, ErrIntegrity) && !errors.Is(err, crypto.ErrCorrupt) && !errors.Is(err, io.ErrUnexpectedEOF) {
					t.Logf("cut at %d, range %+v: %v", keep, rng, err)
				}
			}
		}
	}
}
