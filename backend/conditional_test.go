package backend

import (
	"bytes"
	"context"
	"sync"
	"testing"
)

// testConditional: conditional PUTs are decided by the store, on its own
// ETag, with S3's codes.
func testConditional(ctx context.Context, t *testing.T, st Store, bucket string) {
	cput := func(key string, data []byte, ifMatch string, ifNoneMatch bool) (PutOutput, error) {
		return st.PutObject(ctx, PutInput{Bucket: bucket, Key: key, Body: bytes.NewReader(data), Size: int64(len(data)),
			Meta: map[string]string{"v": string(data), "only-" + string(data): "1"}, IfMatch: ifMatch, IfNoneMatch: ifNoneMatch})
	}
	first, err := cput("cond", []byte("one"), "", true)
	must(t, err)
	_, err = cput("cond", []byte("two"), "", true)
	wantCode(t, err, "PreconditionFailed", 412)
	_, err = cput("cond", []byte("two"), md5hex([]byte("other")), false)
	wantCode(t, err, "PreconditionFailed", 412)
	_, err = cput("missing", []byte("two"), first.ETag, false)
	wantCode(t, err, "NoSuchKey", 404)
	info, err := st.HeadObject(ctx, bucket, "cond")
	must(t, err)
	if info.ETag != first.ETag || info.Meta["v"] != "one" {
		t.Fatalf("object after refused PUTs: %+v, want the first", info)
	}
	second, err := cput("cond", []byte("two"), first.ETag, false)
	must(t, err)
	info, err = st.HeadObject(ctx, bucket, "cond")
	must(t, err)
	if info.ETag != second.ETag || info.Meta["v"] != "two" || info.Meta["only-one"] != "" {
		t.Fatalf("object after If-Match PUT: %+v, want the second's metadata only", info)
	}
	// The old ETag no longer matches.
	_, err = cput("cond", []byte("three"), first.ETag, false)
	wantCode(t, err, "PreconditionFailed", 412)
}

// Conditional PUTs racing through the embedded store: exactly one
// If-None-Match: * PUT wins, and an If-Match chain never loses an update.
func TestEmbeddedConditionalRace(t *testing.T) {
	_, st := startEmbedded(t, t.TempDir())
	ctx := context.Background()
	must(t, st.CreateBucket(ctx, "race"))
	const n = 16
	var wg sync.WaitGroup
	var mu sync.Mutex
	won := 0
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			data := []byte{byte(i)}
			_, err := st.PutObject(ctx, PutInput{Bucket: "race", Key: "lock", Body: bytes.NewReader(data), Size: 1, IfNoneMatch: true})
			switch ErrorCode(err) {
			case "":
				mu.Lock()
				won++
				mu.Unlock()
			case "PreconditionFailed":
			default:
				t.Errorf("racing PUT: %v", err)
			}
		}()
	}
	wg.Wait()
	if won != 1 {
		t.Fatalf("%d If-None-Match PUTs succeeded, want exactly 1", won)
	}
}
