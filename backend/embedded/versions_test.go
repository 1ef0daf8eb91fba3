package embedded

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/s3seal/s3seal/backend"
	"github.com/s3seal/s3seal/backend/internal/storetest"
)

// TestEmbeddedVersions: the embedded store keeps versions as moto does
// (the shared versions contract).
func TestEmbeddedVersions(t *testing.T) {
	_, st := startEmbedded(t, t.TempDir())
	storetest.Versions(t, st)
}

// TestEmbeddedNullVersions: S3's null version. A PUT in a bucket never
// versioned or suspended writes version "null" (replacing the previous
// null); a DELETE in a suspended bucket replaces it with a null delete
// marker; versions made while enabled stay. All of it survives a restart,
// and the bucket cannot be deleted while a version or marker remains.
func TestEmbeddedNullVersions(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	e, st := startEmbedded(t, dir)
	const b = "nulls"
	storetest.Must(t, st.CreateBucket(ctx, b))
	storetest.Put(ctx, t, st, b, "k", []byte("null-1"), nil, backend.Headers{})
	storetest.Must(t, st.PutBucketVersioning(ctx, b, "Enabled"))
	v1 := storetest.Put(ctx, t, st, b, "k", []byte("v1"), nil, backend.Headers{})
	storetest.Must(t, st.PutBucketVersioning(ctx, b, "Suspended"))
	if s, err := st.GetBucketVersioning(ctx, b); err != nil || s != "Suspended" {
		t.Fatalf("versioning = %q, %v", s, err)
	}
	n2 := storetest.Put(ctx, t, st, b, "k", []byte("null-2"), nil, backend.Headers{})
	if n2.VersionID != "null" {
		t.Fatalf("suspended PUT version = %q", n2.VersionID)
	}
	versions := func() []backend.VersionEntry {
		out, err := st.ListObjectVersions(ctx, backend.ListVersionsInput{Bucket: b})
		storetest.Must(t, err)
		return out.Entries
	}
	// The first null was replaced: null-2 (latest), v1.
	got := versions()
	if len(got) != 2 || got[0].VersionID != "null" || !got[0].IsLatest || got[1].VersionID != v1.VersionID {
		t.Fatalf("versions = %+v", got)
	}
	del, err := st.DeleteObjectVersion(ctx, backend.DeleteInput{Bucket: b, Key: "k"})
	if err != nil || !del.DeleteMarker || del.VersionID != "null" {
		t.Fatalf("suspended DELETE = %+v, %v", del, err)
	}

	// Restart: the marker and v1 are still there.
	storetest.Must(t, e.Close())
	_, st = startEmbedded(t, dir)
	got = versions()
	if len(got) != 2 || !got[0].DeleteMarker || got[0].VersionID != "null" || got[1].VersionID != v1.VersionID || got[1].IsLatest {
		t.Fatalf("versions after restart = %+v", got)
	}
	if _, err := st.HeadObject(ctx, b, "k"); !backend.IsNotFound(err) {
		t.Fatalf("HEAD behind the marker: %v", err)
	}
	storetest.WantCode(t, st.DeleteBucket(ctx, b), "BucketNotEmpty", 409)

	// Deleting the marker by id makes v1 current again.
	if _, err := st.DeleteObjectVersion(ctx, backend.DeleteInput{Bucket: b, Key: "k", VersionID: "null"}); err != nil {
		t.Fatal(err)
	}
	obj, err := st.GetObject(ctx, backend.GetInput{Bucket: b, Key: "k"})
	storetest.Must(t, err)
	if body := storetest.ReadAll(t, obj.Body); string(body) != "v1" || obj.Info.VersionID != v1.VersionID {
		t.Fatalf("current after deleting the marker = %q (%q)", body, obj.Info.VersionID)
	}
	_, err = st.GetObject(ctx, backend.GetInput{Bucket: b, Key: "k", VersionID: "not-a-version"})
	storetest.WantCode(t, err, "InvalidArgument", 400)
	_, err = st.GetObject(ctx, backend.GetInput{Bucket: b, Key: "k", VersionID: "0123456789abcdef0123456789abcdef"})
	storetest.WantCode(t, err, "NoSuchVersion", 404)
	if _, err := st.DeleteObjectVersion(ctx, backend.DeleteInput{Bucket: b, Key: "k", VersionID: v1.VersionID}); err != nil {
		t.Fatal(err)
	}
	if got := versions(); len(got) != 0 {
		t.Fatalf("versions left = %+v", got)
	}
	storetest.Must(t, st.DeleteBucket(ctx, b))
	if _, err := os.Stat(filepath.Join(dir, "objects", "versions", b)); !os.IsNotExist(err) {
		t.Fatalf("versions of a deleted bucket stay on disk: %v", err)
	}
}

