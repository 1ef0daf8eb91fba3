package sealstore

import (
	"testing"

	"github.com/s3seal/s3seal/backend"
)

// Moto ignores ListMultipartUploads' delimiter and max-uploads; s3seal's
// listing still pages and rolls up as S3 does. Also on moto: an upload in
// a missing bucket is NoSuchBucket, not NoSuchUpload.
func TestListUploadsPagingOnMoto(t *testing.T) {
	f := motoFixture(t)
	for _, k := range []string{"a/1", "a/2", "b", "c"} {
		if _, err := f.st.CreateMultipart(f.ctx, CreateMultipartInput{Bucket: bucket, Key: k}); err != nil {
			t.Fatal(err)
		}
	}
	out, err := f.st.ListUploads(f.ctx, backend.ListUploadsInput{Bucket: bucket, Delimiter: "/", MaxUploads: 2})
	if err != nil {
		t.Fatal(err)
	}
	if len(out.CommonPrefixes) != 1 || out.CommonPrefixes[0] != "a/" || len(out.Uploads) != 1 || out.Uploads[0].Key != "b" ||
		!out.IsTruncated || out.NextKeyMarker != "b" {
		t.Errorf("first page: %+v", out)
	}
	out, err = f.st.ListUploads(f.ctx, backend.ListUploadsInput{Bucket: bucket, Delimiter: "/", KeyMarker: out.NextKeyMarker})
	if err != nil || len(out.Uploads) != 1 || out.Uploads[0].Key != "c" || len(out.CommonPrefixes) != 0 || out.IsTruncated {
		t.Errorf("second page: %+v, %v", out, err)
	}
	if err := f.st.AbortMultipart(f.ctx, "no-such-bucket-d1", "k", "id"); errorCode(err) != "NoSuchBucket" {
		t.Errorf("abort in a missing bucket: %v, want NoSuchBucket", err)
	}
}

// TestListUploadsDelimiterPagingEndsOnMoto: paging ListMultipartUploads
// with a delimiter on a backend that ignores markers and delimiter (moto)
// ends, as on S3: a page cut at the common prefix "a/" answers
// NextKeyMarker "a/", and the next page, asked with key-marker "a/",
// answers "b" (not "a/1" rolled up into "a/" again, forever).
func TestListUploadsDelimiterPagingEndsOnMoto(t *testing.T) {
	f := motoFixture(t)
	for _, k := range []string{"a/1", "a/2", "b"} {
		if _, err := f.st.CreateMultipart(f.ctx, CreateMultipartInput{Bucket: bucket, Key: k}); err != nil {
			t.Fatal(err)
		}
	}
	in := backend.ListUploadsInput{Bucket: bucket, Delimiter: "/", MaxUploads: 1}
	var got []string
	for page := 0; page < 5; page++ {
		out, err := f.st.ListUploads(f.ctx, in)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, out.CommonPrefixes...)
		for _, u := range out.Uploads {
			got = append(got, u.Key)
		}
		if !out.IsTruncated {
			break
		}
		in.KeyMarker, in.UploadIDMarker = out.NextKeyMarker, out.NextUploadIDMarker
	}
	if len(got) != 2 || got[0] != "a/" || got[1] != "b" {
		t.Errorf("paged listing %q, want [a/ b] (each once, paging ends)", got)
	}
}
