package backend

import (
	"bytes"
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"
)

// testKeyLayouts: directory markers (keys ending in "/") are objects, and
// a key under an object ("obj/x" beside "obj") is simply missing, on every
// store. limited is the embedded store, which refuses (with a 4xx naming
// the limit) what a file system cannot hold; other stores take it.
func testKeyLayouts(t *testing.T, st Store, limited bool) {
	ctx := context.Background()
	bucket := "keys-" + randHex(t, 4)
	must(t, st.CreateBucket(ctx, bucket))
	put(ctx, t, st, bucket, "dir/", nil, nil, Headers{})
	put(ctx, t, st, bucket, "dir/sub/file", []byte("f"), nil, Headers{})
	put(ctx, t, st, bucket, "obj", []byte("o"), nil, Headers{})
	info, err := st.HeadObject(ctx, bucket, "dir/")
	if err != nil || info.Size != 0 {
		t.Fatalf("HEAD dir/: %+v %v", info, err)
	}
	page, err := st.ListObjects(ctx, ListInput{Bucket: bucket, V2: true})
	must(t, err)
	if got, want := entryKeys(page.Entries), []string{"dir/", "dir/sub/file", "obj"}; !reflect.DeepEqual(got, want) {
		t.Errorf("listing %v, want %v", got, want)
	}
	page, err = st.ListObjects(ctx, ListInput{Bucket: bucket, V2: true, Prefix: "dir/", Delimiter: "/"})
	must(t, err)
	if got := entryKeys(page.Entries); !reflect.DeepEqual(got, []string{"dir/"}) || !reflect.DeepEqual(page.CommonPrefixes, []string{"dir/sub/"}) {
		t.Errorf("listing dir/ with /: %v %v", got, page.CommonPrefixes)
	}
	// A key under an object is missing, for HEAD, GET and DELETE alike.
	_, err = st.HeadObject(ctx, bucket, "obj/x")
	wantCode(t, err, "NotFound", 404)
	_, err = st.GetObject(ctx, GetInput{Bucket: bucket, Key: "obj/x"})
	wantCode(t, err, "NoSuchKey", 404)
	must(t, st.DeleteObject(ctx, bucket, "obj/x"))
	// Deleting a prefix that is no object deletes nothing.
	must(t, st.DeleteObject(ctx, bucket, "dir/sub"))
	must(t, st.DeleteObject(ctx, bucket, "dir/"))
	if _, err := st.HeadObject(ctx, bucket, "dir/sub/file"); err != nil {
		t.Errorf("dir/sub/file after deleting the marker and a prefix: %v", err)
	}
	_, err = st.HeadObject(ctx, bucket, "dir/")
	wantCode(t, err, "NotFound", 404)
	if _, err := st.HeadObject(ctx, bucket, "obj"); err != nil {
		t.Errorf("obj after deleting obj/x: %v", err)
	}

	clash := map[string]string{"obj/x": "the object \"obj\" exists", "obj/": "the object \"obj\" exists", "dir": "keys under \"dir/\" exist"}
	for key, why := range clash {
		_, err := st.PutObject(ctx, PutInput{Bucket: bucket, Key: key, Body: bytes.NewReader([]byte("c")), Size: 1})
		if !limited {
			must(t, err)
			continue
		}
		wantCode(t, err, "InvalidArgument", 400)
		var e *Error
		if errors.As(err, &e) && (!strings.Contains(e.Message, "embedded store cannot hold") || !strings.Contains(e.Message, why)) {
			t.Errorf("PUT %s: message %q does not name the limit (%s)", key, e.Message, why)
		}
	}
	if limited {
		_, err = st.PutObject(ctx, PutInput{Bucket: bucket, Key: "a/" + strings.Repeat("s", 256), Body: bytes.NewReader(nil)})
		wantCode(t, err, "KeyTooLongError", 400)
		_, err = st.PutObject(ctx, PutInput{Bucket: bucket, Key: "a/" + dirMarkerName, Body: bytes.NewReader(nil)})
		wantCode(t, err, "InvalidArgument", 400)
		if _, err := st.CreateMultipartUpload(ctx, CreateMultipartInput{Bucket: bucket, Key: "a//b"}); err == nil {
			t.Errorf("multipart upload of a//b accepted")
		}
	}
}

func TestEmbeddedKeyLayouts(t *testing.T) {
	_, st := startEmbedded(t, t.TempDir())
	testKeyLayouts(t, st, true)
}

func TestMotoKeyLayouts(t *testing.T) {
	st, err := NewS3(S3Config{Endpoint: startMoto(t), AccessKey: "test", SecretKey: "test", PathStyle: true})
	must(t, err)
	testKeyLayouts(t, st, false)
}
