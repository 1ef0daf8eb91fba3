package storetest

import (
	"bytes"
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/s3seal/s3seal/backend"
)

// KeyLayouts checks that directory markers (keys ending in "/") are
// objects, and that a key under an object ("obj/x" beside "obj") is simply
// missing, on every store. limited is the embedded store, which refuses (with a 4xx naming
// the limit) what a file system cannot hold, and keeps directory markers
// in files named dirMarker; other stores take it.
func KeyLayouts(t *testing.T, st backend.Store, limited bool, dirMarker string) {
	ctx := context.Background()
	bucket := "keys-" + randHex(t, 4)
	Must(t, st.CreateBucket(ctx, bucket))
	Put(ctx, t, st, bucket, "dir/", nil, nil, backend.Headers{})
	Put(ctx, t, st, bucket, "dir/sub/file", []byte("f"), nil, backend.Headers{})
	Put(ctx, t, st, bucket, "obj", []byte("o"), nil, backend.Headers{})
	info, err := st.HeadObject(ctx, bucket, "dir/")
	if err != nil || info.Size != 0 {
		t.Fatalf("HEAD dir/: %+v %v", info, err)
	}
	page, err := st.ListObjects(ctx, backend.ListInput{Bucket: bucket, V2: true})
	Must(t, err)
	if got, want := EntryKeys(page.Entries), []string{"dir/", "dir/sub/file", "obj"}; !reflect.DeepEqual(got, want) {
		t.Errorf("listing %v, want %v", got, want)
	}
	page, err = st.ListObjects(ctx, backend.ListInput{Bucket: bucket, V2: true, Prefix: "dir/", Delimiter: "/"})
	Must(t, err)
	if got := EntryKeys(page.Entries); !reflect.DeepEqual(got, []string{"dir/"}) || !reflect.DeepEqual(page.CommonPrefixes, []string{"dir/sub/"}) {
		t.Errorf("listing dir/ with /: %v %v", got, page.CommonPrefixes)
	}
	// A key under an object is missing, for HEAD, GET and DELETE alike.
	_, err = st.HeadObject(ctx, bucket, "obj/x")
	WantCode(t, err, "NotFound", 404)
	_, err = st.GetObject(ctx, backend.GetInput{Bucket: bucket, Key: "obj/x"})
	WantCode(t, err, "NoSuchKey", 404)
	Must(t, st.DeleteObject(ctx, bucket, "obj/x"))
	// Deleting a prefix that is no object deletes nothing.
	Must(t, st.DeleteObject(ctx, bucket, "dir/sub"))
	Must(t, st.DeleteObject(ctx, bucket, "dir/"))
	if _, err := st.HeadObject(ctx, bucket, "dir/sub/file"); err != nil {
		t.Errorf("dir/sub/file after deleting the marker and a prefix: %v", err)
	}
	_, err = st.HeadObject(ctx, bucket, "dir/")
	WantCode(t, err, "NotFound", 404)
	if _, err := st.HeadObject(ctx, bucket, "obj"); err != nil {
		t.Errorf("obj after deleting obj/x: %v", err)
	}

	clash := map[string]string{"obj/x": "the object \"obj\" exists", "obj/": "the object \"obj\" exists", "dir": "keys under \"dir/\" exist"}
	for key, why := range clash {
		_, err := st.PutObject(ctx, backend.PutInput{Bucket: bucket, Key: key, Body: bytes.NewReader([]byte("c")), Size: 1})
		if !limited {
			Must(t, err)
			continue
		}
		WantCode(t, err, "InvalidArgument", 400)
		var e *backend.Error
		if errors.As(err, &e) && (!strings.Contains(e.Message, "embedded store cannot hold") || !strings.Contains(e.Message, why)) {
			t.Errorf("PUT %s: message %q does not name the limit (%s)", key, e.Message, why)
		}
	}
	if limited {
		_, err = st.PutObject(ctx, backend.PutInput{Bucket: bucket, Key: "a/" + strings.Repeat("s", 256), Body: bytes.NewReader(nil)})
		WantCode(t, err, "KeyTooLongError", 400)
		_, err = st.PutObject(ctx, backend.PutInput{Bucket: bucket, Key: "a/" + dirMarker, Body: bytes.NewReader(nil)})
		WantCode(t, err, "InvalidArgument", 400)
		if _, err := st.CreateMultipartUpload(ctx, backend.CreateMultipartInput{Bucket: bucket, Key: "a//b"}); err == nil {
			t.Errorf("multipart upload of a//b accepted")
		}
	}
}
