package sealstore

import (
	"reflect"
	"testing"

	"github.com/s3seal/s3seal/backend"
)

// A backend that ignores prefix, delimiter, markers and max-uploads (moto)
// still gives S3's page; one that honoured them is left as it answered.
func TestPageUploads(t *testing.T) {
	all := backend.ListUploadsOutput{}
	for _, k := range []string{"abc/x", "foo/bar/baz", "foo/quxx", "foo/xyz", "obj1", "obj2", "obj2", "obj3"} {
		all.Uploads = append(all.Uploads, backend.Upload{Key: k, UploadID: k + "-" + string(rune('a'+len(all.Uploads)))})
	}
	keys := func(o backend.ListUploadsOutput) []string {
		var ks []string
		for _, u := range o.Uploads {
			ks = append(ks, u.Key+"/"+u.UploadID)
		}
		return ks
	}
	for _, tc := range []struct {
		name      string
		in        backend.ListUploadsInput
		uploads   []string
		prefixes  []string
		truncated bool
		next      [2]string
	}{
		{"max-uploads", backend.ListUploadsInput{MaxUploads: 2}, []string{"abc/x/abc/x-a", "foo/bar/baz/foo/bar/baz-b"}, nil, true, [2]string{"foo/bar/baz", "foo/bar/baz-b"}},
		{"key-marker", backend.ListUploadsInput{KeyMarker: "obj1"}, []string{"obj2/obj2-f", "obj2/obj2-g", "obj3/obj3-h"}, nil, false, [2]string{}},
		{"upload-id-marker", backend.ListUploadsInput{KeyMarker: "obj2", UploadIDMarker: "obj2-f"}, []string{"obj2/obj2-g", "obj3/obj3-h"}, nil, false, [2]string{}},
		{"prefix and delimiter", backend.ListUploadsInput{Prefix: "foo/", Delimiter: "/"}, []string{"foo/quxx/foo/quxx-c", "foo/xyz/foo/xyz-d"}, []string{"foo/bar/"}, false, [2]string{}},
		{"delimiter, truncated", backend.ListUploadsInput{Delimiter: "/", MaxUploads: 2}, nil, []string{"abc/", "foo/"}, true, [2]string{"foo/", ""}},
	} {
		got := pageUploads(tc.in, all)
		if !reflect.DeepEqual(keys(got), tc.uploads) || !reflect.DeepEqual(got.CommonPrefixes, tc.prefixes) ||
			got.IsTruncated != tc.truncated || got.NextKeyMarker != tc.next[0] || got.NextUploadIDMarker != tc.next[1] {
			t.Errorf("%s: %v %v %v %q %q", tc.name, keys(got), got.CommonPrefixes, got.IsTruncated, got.NextKeyMarker, got.NextUploadIDMarker)
		}
	}
	// A backend that applied the upload-id-marker: nothing more is dropped.
	honoured := backend.ListUploadsOutput{Uploads: all.Uploads[6:]}
	if got := pageUploads(backend.ListUploadsInput{KeyMarker: "obj2", UploadIDMarker: "obj2-f"}, honoured); len(got.Uploads) != 2 {
		t.Errorf("honoured markers: %v", keys(got))
	}
}

// Same without moto: pageUploads itself, given a backend answer that
// ignored the markers.
func TestPageUploadsCommonPrefixMarker(t *testing.T) {
	all := backend.ListUploadsOutput{Uploads: []backend.Upload{{Key: "a/1", UploadID: "u1"}, {Key: "a/2", UploadID: "u2"}, {Key: "b", UploadID: "u3"}}}
	got := pageUploads(backend.ListUploadsInput{Delimiter: "/", KeyMarker: "a/", MaxUploads: 1}, all)
	if len(got.CommonPrefixes) != 0 || len(got.Uploads) != 1 || got.Uploads[0].Key != "b" {
		t.Errorf("page after key-marker a/: prefixes %q uploads %+v truncated %v next %q, want just b", got.CommonPrefixes, got.Uploads, got.IsTruncated, got.NextKeyMarker)
	}
}
