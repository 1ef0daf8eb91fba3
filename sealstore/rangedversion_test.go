package sealstore

import (
	"bytes"
	"context"
	"io"
	"maps"
	"strings"
	"testing"

	"github.com/s3seal/s3seal/backend"
)

// staleRangeStore answers every ranged GET of key with the object the key
// held before (an older version, complete and authentic), ignoring the
// If-Match that pins the GET to the version its HEAD saw: a hostile
// store, or one that ignores If-Match while a writer replaces the object.
type staleRangeStore struct {
	backend.Store
	key  string
	info backend.ObjectInfo
	body []byte
}

func (s *staleRangeStore) GetObject(ctx context.Context, in backend.GetInput) (*backend.Object, error) {
	if in.Key != s.key || in.Range == nil || s.body == nil {
		return s.Store.GetObject(ctx, in)
	}
	end := min(in.Range.Off+in.Range.Len, int64(len(s.body)))
	return &backend.Object{Info: s.info, Body: io.NopCloser(bytes.NewReader(s.body[in.Range.Off:end]))}, nil
}

// TestRangedGetServesOneVersion: a ranged GET describes the object by a
// HEAD and reads its bytes by a second, ranged GET. A store that answers
// the GET with another version of the key (it ignores If-Match) must not
// make s3seal serve one version's bytes under the other's ETag, metadata
// and content headers, a combination no client wrote: the bytes read are
// those of the object described, or the read fails.
func TestRangedGetServesOneVersion(t *testing.T) {
	f := newFixture(t)
	old := []byte(strings.Repeat("<script>old version</script>", 10))
	cur := bytes.Repeat([]byte("x"), len(old))
	if _, err := f.st.Put(f.ctx, PutInput{Bucket: bucket, Key: "k", Body: bytes.NewReader(old), Size: int64(len(old)),
		Meta: map[string]string{"v": "old"}, Headers: backend.Headers{ContentType: "text/html"}}); err != nil {
		t.Fatal(err)
	}
	obj, err := f.be.GetObject(f.ctx, backend.GetInput{Bucket: bucket, Key: "k"})
	if err != nil {
		t.Fatal(err)
	}
	stale := &staleRangeStore{Store: f.be, key: "k", info: obj.Info}
	stale.info.Meta = maps.Clone(obj.Info.Meta)
	stale.body, _ = io.ReadAll(obj.Body)
	obj.Body.Close()
	if _, err := f.st.Put(f.ctx, PutInput{Bucket: bucket, Key: "k", Body: bytes.NewReader(cur), Size: int64(len(cur)),
		Meta: map[string]string{"v": "current"}, Headers: backend.Headers{ContentType: "text/plain"}}); err != nil {
		t.Fatal(err)
	}
	st, err := New(Direct(stale), f.kr, Options{SpoolDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	info, rd, err := st.Get(f.ctx, bucket, "k", &Range{First: 0, Last: int64(len(old)) - 1})
	if err != nil {
		t.Logf("refused: %v", err)
		return
	}
	got, err := io.ReadAll(rd)
	rd.Close()
	if err == nil && !bytes.Equal(got, cur) {
		t.Errorf("served %q as the object with metadata %v, content type %q and ETag %s (whose bytes are %q)",
			got[:20], info.Meta, info.Headers.ContentType, info.ETag, cur[:20])
	}
}
