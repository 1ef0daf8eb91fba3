package sealstore

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	lru "github.com/hashicorp/golang-lru/v2"

	"github.com/s3seal/s3seal/backend"
)

// failingHeads fails HEADs of keys containing sub (a store that is slow,
// throttling or refusing one object).
type failingHeads struct {
	backend.Store
	sub string
}

func (s *failingHeads) HeadObject(ctx context.Context, b, key string) (backend.ObjectInfo, error) {
	if strings.Contains(key, s.sub) {
		return backend.ObjectInfo{}, errors.New("injected: 503 SlowDown on one HEAD")
	}
	return s.Store.HeadObject(ctx, b, key)
}

// One state whose HEAD fails (throttled, refused, timed out) lists its
// upload without a checksum; the others keep theirs and the listing
// succeeds.
func TestUploadChecksumsOneFailingStateHead(t *testing.T) {
	f := newFixture(t)
	var victim string
	for i, k := range []string{"a", "b", "c"} {
		id, err := f.st.CreateMultipart(f.ctx, CreateMultipartInput{Bucket: bucket, Key: k, ChecksumAlgorithm: "crc32", ChecksumType: "COMPOSITE"})
		if err != nil {
			t.Fatal(err)
		}
		if i == 1 {
			victim = uploadPrefix(bucket, k, id)
		}
	}
	st, err := New(Direct(&failingHeads{Store: f.be.Store, sub: victim}), f.kr, Options{SpoolDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	out, err := st.ListUploads(f.ctx, backend.ListUploadsInput{Bucket: bucket})
	if err != nil {
		t.Fatal(err)
	}
	sums, err := st.UploadChecksums(f.ctx, bucket, out.Uploads)
	if err != nil {
		t.Fatalf("one failing state HEAD fails the whole upload listing: %v", err)
	}
	want := map[string]UploadChecksum{"a": {"crc32", "COMPOSITE"}, "b": {}, "c": {"crc32", "COMPOSITE"}}
	for i, u := range out.Uploads {
		if sums[i] != want[u.Key] {
			t.Errorf("upload %s listed with %+v, want %+v", u.Key, sums[i], want[u.Key])
		}
	}
	// The failed read is not cached as "none": once the store answers,
	// the upload is listed with its checksum.
	st.be = Direct(f.be.Store)
	if sums, err = st.UploadChecksums(f.ctx, bucket, out.Uploads); err != nil {
		t.Fatal(err)
	}
	for i, u := range out.Uploads {
		if sums[i] != (UploadChecksum{"crc32", "COMPOSITE"}) {
			t.Errorf("upload %s listed with %+v once its state reads again", u.Key, sums[i])
		}
	}
	// Only the request's own end fails the listing.
	ctx, cancel := context.WithCancel(f.ctx)
	cancel()
	fresh, err := New(Direct(f.be.Store), f.kr, Options{SpoolDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := fresh.UploadChecksums(ctx, bucket, out.Uploads); !errors.Is(err, context.Canceled) {
		t.Errorf("listing with a cancelled request: err %v, want context.Canceled", err)
	}
}

// A listing of more uploads than the upload cache holds neither HEADs every
// state again at the next listing nor evicts (or adds to) the states that
// part uploads loaded. The upload cache is shrunk to 16
// entries so that a few dozen uploads exceed it.
func TestUploadChecksumsBeyondUploadCache(t *testing.T) {
	f := newFixture(t)
	const n, cacheSize = 60, 16
	ids := map[string]string{}
	for i := range n {
		k := fmt.Sprintf("u%03d", i)
		id, err := f.st.CreateMultipart(f.ctx, CreateMultipartInput{Bucket: bucket, Key: k, ChecksumAlgorithm: "crc32", ChecksumType: "COMPOSITE"})
		if err != nil {
			t.Fatal(err)
		}
		ids[k] = id
	}
	st, err := New(Direct(f.be), f.kr, Options{SpoolDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if st.uploads, err = lru.New[uploadKey, *upload](cacheSize); err != nil {
		t.Fatal(err)
	}
	// An upload whose parts are being sent: its state is loaded.
	hot := uploadKey{bucket, "u000", ids["u000"]}
	if _, err := st.loadUpload(f.ctx, hot.bucket, hot.key, hot.id); err != nil {
		t.Fatal(err)
	}
	fullListing := func() {
		in := backend.ListUploadsInput{Bucket: bucket, MaxUploads: 25}
		listed := 0
		for {
			out, err := st.ListUploads(f.ctx, in)
			if err != nil {
				t.Fatal(err)
			}
			sums, err := st.UploadChecksums(f.ctx, bucket, out.Uploads)
			if err != nil {
				t.Fatal(err)
			}
			for i, u := range out.Uploads {
				if sums[i] != (UploadChecksum{"crc32", "COMPOSITE"}) {
					t.Errorf("upload %s listed with %+v", u.Key, sums[i])
				}
			}
			listed += len(out.Uploads)
			if !out.IsTruncated {
				break
			}
			in.KeyMarker, in.UploadIDMarker = out.NextKeyMarker, out.NextUploadIDMarker
		}
		if listed != n {
			t.Fatalf("listed %d uploads, want %d", listed, n)
		}
	}
	before := f.be.heads.Load()
	fullListing()
	if h := f.be.heads.Load() - before; h != n-1 {
		t.Errorf("first full listing issued %d HEADs, want %d (one per upload not loaded)", h, n-1)
	}
	before = f.be.heads.Load()
	fullListing()
	if h := f.be.heads.Load() - before; h != 0 {
		t.Errorf("second full listing of %d uploads issued %d state HEADs, want 0", n, h)
	}
	if l := st.uploads.Len(); l != 1 || !st.uploads.Contains(hot) {
		t.Errorf("after the listings the upload cache holds %d entries (hot upload kept: %v), want only the hot upload", l, st.uploads.Contains(hot))
	}
}