// TestEmbeddedVersionedMultipart: a completed upload in a versioned
// bucket is a new version and answers its id; the one it replaced stays
// readable, and UploadPartCopy copies the version its source names.
func TestEmbeddedVersionedMultipart(t *testing.T) {
	ctx := context.Background()
	e, st := startEmbedded(t, t.TempDir())
	const b = "mpv"
	storetest.Must(t, st.CreateBucket(ctx, b))
	storetest.Must(t, st.PutBucketVersioning(ctx, b, "Enabled"))
	old := storetest.Put(ctx, t, st, b, "k", []byte("old body"), nil, backend.Headers{})
	storetest.Put(ctx, t, st, b, "k", []byte("newer"), nil, backend.Headers{})
	id, err := st.CreateMultipartUpload(ctx, backend.CreateMultipartInput{Bucket: b, Key: "k"})
	storetest.Must(t, err)
	part, err := st.UploadPart(ctx, backend.UploadPartInput{Bucket: b, Key: "k", UploadID: id, PartNumber: 1,
		Body: bytes.NewReader([]byte("from parts")), Size: 10})
	storetest.Must(t, err)
	out, err := st.CompleteMultipartUpload(ctx, backend.CompleteMultipartInput{Bucket: b, Key: "k", UploadID: id,
		Parts: []backend.CompletedPart{{PartNumber: 1, ETag: part}}})
	storetest.Must(t, err)
	if out.VersionID == "" || out.VersionID == old.VersionID {
		t.Fatalf("completion version = %q", out.VersionID)
	}
	obj, err := st.GetObject(ctx, backend.GetInput{Bucket: b, Key: "k"})
	storetest.Must(t, err)
	if body := storetest.ReadAll(t, obj.Body); !bytes.Equal(body, []byte("from parts")) || obj.Info.VersionID != out.VersionID {
		t.Fatalf("current = %q (%q)", body, obj.Info.VersionID)
	}
	vs, err := st.ListObjectVersions(ctx, backend.ListVersionsInput{Bucket: b})
	storetest.Must(t, err)
	if len(vs.Entries) != 3 || vs.Entries[0].VersionID != out.VersionID || vs.Entries[2].VersionID != old.VersionID {
		t.Fatalf("versions = %+v", vs.Entries)
	}
	obj, err = st.GetObject(ctx, backend.GetInput{Bucket: b, Key: "k", VersionID: old.VersionID, Range: &backend.ByteRange{Off: 4, Len: 4}})
	storetest.Must(t, err)
	if body := storetest.ReadAll(t, obj.Body); string(body) != "body" {
		t.Fatalf("range of the old version = %q", body)
	}

	// UploadPartCopy from the old version by id copies that version.
	id, err = st.CreateMultipartUpload(ctx, backend.CreateMultipartInput{Bucket: b, Key: "pc"})
	storetest.Must(t, err)
	pc, err := sdkClient(e).UploadPartCopy(ctx, &s3.UploadPartCopyInput{Bucket: aws.String(b), Key: aws.String("pc"),
		UploadId: aws.String(id), PartNumber: aws.Int32(1), CopySource: aws.String(b + "/k?versionId=" + old.VersionID)})
	storetest.Must(t, err)
	_, err = st.CompleteMultipartUpload(ctx, backend.CompleteMultipartInput{Bucket: b, Key: "pc", UploadID: id,
		Parts: []backend.CompletedPart{{PartNumber: 1, ETag: aws.ToString(pc.CopyPartResult.ETag)}}})
	storetest.Must(t, err)
	obj, err = st.GetObject(ctx, backend.GetInput{Bucket: b, Key: "pc"})
	storetest.Must(t, err)
	if body := storetest.ReadAll(t, obj.Body); string(body) != "old body" {
		t.Fatalf("part copied from the old version = %q", body)
	}
}

