package sealstore

// Review i10a (fresh-eye attack on the backup-grade features). The tests
// in this file PROVE findings: they FAIL against the current code on
// purpose.

import (
	"bytes"
	"context"
	"crypto/sha512"
	"encoding/base64"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/s3seal/s3seal/backend"
	"github.com/s3seal/s3seal/backend/embedded"
	"github.com/s3seal/s3seal/crypto"
)

// FINDING (fixed; this test now guards it): DESIGN.md ("Rewrap and locks") says "Tags
// are copied by the store" when s3seal rewrap rewrites an object. That
// holds for the single CopyObject path only. An object larger than
// MaxCopySize (5 GiB in production; lowered here) is rewritten by
// copyOntoItselfByParts (CreateMultipartUpload + UploadPartCopy), which
// passes no tags (nor ACL): after a key rotation the object has lost all
// its tags. The small-object control keeps them.
func TestReviewI10aRewrapByPartsDropsTags(t *testing.T) {
	ep := startMotoLoopback(t)
	be, err := backend.NewS3(backend.S3Config{Endpoint: ep, AccessKey: "a", SecretKey: "b", PathStyle: true, HTTPClient: http.DefaultClient})
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	if err := be.CreateBucket(ctx, bucket); err != nil {
		t.Fatal(err)
	}
	k1, k2 := mustKey(t), mustKey(t)
	kr, _ := crypto.NewKeyring("k1", map[string][]byte{"k1": k1, "k2": k2})
	st, err := New(be, kr, Options{SpoolDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	for key, size := range map[string]int{"small": 1000, "big": 6 << 20} {
		data := randBytes(size, 3)
		if _, err := st.Put(ctx, PutInput{Bucket: bucket, Key: key, Body: bytes.NewReader(data), Size: int64(len(data)),
			Protect: backend.Protection{Tagging: "tier=gold&kind=db"}}); err != nil {
			t.Fatal(err)
		}
	}
	tags := func(key string) string {
		out, err := be.Forward(ctx, backend.RawRequest{Method: http.MethodGet, Bucket: bucket, Key: key, Query: url.Values{"tagging": {""}}})
		if err != nil {
			t.Fatal(err)
		}
		return string(out.Body)
	}
	for _, key := range []string{"small", "big"} {
		if !strings.Contains(tags(key), "tier") {
			t.Fatalf("%s: no tags before the rewrap: %s", key, tags(key))
		}
	}
	var res []RewrapResult
	if err := st.Rewrap(ctx, bucket, RewrapOptions{To: "k2", NoWriters: true, MaxCopySize: 5 << 20}, func(r RewrapResult) { res = append(res, r) }); err != nil {
		t.Fatal(err)
	}
	for _, r := range res {
		if r.Status != RewrapDone {
			t.Fatalf("rewrap %+v", r)
		}
	}
	if !strings.Contains(tags("small"), "tier") {
		t.Errorf("control: the small object lost its tags too: %s", tags("small"))
	}
	if got := tags("big"); !strings.Contains(got, "tier") {
		t.Errorf("EXPECTED the rewrapped large object to keep its tags (DESIGN: \"Tags are copied by the store\"); after the rewrap by parts: %s", got)
	}
}

// getCounter counts backend GETs.
type getCounter struct {
	backend.Store
	gets atomic.Int64
}

func (g *getCounter) GetObject(ctx context.Context, in backend.GetInput) (*backend.Object, error) {
	g.gets.Add(1)
	return g.Store.GetObject(ctx, in)
}

// FINDING (reliability, fixed; this test now guards it): a part record too long for a
// key (SHA512 or XXHASH128 part checksums) is kept in an object's body and
// read back with one backend GET, one after another, by currentParts on
// EVERY ListParts page and on completion. Listing one page of 10 parts of
// an upload with N such parts costs N sequential GETs; listing a
// 10,000-part upload page by page costs 10,000 x 10 = 100,000 GETs, and
// completing it 10,000 sequential GETs (minutes on a real store, against
// the client's timeout). The same upload with CRC32 costs none.
func TestReviewI10aLongRecordsOneGetPerPartPerPage(t *testing.T) {
	for _, alg := range []string{"crc32", "sha512"} {
		be, closer, err := embedded.NewStore(t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		defer closer.Close()
		g := &getCounter{Store: be}
		key, _ := crypto.GenerateKey()
		kr, _ := crypto.NewKeyring("k1", map[string][]byte{"k1": key})
		st, err := New(g, kr, Options{SpoolDir: t.TempDir(), BackendChecksum: true})
		if err != nil {
			t.Fatal(err)
		}
		ctx := context.Background()
		if err := be.CreateBucket(ctx, bucket); err != nil {
			t.Fatal(err)
		}
		id, err := st.CreateMultipart(ctx, CreateMultipartInput{Bucket: bucket, Key: "k", ChecksumAlgorithm: alg, ChecksumType: "COMPOSITE"})
		if err != nil {
			t.Fatal(err)
		}
		const n = 60
		for i := 1; i <= n; i++ {
			data := []byte(fmt.Sprintf("part %d", i))
			sum := sha512.Sum512(data)
			val := base64.StdEncoding.EncodeToString(sum[:])
			if alg == "crc32" {
				val = "AAAAAA=="
			}
			if _, err := st.UploadPart(ctx, UploadPartInput{Bucket: bucket, Key: "k", UploadID: id, PartNumber: i,
				Body: bytes.NewReader(data), Size: int64(len(data)),
				Finalize: func() (map[string]string, error) { return map[string]string{alg: val}, nil }}); err != nil {
				t.Fatal(err)
			}
		}
		before := g.gets.Load()
		page, err := st.ListParts(ctx, bucket, "k", id, 0, 10)
		if err != nil || len(page.Parts) != 10 {
			t.Fatalf("%s: ListParts %d parts, %v", alg, len(page.Parts), err)
		}
		gets := g.gets.Load() - before
		t.Logf("%s: one ListParts page of 10 (upload of %d parts) made %d backend GETs", alg, n, gets)
		if gets > 10 {
			t.Errorf("EXPECTED a page of 10 parts to cost at most 10 backend reads; %s upload of %d parts: %d sequential GETs", alg, n, gets)
		}
	}
}
