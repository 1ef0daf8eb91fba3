package embedded

import (
	"bytes"
	"context"
	"crypto/md5"
	"encoding/hex"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"testing"

	"github.com/s3seal/s3seal/backend"
	"github.com/s3seal/s3seal/backend/internal/storetest"
)

// TestEmbeddedMultipartStreams uploads 3 parts of 64 MiB and completes
// them: parts go to disk and the object is assembled from the part files,
// so neither side (client and server share this process, TotalAlloc covers
// both) holds the 192 MiB in memory.
func TestEmbeddedMultipartStreams(t *testing.T) {
	if testing.Short() {
		t.Skip("writes 192 MiB three times")
	}
	ctx := context.Background()
	_, st := startEmbedded(t, t.TempDir())
	storetest.Must(t, st.CreateBucket(ctx, "big"))

	const partSize, parts = 64 << 20, 3
	f, err := os.Create(filepath.Join(t.TempDir(), "part.bin"))
	storetest.Must(t, err)
	defer f.Close()
	h := md5.New()
	chunk := storetest.RandBytes(t, 1<<20)
	for range partSize >> 20 {
		f.Write(chunk)
		h.Write(chunk)
	}
	partMD5 := hex.EncodeToString(h.Sum(nil))

	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	id, err := st.CreateMultipartUpload(ctx, backend.CreateMultipartInput{Bucket: "big", Key: "blob"})
	storetest.Must(t, err)
	var named []backend.CompletedPart
	for n := int32(1); n <= parts; n++ {
		etag, err := st.UploadPart(ctx, backend.UploadPartInput{Bucket: "big", Key: "blob", UploadID: id, PartNumber: n,
			Body: io.NewSectionReader(f, 0, partSize), Size: partSize})
		storetest.Must(t, err)
		named = append(named, backend.CompletedPart{PartNumber: n, ETag: etag})
	}
	out, err := st.CompleteMultipartUpload(ctx, backend.CompleteMultipartInput{Bucket: "big", Key: "blob", UploadID: id, Parts: named})
	storetest.Must(t, err)
	runtime.ReadMemStats(&after)
	if want := storetest.MultipartETag([]string{partMD5, partMD5, partMD5}); out.ETag != want {
		t.Errorf("ETag %s, want %s", out.ETag, want)
	}
	alloc := after.TotalAlloc - before.TotalAlloc
	t.Logf("multipart upload of %d MiB allocated %.1f MiB in total", parts*partSize>>20, float64(alloc)/(1<<20))
	if alloc > 16<<20 {
		t.Errorf("multipart upload of %d MiB allocated %d bytes: parts are buffered somewhere", parts*partSize>>20, alloc)
	}
	info, err := st.HeadObject(ctx, "big", "blob")
	storetest.Must(t, err)
	if info.Size != parts*partSize || info.ETag != out.ETag {
		t.Errorf("HEAD = size %d ETag %s", info.Size, info.ETag)
	}
}

// Uploads in progress, with their parts and metadata, survive a restart.
func TestEmbeddedMultipartSurvivesRestart(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	e, st := startEmbedded(t, dir)
	storetest.Must(t, st.CreateBucket(ctx, "keep"))
	id, err := st.CreateMultipartUpload(ctx, backend.CreateMultipartInput{Bucket: "keep", Key: "k",
		Meta: map[string]string{"a": "b"}, Headers: backend.Headers{ContentType: "text/x-kept", Expires: "Thu, 01 Dec 2044 16:00:00 GMT"}})
	storetest.Must(t, err)
	p1, p2 := storetest.RandBytes(t, minPartSize), []byte("tail")
	e1 := storetest.UploadPart(ctx, t, st, "keep", "k", id, 1, p1)
	storetest.Must(t, e.Close())

	_, st = startEmbedded(t, dir)
	lp, err := st.ListParts(ctx, backend.ListPartsInput{Bucket: "keep", Key: "k", UploadID: id})
	storetest.Must(t, err)
	if len(lp.Parts) != 1 || lp.Parts[0].ETag != e1 || lp.Parts[0].Size != minPartSize {
		t.Fatalf("parts after restart = %+v", lp.Parts)
	}
	e2 := storetest.UploadPart(ctx, t, st, "keep", "k", id, 2, p2)
	_, err = st.CompleteMultipartUpload(ctx, backend.CompleteMultipartInput{Bucket: "keep", Key: "k", UploadID: id,
		Parts: []backend.CompletedPart{{PartNumber: 1, ETag: e1}, {PartNumber: 2, ETag: e2}}})
	storetest.Must(t, err)
	obj, err := st.GetObject(ctx, backend.GetInput{Bucket: "keep", Key: "k"})
	storetest.Must(t, err)
	if got := storetest.ReadAll(t, obj.Body); !bytes.Equal(got, append(p1, p2...)) {
		t.Errorf("object after restart differs (%d bytes)", len(got))
	}
	if obj.Info.Meta["a"] != "b" || obj.Info.Headers.ContentType != "text/x-kept" || obj.Info.Headers.Expires != "Thu, 01 Dec 2044 16:00:00 GMT" {
		t.Errorf("info = %+v", obj.Info)
	}
	if entries, _ := os.ReadDir(filepath.Join(dir, "multipart")); len(entries) != 0 {
		t.Errorf("completed upload left %d entries in multipart/", len(entries))
	}
}

