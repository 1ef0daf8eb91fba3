package sealstore

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/s3seal/s3seal/backend"
)

// lockedHeads reports a lock on every HEAD of key (as a store with Object
// Lock would; the embedded store has none), answers tags for it, and
// records the uploads created, passing them on without lock and tags.
type lockedHeads struct {
	backend.Store
	key     string
	lock    backend.Protection
	tags    string
	tagErr  error
	created []backend.CreateMultipartInput
	copied  []backend.CopyInput
}

func (l *lockedHeads) CopyObject(ctx context.Context, in backend.CopyInput) (backend.CopyOutput, error) {
	if in.Key == l.key {
		l.copied = append(l.copied, in)
		in.Lock = backend.Protection{} // the embedded store has no Object Lock
	}
	return l.Store.CopyObject(ctx, in)
}

func (l *lockedHeads) HeadObject(ctx context.Context, bucket, key string) (backend.ObjectInfo, error) {
	bi, err := l.Store.HeadObject(ctx, bucket, key)
	if key == l.key {
		bi.Lock = l.lock
	}
	return bi, err
}

func (l *lockedHeads) ObjectTagging(ctx context.Context, bucket, key, versionID string) (string, error) {
	if key == l.key {
		return l.tags, l.tagErr
	}
	return l.Store.ObjectTagging(ctx, bucket, key, versionID)
}

func (l *lockedHeads) CreateMultipartUpload(ctx context.Context, in backend.CreateMultipartInput) (string, error) {
	if in.Key == l.key {
		l.created = append(l.created, in)
		in.Protect = backend.Protection{} // the embedded store refuses lock and tags
	}
	return l.Store.CreateMultipartUpload(ctx, in)
}

// rewrapLocked puts a 7 MiB object with storage class, redirect and
// standard headers behind a store reporting lock, rewraps it by parts and
// returns what the copy's upload was created with, and the results.
func rewrapLocked(t *testing.T, lock backend.Protection, tagErr error) ([]backend.CreateMultipartInput, []RewrapResult) {
	f := newFixture(t)
	kr := rotationKeyring(t)
	lh := &lockedHeads{Store: f.be, key: "big", lock: lock, tags: "tier=gold&note=a%20b", tagErr: tagErr}
	st, _ := New(Direct(lh), kr, Options{SpoolDir: t.TempDir(), BackendChecksum: true})
	h := backend.Headers{ContentType: "text/x-big", CacheControl: "no-cache", ContentDisposition: "inline",
		ContentLanguage: "de", StorageClass: "STANDARD_IA", WebsiteRedirectLocation: "/elsewhere"}
	data := randBytes(7<<20, 5)
	if _, err := st.Put(f.ctx, PutInput{Bucket: bucket, Key: "big", Body: bytes.NewReader(data), Size: int64(len(data)), Headers: h}); err != nil {
		t.Fatal(err)
	}
	var res []RewrapResult
	if err := st.Rewrap(f.ctx, bucket, RewrapOptions{To: "k2", MaxCopySize: 6 << 20, NoWriters: true}, func(r RewrapResult) { res = append(res, r) }); err != nil {
		t.Fatal(err)
	}
	if len(res) != 1 {
		t.Fatalf("rewrap: %+v", res)
	}
	bi, err := f.be.HeadObject(f.ctx, bucket, "big")
	if err != nil {
		t.Fatal(err)
	}
	info, err := st.Stat(f.ctx, ReadInput{Bucket: bucket, Key: "big"})
	if err != nil {
		t.Fatal(err)
	}
	if res[0].Status == RewrapDone && (info.Headers.ContentType != h.ContentType || info.Headers.CacheControl != h.CacheControl ||
		info.Headers.ContentLanguage != h.ContentLanguage || info.Headers.WebsiteRedirectLocation != h.WebsiteRedirectLocation ||
		bi.StorageClass != h.StorageClass) {
		t.Errorf("after the rewrap by parts: class %q, headers %+v; want %+v", bi.StorageClass, info.Headers, h)
	}
	return lh.created, res
}

