package backend_test

import (
	"bytes"
	"context"
	"testing"

	"github.com/s3seal/s3seal/backend"
	"github.com/s3seal/s3seal/backend/embedded"
	"github.com/s3seal/s3seal/backend/internal/storetest"
	"github.com/s3seal/s3seal/internal/moto"
)

// ObjectTagging reads an object's tags in x-amz-tagging's encoding (so
// they can be set again as read), of the current or of an older version;
// the embedded store keeps them in its sidecar.
func TestMotoObjectTagging(t *testing.T) {
	st, err := backend.NewS3(backend.S3Config{Endpoint: moto.Start(t), AccessKey: "test", SecretKey: "test", PathStyle: true})
	storetest.Must(t, err)
	ctx := context.Background()
	storetest.Must(t, st.CreateBucket(ctx, "tags"))
	storetest.Must(t, st.PutBucketVersioning(ctx, "tags", "Enabled"))
	put := func(tagging string) string {
		out, err := st.PutObject(ctx, backend.PutInput{Bucket: "tags", Key: "k", Body: bytes.NewReader([]byte("x")), Size: 1,
			Protect: backend.Protection{Tagging: tagging}})
		storetest.Must(t, err)
		return out.VersionID
	}
	old := put("tier=gold&note=a%20b%2Fc%2Bd")
	put("")
	if got, err := st.ObjectTagging(ctx, "tags", "k", old); err != nil || got != "tier=gold&note=a%20b%2Fc%2Bd" {
		t.Errorf("tags of the old version: %q, %v", got, err)
	}
	if got, err := st.ObjectTagging(ctx, "tags", "k", ""); err != nil || got != "" {
		t.Errorf("tags of the current version: %q, %v", got, err)
	}
	if _, err := st.ObjectTagging(ctx, "tags", "missing", ""); !backend.IsNotFound(err) {
		t.Errorf("tags of a missing key: %v", err)
	}

	emb, closer, err := embedded.NewStore(t.TempDir())
	storetest.Must(t, err)
	defer closer.Close()
	storetest.Must(t, emb.CreateBucket(ctx, "bkt"))
	_, err = emb.PutObject(ctx, backend.PutInput{Bucket: "bkt", Key: "k", Body: bytes.NewReader([]byte("x")), Size: 1,
		Protect: backend.Protection{Tagging: "a=b%20c"}})
	storetest.Must(t, err)
	if got, err := emb.ObjectTagging(ctx, "bkt", "k", ""); err != nil || got != "a=b%20c" {
		t.Errorf("embedded store: %q, %v", got, err)
	}
}
