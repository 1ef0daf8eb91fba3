package sealstore

import (
	"context"
	"errors"
	"fmt"
	"io"
	"testing"

	"github.com/s3seal/s3seal/backend"
	"github.com/s3seal/s3seal/crypto"
)

// cuttingStore serves GET bodies cut after keep bytes, ending them with
// end: io.ErrUnexpectedEOF is what net/http reports for a body shorter
// than its Content-Length, io.EOF what a source that just stops gives.
type cuttingStore struct {
	backend.Store
	keep int64
	end  error
}

func (c *cuttingStore) GetObject(ctx context.Context, in backend.GetInput) (*backend.Object, error) {
	obj, err := c.Store.GetObject(ctx, in)
	if err != nil {
		return nil, err
	}
	obj.Body = &cutBody{r: io.LimitReader(obj.Body, c.keep), c: obj.Body, end: c.end}
	return obj, nil
}

type cutBody struct {
	r   io.Reader
	c   io.Closer
	end error
}

func (b *cutBody) Read(p []byte) (int, error) {
	n, err := b.r.Read(p)
	if err == io.EOF {
		err = b.end
	}
	return n, err
}

func (b *cutBody) Close() error { return b.c.Close() }

// TestShortBackendBodyIsIntegrityError: a backend body that ends early is
// an integrity error, from Get or from reading, never a clean end of a
// short body: wherever the cut is, for whole and ranged GETs, whichever
// way the body ends.
func TestShortBackendBodyIsIntegrityError(t *testing.T) {
	f := newFixture(t)
	const size = 3*65536 + 500
	data := randBytes(size, 41)
	f.put(t, "obj", data)
	seg := int64(crypto.SegmentSize + crypto.SegmentOverhead)
	cuts := []struct {
		name string
		keep int64 // bytes of the backend body delivered
	}{
		{"no byte", 0},
		{"inside the first nonce", 5},
		{"inside the first ciphertext", 2000},
		{"one byte short of the first segment", seg - 1},
		{"at a segment boundary", seg},
		{"inside a later segment", 2*seg + 300},
	}
	ranges := []struct {
		name string
		rng  *Range
		body int64 // backend body length the range needs
	}{
		{"whole", nil, crypto.CiphertextSize(size)},
		{"range to the end", &Range{First: 100, Last: -1}, crypto.CiphertextSize(size)},
		{"range of three segments", &Range{First: 10, Last: 2*65536 + 10}, 3 * seg},
	}
	for _, rg := range ranges {
		all := append(cuts, struct {
			name string
			keep int64
		}{"one byte short", rg.body - 1})
		for _, c := range all {
			for _, end := range []error{io.ErrUnexpectedEOF, io.EOF} {
				t.Run(fmt.Sprintf("%s/%s/%v", rg.name, c.name, end), func(t *testing.T) {
					st, _ := New(Direct(&cuttingStore{Store: f.be, keep: c.keep, end: end}), f.kr, Options{SpoolDir: t.TempDir()})
					_, rd, err := st.Get(f.ctx, bucket, "obj", rg.rng)
					if err == nil {
						var got []byte
						got, err = io.ReadAll(io.LimitReader(rd, rd.Len))
						rd.Close()
						if err == nil {
							t.Fatalf("read %d of %d bytes and a clean end", len(got), rd.Len)
						}
					}
					if !errors.Is(err, ErrIntegrity) {
						t.Fatalf("error %v does not match ErrIntegrity", err)
					}
				})
			}
		}
	}
}