// TestRewrapByPartsCarriesLockAndTags: the copy's upload is created with
// the object's tags, retention and legal hold, and the object keeps its
// storage class, redirect and standard headers.
func TestRewrapByPartsCarriesLockAndTags(t *testing.T) {
	until := time.Now().Add(48 * time.Hour).UTC().Truncate(time.Second)
	created, res := rewrapLocked(t, backend.Protection{LockMode: "COMPLIANCE", RetainUntil: until, LegalHold: "ON"}, nil)
	if res[0].Status != RewrapDone {
		t.Fatalf("rewrap: %+v", res)
	}
	if len(created) != 1 {
		t.Fatalf("%d uploads created for the copy", len(created))
	}
	p := created[0].Protect
	if p.LockMode != "COMPLIANCE" || !p.RetainUntil.Equal(until) || p.LegalHold != "ON" || p.Tagging != "tier=gold&note=a%20b" {
		t.Errorf("the copy's upload carries %+v", p)
	}
}

// TestRewrapByPartsExpiredRetention: a retention already over is not set
// again (S3 refuses a date in the past), nor a legal hold that is off.
func TestRewrapByPartsExpiredRetention(t *testing.T) {
	created, res := rewrapLocked(t, backend.Protection{LockMode: "GOVERNANCE", RetainUntil: time.Now().Add(-time.Hour), LegalHold: "OFF"}, nil)
	if res[0].Status != RewrapDone || len(created) != 1 {
		t.Fatalf("rewrap: %+v, %d uploads", res, len(created))
	}
	if p := created[0].Protect; p.LockMode != "" || !p.RetainUntil.IsZero() || p.LegalHold != "" || p.Tagging == "" {
		t.Errorf("the copy's upload carries %+v", p)
	}
}

// TestRewrapByPartsTagsUnreadable: when the tags cannot be read the object
// is not rewritten (it would lose them) and the failure is reported; a
// store without tags (NotImplemented) rewrites it with none.
func TestRewrapByPartsTagsUnreadable(t *testing.T) {
	created, res := rewrapLocked(t, backend.Protection{}, &backend.Error{Code: "AccessDenied", StatusCode: 403, Message: "no"})
	if res[0].Status != RewrapFailed || len(created) != 0 || !strings.Contains(res[0].Err.Error(), "tags") {
		t.Errorf("rewrap: %+v, %d uploads", res, len(created))
	}
	created, res = rewrapLocked(t, backend.Protection{}, &backend.Error{Code: "NotImplemented", StatusCode: 501, Message: "no"})
	if res[0].Status != RewrapDone || len(created) != 1 || created[0].Protect.Tagging != "" {
		t.Errorf("rewrap: %+v, %d uploads", res, len(created))
	}
}

// TestRewrapSingleCopyCarriesLock: an object at or under the single-copy
// limit is copied onto itself with its retention while unexpired and its
// legal hold when on (the store keeps its tags itself).
func TestRewrapSingleCopyCarriesLock(t *testing.T) {
	until := time.Now().Add(48 * time.Hour).UTC().Truncate(time.Second)
	for _, tc := range []struct {
		name       string
		lock, want backend.Protection
	}{
		{"locked", backend.Protection{LockMode: "COMPLIANCE", RetainUntil: until, LegalHold: "ON"},
			backend.Protection{LockMode: "COMPLIANCE", RetainUntil: until, LegalHold: "ON"}},
		{"expired", backend.Protection{LockMode: "GOVERNANCE", RetainUntil: time.Now().Add(-time.Hour), LegalHold: "OFF"}, backend.Protection{}},
	} {
		f := newFixture(t)
		kr := rotationKeyring(t)
		lh := &lockedHeads{Store: f.be, key: "small", lock: tc.lock}
		st, _ := New(Direct(lh), kr, Options{SpoolDir: t.TempDir()})
		data := randBytes(1000, 6)
		if _, err := st.Put(f.ctx, PutInput{Bucket: bucket, Key: "small", Body: bytes.NewReader(data), Size: int64(len(data))}); err != nil {
			t.Fatal(err)
		}
		var res []RewrapResult
		if err := st.Rewrap(f.ctx, bucket, RewrapOptions{To: "k2", NoWriters: true}, func(r RewrapResult) { res = append(res, r) }); err != nil {
			t.Fatal(err)
		}
		if len(res) != 1 || res[0].Status != RewrapDone || len(lh.copied) != 1 {
			t.Fatalf("%s: rewrap %+v, %d copies", tc.name, res, len(lh.copied))
		}
		if got := lh.copied[0].Lock; got.LockMode != tc.want.LockMode || !got.RetainUntil.Equal(tc.want.RetainUntil) || got.LegalHold != tc.want.LegalHold {
			t.Errorf("%s: the copy sets %+v, want %+v", tc.name, got, tc.want)
		}
	}
}