// If-Match and If-None-Match on completion are decided against the object
// at the key, atomically: of two racing "create only" completions exactly
// one wins. A failed condition keeps the upload.
func TestEmbeddedCompleteConditions(t *testing.T) {
	ctx := context.Background()
	_, st := startEmbedded(t, t.TempDir())
	storetest.Must(t, st.CreateBucket(ctx, "cnd"))
	oneUpload := func(key string) backend.CompleteMultipartInput {
		t.Helper()
		id, err := st.CreateMultipartUpload(ctx, backend.CreateMultipartInput{Bucket: "cnd", Key: key})
		storetest.Must(t, err)
		e := storetest.UploadPart(ctx, t, st, "cnd", key, id, 1, []byte("body of "+id))
		return backend.CompleteMultipartInput{Bucket: "cnd", Key: key, UploadID: id, Parts: []backend.CompletedPart{{PartNumber: 1, ETag: e}}}
	}

	in := oneUpload("k")
	in.IfMatch = "0123456789abcdef0123456789abcdef"
	_, err := st.CompleteMultipartUpload(ctx, in)
	storetest.WantCode(t, err, "NoSuchKey", 404)
	in.IfMatch, in.IfNoneMatch = "", "*"
	first, err := st.CompleteMultipartUpload(ctx, in)
	storetest.Must(t, err)

	in = oneUpload("k")
	in.IfNoneMatch = "*"
	_, err = st.CompleteMultipartUpload(ctx, in)
	storetest.WantCode(t, err, "PreconditionFailed", 412)
	in.IfNoneMatch, in.IfMatch = "", "0123456789abcdef0123456789abcdef"
	_, err = st.CompleteMultipartUpload(ctx, in)
	storetest.WantCode(t, err, "PreconditionFailed", 412)
	in.IfMatch = first.ETag // the upload is still there after failed checks
	second, err := st.CompleteMultipartUpload(ctx, in)
	storetest.Must(t, err)
	if info, err := st.HeadObject(ctx, "cnd", "k"); err != nil || info.ETag != second.ETag {
		t.Errorf("HEAD after If-Match completion: %+v %v, want ETag %s", info, err, second.ETag)
	}
	// A plain PUT's ETag works for If-Match too, and a multipart ETag
	// does not survive an overwrite.
	putOut := storetest.Put(ctx, t, st, "cnd", "k", []byte("plain"), nil, backend.Headers{})
	if info, _ := st.HeadObject(ctx, "cnd", "k"); info.ETag != putOut.ETag {
		t.Errorf("HEAD after PUT: ETag %s, want %s", info.ETag, putOut.ETag)
	}
	in = oneUpload("k")
	in.IfMatch = putOut.ETag
	_, err = st.CompleteMultipartUpload(ctx, in)
	storetest.Must(t, err)

	const racers = 8
	ins := make([]backend.CompleteMultipartInput, racers)
	for i := range ins {
		ins[i] = oneUpload("race")
		ins[i].IfNoneMatch = "*"
	}
	var wg sync.WaitGroup
	errs := make([]error, racers)
	for i := range ins {
		wg.Add(1)
		go func() { defer wg.Done(); _, errs[i] = st.CompleteMultipartUpload(ctx, ins[i]) }()
	}
	wg.Wait()
	won := 0
	for _, err := range errs {
		if err == nil {
			won++
		} else if backend.ErrorCode(err) != "PreconditionFailed" {
			t.Errorf("racing completion: %v", err)
		}
	}
	if won != 1 {
		t.Errorf("%d of %d If-None-Match completions won, want exactly 1", won, racers)
	}
}

