package storetest

import (
	"context"
	"testing"

	"github.com/s3seal/s3seal/backend"
)

// ClassRedirect checks that the storage class and website redirect
// location of a PUT and of CreateMultipartUpload are kept and reported by
// HEAD, GET and (the class) listings, on every store. uploadClass says whether the store
// reports an upload's class in ListMultipartUploads (moto 5 says STANDARD).
func ClassRedirect(t *testing.T, st backend.Store, uploadClass bool) {
	ctx := context.Background()
	bucket := "class-" + randHex(t, 4)
	Must(t, st.CreateBucket(ctx, bucket))
	Put(ctx, t, st, bucket, "ia", []byte("x"), nil, backend.Headers{StorageClass: "STANDARD_IA", WebsiteRedirectLocation: "/to"})
	info, err := st.HeadObject(ctx, bucket, "ia")
	Must(t, err)
	if info.StorageClass != "STANDARD_IA" || info.Headers.StorageClass != "STANDARD_IA" || info.Headers.WebsiteRedirectLocation != "/to" {
		t.Errorf("HEAD: class %q/%q redirect %q", info.StorageClass, info.Headers.StorageClass, info.Headers.WebsiteRedirectLocation)
	}
	obj, err := st.GetObject(ctx, backend.GetInput{Bucket: bucket, Key: "ia"})
	Must(t, err)
	obj.Body.Close()
	if obj.Info.StorageClass != "STANDARD_IA" || obj.Info.Headers.WebsiteRedirectLocation != "/to" {
		t.Errorf("GET: class %q redirect %q", obj.Info.StorageClass, obj.Info.Headers.WebsiteRedirectLocation)
	}
	page, err := st.ListObjects(ctx, backend.ListInput{Bucket: bucket, V2: true})
	Must(t, err)
	if len(page.Entries) != 1 || page.Entries[0].StorageClass != "STANDARD_IA" {
		t.Errorf("listing: %+v", page.Entries)
	}
	id, err := st.CreateMultipartUpload(ctx, backend.CreateMultipartInput{Bucket: bucket, Key: "mp",
		Headers: backend.Headers{StorageClass: "ONEZONE_IA", WebsiteRedirectLocation: "https://example.com/"}})
	Must(t, err)
	ups, err := st.ListMultipartUploads(ctx, backend.ListUploadsInput{Bucket: bucket, MaxUploads: 10})
	Must(t, err)
	if len(ups.Uploads) != 1 || (uploadClass && ups.Uploads[0].StorageClass != "ONEZONE_IA") {
		t.Errorf("uploads: %+v, want the upload's class", ups.Uploads)
	}
	Must(t, st.AbortMultipartUpload(ctx, bucket, "mp", id))
}
