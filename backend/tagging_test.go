package backend

import (
	"bytes"
	"context"
	"testing"
)

// ObjectTagging reads an object's tags in x-amz-tagging's encoding (so
// they can be set again as read), of the current or of an older version;
// the embedded store keeps them in its sidecar.
func TestMotoObjectTagging(t *testing.T) {
	st, err := NewS3(S3Config{Endpoint: startMoto(t), AccessKey: "test", SecretKey: "test", PathStyle: true})
	must(t, err)
	ctx := context.Background()
	must(t, st.CreateBucket(ctx, "tags"))
	must(t, st.PutBucketVersioning(ctx, "tags", "Enabled"))
	put := func(tagging string) string {
		out, err := st.PutObject(ctx, PutInput{Bucket: "tags", Key: "k", Body: bytes.NewReader([]byte("x")), Size: 1,
			Protect: Protection{Tagging: tagging}})
		must(t, err)
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
	if _, err := st.ObjectTagging(ctx, "tags", "missing", ""); !IsNotFound(err) {
		t.Errorf("tags of a missing key: %v", err)
	}

	emb, closer, err := NewEmbeddedStore(t.TempDir())
	must(t, err)
	defer closer.Close()
	must(t, emb.CreateBucket(ctx, "bkt"))
	_, err = emb.PutObject(ctx, PutInput{Bucket: "bkt", Key: "k", Body: bytes.NewReader([]byte("x")), Size: 1,
		Protect: Protection{Tagging: "a=b%20c"}})
	must(t, err)
	if got, err := emb.ObjectTagging(ctx, "bkt", "k", ""); err != nil || got != "a=b%20c" {
		t.Errorf("embedded store: %q, %v", got, err)
	}
}
