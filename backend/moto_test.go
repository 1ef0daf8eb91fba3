package backend_test

import (
	"context"
	"testing"

	"github.com/s3seal/s3seal/backend"
	"github.com/s3seal/s3seal/backend/internal/storetest"
	"github.com/s3seal/s3seal/internal/moto"
)

func TestMotoContract(t *testing.T) {
	endpoint := moto.Start(t)
	st, err := backend.NewS3(backend.S3Config{Endpoint: endpoint, AccessKey: "test", SecretKey: "test", PathStyle: true})
	storetest.Must(t, err)
	storetest.ContractWith(t, st, storetest.Quirks{NoMD5Check: true, LaxMultipart: true, NoCopySourceIfMatch: true})

	// V2 with FetchOwner carries the owner (moto, like AWS, sends it).
	ctx := context.Background()
	storetest.Must(t, st.CreateBucket(ctx, "owner-test"))
	storetest.Put(ctx, t, st, "owner-test", "k", []byte("x"), nil, backend.Headers{})
	page, err := st.ListObjects(ctx, backend.ListInput{Bucket: "owner-test", V2: true, FetchOwner: true})
	storetest.Must(t, err)
	if len(page.Entries) != 1 || page.Entries[0].OwnerID == "" {
		t.Errorf("FetchOwner listing = %+v, want an owner", page.Entries)
	}
}

func TestMotoClassRedirect(t *testing.T) {
	st, err := backend.NewS3(backend.S3Config{Endpoint: moto.Start(t), AccessKey: "test", SecretKey: "test", PathStyle: true})
	storetest.Must(t, err)
	storetest.ClassRedirect(t, st, false)
}

func TestMotoKeyLayouts(t *testing.T) {
	st, err := backend.NewS3(backend.S3Config{Endpoint: moto.Start(t), AccessKey: "test", SecretKey: "test", PathStyle: true})
	storetest.Must(t, err)
	storetest.KeyLayouts(t, st, false, "")
}

// TestMotoVersions: version ids from every write, reads and copies of a
// version, delete markers as GET reports them, conditional deletes, and
// ListObjectVersions in S3's order with paging.
func TestMotoVersions(t *testing.T) {
	endpoint := moto.Start(t)
	st, err := backend.NewS3(backend.S3Config{Endpoint: endpoint, AccessKey: "test", SecretKey: "test", PathStyle: true})
	storetest.Must(t, err)
	storetest.Versions(t, st)
}