// Part numbers outside 1..10000 and bodies failing Content-MD5 are
// refused; the earlier part stays.
func TestEmbeddedPartChecks(t *testing.T) {
	ctx := context.Background()
	_, st := startEmbedded(t, t.TempDir())
	storetest.Must(t, st.CreateBucket(ctx, "prt"))
	id, err := st.CreateMultipartUpload(ctx, backend.CreateMultipartInput{Bucket: "prt", Key: "k"})
	storetest.Must(t, err)
	for _, n := range []int32{0, 10001} {
		_, err := st.UploadPart(ctx, backend.UploadPartInput{Bucket: "prt", Key: "k", UploadID: id, PartNumber: n, Body: bytes.NewReader([]byte("x")), Size: 1})
		storetest.WantCode(t, err, "InvalidArgument", 400)
	}
	good := storetest.UploadPart(ctx, t, st, "prt", "k", id, 10000, []byte("good"))
	_, err = st.UploadPart(ctx, backend.UploadPartInput{Bucket: "prt", Key: "k", UploadID: id, PartNumber: 10000,
		Body: bytes.NewReader([]byte("evil")), Size: 4, ContentMD5: storetest.MD5Base64([]byte("good"))})
	storetest.WantCode(t, err, "BadDigest", 400)
	lp, err := st.ListParts(ctx, backend.ListPartsInput{Bucket: "prt", Key: "k", UploadID: id})
	storetest.Must(t, err)
	if len(lp.Parts) != 1 || lp.Parts[0].ETag != good {
		t.Errorf("parts = %+v, want only the good part 10000", lp.Parts)
	}
	// An upload id is bound to its key; unknown ids are NoSuchUpload.
	_, err = st.ListParts(ctx, backend.ListPartsInput{Bucket: "prt", Key: "other", UploadID: id})
	storetest.WantCode(t, err, "NoSuchUpload", 404)
	storetest.WantCode(t, st.AbortMultipartUpload(ctx, "prt", "k", "../../objects"), "NoSuchUpload", 404)
	_, err = st.CreateMultipartUpload(ctx, backend.CreateMultipartInput{Bucket: "missing", Key: "k"})
	storetest.WantCode(t, err, "NoSuchBucket", 404)
	storetest.Must(t, st.AbortMultipartUpload(ctx, "prt", "k", id))
	storetest.WantCode(t, st.AbortMultipartUpload(ctx, "prt", "k", id), "NoSuchUpload", 404)
}

// Deleting a bucket drops its uploads in progress: a new bucket of the
// same name starts without them.
func TestEmbeddedDeleteBucketDropsUploads(t *testing.T) {
	ctx := context.Background()
	_, st := startEmbedded(t, t.TempDir())
	storetest.Must(t, st.CreateBucket(ctx, "gone"))
	id, err := st.CreateMultipartUpload(ctx, backend.CreateMultipartInput{Bucket: "gone", Key: "k"})
	storetest.Must(t, err)
	storetest.UploadPart(ctx, t, st, "gone", "k", id, 1, []byte("part"))
	storetest.Must(t, st.DeleteBucket(ctx, "gone"))
	storetest.Must(t, st.CreateBucket(ctx, "gone"))
	lu, err := st.ListMultipartUploads(ctx, backend.ListUploadsInput{Bucket: "gone"})
	storetest.Must(t, err)
	if len(lu.Uploads) != 0 {
		t.Errorf("uploads of the deleted bucket survive: %+v", lu.Uploads)
	}
	_, err = st.ListParts(ctx, backend.ListPartsInput{Bucket: "gone", Key: "k", UploadID: id})
	storetest.WantCode(t, err, "NoSuchUpload", 404)
}
