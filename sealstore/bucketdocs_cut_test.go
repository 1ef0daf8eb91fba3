package sealstore

import (
	"context"
	"io"
	"strings"
	"testing"

	"github.com/s3seal/s3seal/backend"
)

// cutDocBodies serves every bucket document's body cut to n bytes, with a
// clean end.
type cutDocBodies struct {
	backend.Store
	n int64
}

func (c cutDocBodies) GetObject(ctx context.Context, in backend.GetInput) (*backend.Object, error) {
	o, err := c.Store.GetObject(ctx, in)
	if err != nil || !strings.HasPrefix(in.Key, BucketDocPrefix) {
		return o, err
	}
	body := o.Body
	o.Body = struct {
		io.Reader
		io.Closer
	}{io.LimitReader(body, c.n), body}
	return o, nil
}

// TestBucketDocsRefuseCutBodies: a document whose body the store cuts
// short (at any length) is an error, never a shorter document.
func TestBucketDocsRefuseCutBodies(t *testing.T) {
	f := newFixture(t)
	doc := []byte(strings.Repeat(`{"Statement":[]}`, 300))
	if err := f.st.PutBucketDoc(f.ctx, bucket, "policy", doc); err != nil {
		t.Fatal(err)
	}
	for _, n := range []int64{0, 1, 16, 28, 100, int64(len(doc)) / 2, int64(len(doc)), int64(len(doc)) + 15} {
		st, err := New(Direct(cutDocBodies{f.be, n}), f.kr, Options{SpoolDir: t.TempDir()})
		if err != nil {
			t.Fatal(err)
		}
		docs, err := st.BucketDocs(f.ctx, bucket)
		if err == nil {
			t.Errorf("body cut to %d bytes: read %d bytes of the policy, no error", n, len(docs["policy"]))
		}
	}
}