// TestEmbeddedVersionsConcurrent: concurrent writes and deletes of one
// key in a versioned bucket each keep their version or marker: none is
// lost or shared, and every version reads back its own body by id.
func TestEmbeddedVersionsConcurrent(t *testing.T) {
	ctx := context.Background()
	_, st := startEmbedded(t, t.TempDir())
	const b = "race"
	storetest.Must(t, st.CreateBucket(ctx, b))
	storetest.Must(t, st.PutBucketVersioning(ctx, b, "Enabled"))
	const writers, puts = 6, 4
	type made struct{ id, body string }
	results := make(chan made, writers*puts)
	markers := make(chan string, writers)
	errs := make(chan error, writers)
	for w := 0; w < writers; w++ {
		go func(w int) {
			for i := 0; i < puts; i++ {
				body := []byte(fmt.Sprintf("writer %d put %d", w, i))
				out, err := st.PutObject(ctx, backend.PutInput{Bucket: b, Key: "k", Body: bytes.NewReader(body), Size: int64(len(body))})
				if err != nil {
					errs <- err
					return
				}
				results <- made{out.VersionID, string(body)}
			}
			del, err := st.DeleteObjectVersion(ctx, backend.DeleteInput{Bucket: b, Key: "k"})
			if err == nil && !del.DeleteMarker {
				err = fmt.Errorf("delete made no marker: %+v", del)
			}
			markers <- del.VersionID
			errs <- err
		}(w)
	}
	for w := 0; w < writers; w++ {
		storetest.Must(t, <-errs)
	}
	close(results)
	close(markers)
	vs, err := st.ListObjectVersions(ctx, backend.ListVersionsInput{Bucket: b})
	storetest.Must(t, err)
	ids := map[string]bool{}
	nMarkers := 0
	for _, e := range vs.Entries {
		if ids[e.VersionID] {
			t.Fatalf("version id %s listed twice", e.VersionID)
		}
		ids[e.VersionID] = true
		if e.DeleteMarker {
			nMarkers++
		}
	}
	if len(vs.Entries) != writers*puts+writers || nMarkers != writers {
		t.Fatalf("%d entries (%d markers), want %d (%d)", len(vs.Entries), nMarkers, writers*puts+writers, writers)
	}
	for m := range markers {
		if !ids[m] {
			t.Errorf("marker %s not listed", m)
		}
	}
	for r := range results {
		obj, err := st.GetObject(ctx, backend.GetInput{Bucket: b, Key: "k", VersionID: r.id})
		storetest.Must(t, err)
		if got := string(storetest.ReadAll(t, obj.Body)); got != r.body {
			t.Errorf("version %s = %q, want %q", r.id, got, r.body)
		}
	}
}

// sdkClient is a bare aws-sdk-go-v2 client of the store, configured as
// backend.NewS3 configures its own, for requests backend.S3 does not make.
func sdkClient(e *Server) *s3.Client {
	cfg := e.Config()
	return s3.New(s3.Options{
		Region:                     backend.DefaultRegion,
		Credentials:                credentials.NewStaticCredentialsProvider(cfg.AccessKey, cfg.SecretKey, ""),
		BaseEndpoint:               aws.String(cfg.Endpoint),
		UsePathStyle:               true,
		RequestChecksumCalculation: aws.RequestChecksumCalculationWhenRequired,
		ResponseChecksumValidation: aws.ResponseChecksumValidationWhenRequired,
	})
}
