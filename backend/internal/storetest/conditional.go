package storetest

import (
	"bytes"
	"context"
	"testing"

	"github.com/s3seal/s3seal/backend"
)

// testConditional: conditional PUTs are decided by the store, on its own
// ETag, with S3's codes.
func testConditional(ctx context.Context, t *testing.T, st backend.Store, bucket string) {
	cput := func(key string, data []byte, ifMatch string, ifNoneMatch bool) (backend.PutOutput, error) {
		return st.PutObject(ctx, backend.PutInput{Bucket: bucket, Key: key, Body: bytes.NewReader(data), Size: int64(len(data)),
			Meta: map[string]string{"v": string(data), "only-" + string(data): "1"}, IfMatch: ifMatch, IfNoneMatch: ifNoneMatch})
	}
	first, err := cput("cond", []byte("one"), "", true)
	Must(t, err)
	_, err = cput("cond", []byte("two"), "", true)
	WantCode(t, err, "PreconditionFailed", 412)
	_, err = cput("cond", []byte("two"), md5hex([]byte("other")), false)
	WantCode(t, err, "PreconditionFailed", 412)
	_, err = cput("missing", []byte("two"), first.ETag, false)
	WantCode(t, err, "NoSuchKey", 404)
	info, err := st.HeadObject(ctx, bucket, "cond")
	Must(t, err)
	if info.ETag != first.ETag || info.Meta["v"] != "one" {
		t.Fatalf("object after refused PUTs: %+v, want the first", info)
	}
	second, err := cput("cond", []byte("two"), first.ETag, false)
	Must(t, err)
	info, err = st.HeadObject(ctx, bucket, "cond")
	Must(t, err)
	if info.ETag != second.ETag || info.Meta["v"] != "two" || info.Meta["only-one"] != "" {
		t.Fatalf("object after If-Match PUT: %+v, want the second's metadata only", info)
	}
	// The old ETag no longer matches.
	_, err = cput("cond", []byte("three"), first.ETag, false)
	WantCode(t, err, "PreconditionFailed", 412)
}
