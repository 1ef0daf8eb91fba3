package backend

import (
	"context"
	"testing"
)

// testClassRedirect: the storage class and website redirect location of a
// PUT and of CreateMultipartUpload are kept and reported by HEAD, GET and
// (the class) listings, on every store. uploadClass says whether the store
// reports an upload's class in ListMultipartUploads (moto 5 says STANDARD).
func testClassRedirect(t *testing.T, st Store, uploadClass bool) {
	ctx := context.Background()
	bucket := "class-" + randHex(t, 4)
	must(t, st.CreateBucket(ctx, bucket))
	put(ctx, t, st, bucket, "ia", []byte("x"), nil, Headers{StorageClass: "STANDARD_IA", WebsiteRedirectLocation: "/to"})
	info, err := st.HeadObject(ctx, bucket, "ia")
	must(t, err)
	if info.StorageClass != "STANDARD_IA" || info.Headers.StorageClass != "STANDARD_IA" || info.Headers.WebsiteRedirectLocation != "/to" {
		t.Errorf("HEAD: class %q/%q redirect %q", info.StorageClass, info.Headers.StorageClass, info.Headers.WebsiteRedirectLocation)
	}
	obj, err := st.GetObject(ctx, GetInput{Bucket: bucket, Key: "ia"})
	must(t, err)
	obj.Body.Close()
	if obj.Info.StorageClass != "STANDARD_IA" || obj.Info.Headers.WebsiteRedirectLocation != "/to" {
		t.Errorf("GET: class %q redirect %q", obj.Info.StorageClass, obj.Info.Headers.WebsiteRedirectLocation)
	}
	page, err := st.ListObjects(ctx, ListInput{Bucket: bucket, V2: true})
	must(t, err)
	if len(page.Entries) != 1 || page.Entries[0].StorageClass != "STANDARD_IA" {
		t.Errorf("listing: %+v", page.Entries)
	}
	id, err := st.CreateMultipartUpload(ctx, CreateMultipartInput{Bucket: bucket, Key: "mp",
		Headers: Headers{StorageClass: "ONEZONE_IA", WebsiteRedirectLocation: "https://example.com/"}})
	must(t, err)
	ups, err := st.ListMultipartUploads(ctx, ListUploadsInput{Bucket: bucket, MaxUploads: 10})
	must(t, err)
	if len(ups.Uploads) != 1 || (uploadClass && ups.Uploads[0].StorageClass != "ONEZONE_IA") {
		t.Errorf("uploads: %+v, want the upload's class", ups.Uploads)
	}
	must(t, st.AbortMultipartUpload(ctx, bucket, "mp", id))
}

func TestEmbeddedClassRedirect(t *testing.T) {
	_, st := startEmbedded(t, t.TempDir())
	testClassRedirect(t, st, true)
}

func TestMotoClassRedirect(t *testing.T) {
	st, err := NewS3(S3Config{Endpoint: startMoto(t), AccessKey: "test", SecretKey: "test", PathStyle: true})
	must(t, err)
	testClassRedirect(t, st, false)
}
