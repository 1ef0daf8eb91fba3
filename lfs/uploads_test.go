package lfs

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/s3seal/s3seal/backend"
	"github.com/s3seal/s3seal/sealstore"
)

type initAnswer struct {
	UploadID  string `json:"upload_id"`
	S3Key     string `json:"s3_key"`
	PartSize  int64  `json:"part_size"`
	ExpiresAt string `json:"expires_at"`
}

func initUpload(t *testing.T, url string, body map[string]any) initAnswer {
	t.Helper()
	a := doJSON(t, "POST", url+"/lfs/uploads", body)
	if a.status != 200 {
		t.Fatalf("init: %d %s", a.status, a.body)
	}
	var in initAnswer
	if err := json.Unmarshal(a.body, &in); err != nil {
		t.Fatal(err)
	}
	return in
}

func putPart(t *testing.T, url, id string, n int, data []byte) answer {
	t.Helper()
	return do(t, "PUT", url+"/lfs/uploads/"+id+"/parts/"+itoa(n), bytes.NewReader(data), int64(len(data)), nil)
}

func itoa(n int) string { return strconv.Itoa(n) }

// Two replicas share one session: parts go to either, out of order and in
// parallel, and the other completes.
func TestMultipartAcrossReplicas(t *testing.T) {
	e := newEnv(t)
	_, a := e.replica(nil)
	_, b := e.replica(nil)
	data := randBytes(2*sealstore.MinPartSize+777, 6)
	sha := sha256.Sum256(data)
	in := initUpload(t, a.URL, map[string]any{"topic": "orders", "key": base64.StdEncoding.EncodeToString([]byte("kk")),
		"partition": 1, "content_type": "video/mp4", "size_bytes": len(data), "checksum": hex.EncodeToString(sha[:]), "checksum_alg": "sha256"})
	if !keyRE.MatchString(in.S3Key) || in.PartSize != sealstore.MinPartSize || in.ExpiresAt == "" {
		t.Fatalf("init %+v", in)
	}
	chunks := [][]byte{data[:sealstore.MinPartSize], data[sealstore.MinPartSize : 2*sealstore.MinPartSize], data[2*sealstore.MinPartSize:]}
	etags := make([]string, 3)
	var wg sync.WaitGroup
	for i := 2; i >= 0; i-- {
		wg.Add(1)
		go func() {
			defer wg.Done()
			srv := []*httptest.Server{a, b}[i%2]
			ans := putPart(t, srv.URL, in.UploadID, i+1, chunks[i])
			var p struct {
				UploadID   string `json:"upload_id"`
				PartNumber int    `json:"part_number"`
				ETag       string `json:"etag"`
			}
			_ = json.Unmarshal(ans.body, &p)
			if ans.status != 200 || p.PartNumber != i+1 || p.UploadID != in.UploadID || p.ETag == "" {
				t.Errorf("part %d: %d %s", i+1, ans.status, ans.body)
			}
			etags[i] = p.ETag
		}()
	}
	wg.Wait()
	if t.Failed() {
		t.FailNow()
	}
	parts := []map[string]any{{"part_number": 3, "etag": etags[2]}, {"part_number": 1, "etag": etags[0]}, {"part_number": 2, "etag": etags[1]}}
	env := envelopeOf(t, doJSON(t, "POST", b.URL+"/lfs/uploads/"+in.UploadID+"/complete", map[string]any{"parts": parts}))
	if env.Key != in.S3Key || env.Size != int64(len(data)) || env.SHA256 != hex.EncodeToString(sha[:]) || env.ContentType != "video/mp4" {
		t.Fatalf("envelope %+v", env)
	}
	recs := e.prod.got()
	if len(recs) != 1 || recs[0].partition != 1 || string(recs[0].key) != "kk" || recs[0].topic != "orders" {
		t.Fatalf("records %+v", recs)
	}
	if !bytes.Equal(e.readBlob(env.Key), data) {
		t.Fatal("blob differs")
	}
	// The session is over: completing it again (a client whose answer was
	// lost) learns that it was completed, at either replica, and produces
	// nothing more.
	for _, srv := range []*httptest.Server{a, b} {
		if ans := doJSON(t, "POST", srv.URL+"/lfs/uploads/"+in.UploadID+"/complete", map[string]any{"parts": parts}); ans.status != 409 || ans.code(t) != "upload_completed" {
			t.Fatalf("%d %s", ans.status, ans.body)
		}
	}
	if recs := e.prod.got(); len(recs) != 1 {
		t.Fatalf("a repeated completion produced again: %d records", len(recs))
	}
	if !bytes.Equal(e.readBlob(env.Key), data) {
		t.Fatal("a repeated completion changed the blob")
	}
}

func TestMultipartChecksumMismatchDeletesObject(t *testing.T) {
	e := newEnv(t)
	_, srv := e.replica(nil)
	data := randBytes(1000, 7)
	in := initUpload(t, srv.URL, map[string]any{"topic": "orders", "size_bytes": len(data), "checksum": "00000000", "checksum_alg": "crc32"})
	p := putPart(t, srv.URL, in.UploadID, 1, data)
	var pr struct{ ETag string }
	_ = json.Unmarshal(p.body, &pr)
	a := doJSON(t, "POST", srv.URL+"/lfs/uploads/"+in.UploadID+"/complete", map[string]any{"parts": []map[string]any{{"part_number": 1, "etag": pr.ETag}}})
	if a.status != 400 || a.code(t) != "checksum_mismatch" {
		t.Fatalf("%d %s", a.status, a.body)
	}
	e.assertEmpty()
	if len(e.prod.got()) != 0 {
		t.Fatal("produced")
	}
}

func TestMultipartExpiredSessionAbortsUpload(t *testing.T) {
	e := newEnv(t)
	h, srv := e.replica(func(c *Config) { c.SessionTTL = time.Minute })
	in := initUpload(t, srv.URL, map[string]any{"topic": "orders", "size_bytes": 10})
	if a := putPart(t, srv.URL, in.UploadID, 1, []byte("0123456789")); a.status != 200 {
		t.Fatalf("%d %s", a.status, a.body)
	}
	e.clock.Store(time.Now().Add(2 * time.Minute).UnixNano())
	if a := putPart(t, srv.URL, in.UploadID, 1, []byte("0123456789")); a.status != 410 || a.code(t) != "upload_expired" {
		t.Fatalf("%d %s", a.status, a.body)
	}
	e.assertEmpty()

	// Sessions no one comes back to are swept.
	e.clock.Store(0)
	initUpload(t, srv.URL, map[string]any{"topic": "orders", "size_bytes": 10})
	initUpload(t, srv.URL, map[string]any{"topic": "orders", "size_bytes": 10})
	if n, err := h.SweepExpired(context.Background()); err != nil || n != 0 {
		t.Fatalf("swept %d live uploads (%v)", n, err)
	}
	e.clock.Store(time.Now().Add(3 * time.Minute).UnixNano())
	if n, err := h.SweepExpired(context.Background()); err != nil || n != 2 {
		t.Fatalf("swept %d, %v", n, err)
	}
	e.assertEmpty()
}

func TestMultipartErrors(t *testing.T) {
	e := newEnv(t)
	_, srv := e.replica(func(c *Config) { c.MaxBlobSize = 100 })
	for _, tc := range []struct {
		body   map[string]any
		status int
		code   string
	}{
		{map[string]any{"size_bytes": 10}, 400, "missing_topic"},
		{map[string]any{"topic": "a b", "size_bytes": 10}, 400, "invalid_topic"},
		{map[string]any{"topic": "t", "key": "!", "size_bytes": 10}, 400, "invalid_key"},
		{map[string]any{"topic": "t", "partition": -2, "size_bytes": 10}, 400, "invalid_partition"},
		{map[string]any{"topic": "t", "size_bytes": 101}, 413, "payload_too_large"},
		{map[string]any{"topic": "t", "size_bytes": 10, "checksum_alg": "sha3"}, 400, "invalid_checksum"},
	} {
		if a := doJSON(t, "POST", srv.URL+"/lfs/uploads", tc.body); a.status != tc.status || a.code(t) != tc.code {
			t.Fatalf("%v: %d %s", tc.body, a.status, a.body)
		}
	}
	// No broker: no upload is started.
	e.prod.connectErr = ErrNoBroker
	if a := doJSON(t, "POST", srv.URL+"/lfs/uploads", map[string]any{"topic": "t", "size_bytes": 10}); a.status != 503 || a.code(t) != "backend_unavailable" {
		t.Fatalf("%d %s", a.status, a.body)
	}
	if keys, ups := e.objects(); len(keys)+len(ups) != 0 {
		t.Fatalf("written without a broker: %v %v", keys, ups)
	}
	e.prod.connectErr = nil

	in := initUpload(t, srv.URL, map[string]any{"topic": "t", "size_bytes": 10})
	if a := putPart(t, srv.URL, "bogus", 1, []byte("x")); a.status != 404 || a.code(t) != "upload_not_found" {
		t.Fatalf("%d %s", a.status, a.body)
	}
	forged := in.UploadID[:len(in.UploadID)-2] + "AA"
	if a := putPart(t, srv.URL, forged, 1, []byte("x")); a.status != 404 {
		t.Fatalf("forged id: %d %s", a.status, a.body)
	}
	if a := putPart(t, srv.URL, in.UploadID, 0, []byte("x")); a.status != 400 || a.code(t) != "invalid_part" {
		t.Fatalf("%d %s", a.status, a.body)
	}
	if a := putPart(t, srv.URL, in.UploadID, 1, make([]byte, 11)); a.status != 400 || a.code(t) != "invalid_part" {
		t.Fatalf("%d %s", a.status, a.body)
	}
	p := putPart(t, srv.URL, in.UploadID, 1, []byte("01234"))
	var pr struct{ ETag string }
	_ = json.Unmarshal(p.body, &pr)
	complete := func(parts ...map[string]any) answer {
		return doJSON(t, "POST", srv.URL+"/lfs/uploads/"+in.UploadID+"/complete", map[string]any{"parts": parts})
	}
	if a := complete(); a.status != 400 || a.code(t) != "incomplete_upload" {
		t.Fatalf("%d %s", a.status, a.body)
	}
	if a := complete(map[string]any{"part_number": 1, "etag": pr.ETag}); a.status != 400 || a.code(t) != "incomplete_upload" {
		t.Fatalf("short of the declared size: %d %s", a.status, a.body)
	}
	if a := complete(map[string]any{"part_number": 1, "etag": "0123"}); a.status != 400 || a.code(t) != "invalid_part" {
		t.Fatalf("%d %s", a.status, a.body)
	}
	// No broker at completion: nothing completed, the upload stays.
	e.prod.connectErr = ErrNoBroker
	if a := complete(map[string]any{"part_number": 1, "etag": pr.ETag}); a.status != 503 {
		t.Fatalf("%d %s", a.status, a.body)
	}
	e.prod.connectErr = nil
	if _, ups := e.objects(); len(ups) != 1 {
		t.Fatalf("uploads %v", ups)
	}
	if a := do(t, "DELETE", srv.URL+"/lfs/uploads/"+in.UploadID, nil, 0, nil); a.status != 204 {
		t.Fatalf("%d %s", a.status, a.body)
	}
	if a := putPart(t, srv.URL, in.UploadID, 2, []byte("x")); a.status != 404 || a.code(t) != "upload_not_found" {
		t.Fatalf("after abort: %d %s", a.status, a.body)
	}
	if a := do(t, "DELETE", srv.URL+"/lfs/uploads/"+in.UploadID, nil, 0, nil); a.status != 404 {
		t.Fatalf("%d %s", a.status, a.body)
	}
	e.assertEmpty()
}

// gateBE holds every CompleteMultipartUpload until two are waiting, so two
// replicas' completions of one session really overlap.
type gateBE struct {
	backend.Store
	arrived atomic.Int32
	both    chan struct{}
	once    sync.Once
}

func (g *gateBE) CompleteMultipartUpload(ctx context.Context, in backend.CompleteMultipartInput) (backend.CompleteMultipartOutput, error) {
	if g.arrived.Add(1) == 2 {
		g.once.Do(func() { close(g.both) })
	}
	select {
	case <-g.both:
	case <-time.After(5 * time.Second):
	}
	return g.Store.CompleteMultipartUpload(ctx, in)
}

// TestConcurrentCompletionsOneOwner: two replicas complete one session at
// once (a client retrying a slow completion at another replica), one of
// them with a broken broker. The one whose backend completion made the
// object owns it (were both to take it for their own, B would delete the
// blob A had published); the other answers 409 upload_completed and
// touches nothing, or 404 when the owner removed the session first. Whoever wins: a 200 means the
// blob is there and its envelope produced once; no 200 means no record.
func TestConcurrentCompletionsOneOwner(t *testing.T) {
	e := newEnv(t)
	g := &gateBE{Store: e.be, both: make(chan struct{})}
	mk := func(p *fakeProducer) func(*Config) {
		return func(c *Config) {
			st, err := sealstore.New(sealstore.Direct(g), e.kr, sealstore.Options{SpoolDir: t.TempDir(), BackendChecksum: true, OwnerPendingAge: time.Nanosecond})
			if err != nil {
				t.Fatal(err)
			}
			c.Store, c.Producer = st, p
		}
	}
	prodA := &fakeProducer{}
	prodB := &fakeProducer{checkErr: fmt.Errorf("%w: broker went away", ErrNoBroker)}
	_, a := e.replica(mk(prodA))
	_, b := e.replica(mk(prodB))

	data := randBytes(1000, 51)
	in := initUpload(t, a.URL, map[string]any{"topic": "orders", "size_bytes": len(data)})
	pa := putPart(t, a.URL, in.UploadID, 1, data)
	if pa.status != 200 {
		t.Fatalf("part: %d %s", pa.status, pa.body)
	}
	etag := strings.Split(strings.Split(string(pa.body), `"etag":"`)[1], `"`)[0]
	body := map[string]any{"parts": []map[string]any{{"part_number": 1, "etag": etag}}}
	var wg sync.WaitGroup
	var ra, rb answer
	wg.Add(2)
	go func() { defer wg.Done(); ra = doJSON(t, "POST", a.URL+"/lfs/uploads/"+in.UploadID+"/complete", body) }()
	go func() { defer wg.Done(); rb = doJSON(t, "POST", b.URL+"/lfs/uploads/"+in.UploadID+"/complete", body) }()
	wg.Wait()
	t.Logf("replica A: %d %s", ra.status, ra.body)
	t.Logf("replica B: %d %s", rb.status, rb.body)
	// The other answers 409 while the owner works, or 404 when the
	// owner finished and removed the session before the other looked
	// (its gate then never held both at once; S3 answers a completed
	// upload NoSuchUpload too): never a second owner.
	loser := func(r answer) bool { return r.status == 409 || r.status == 404 }
	if loser(ra) == loser(rb) {
		t.Fatalf("want exactly one owner and one 409 (or 404 after a failed owner): A %d, B %d", ra.status, rb.status)
	}
	records := len(prodA.got()) + len(prodB.got())
	switch {
	case ra.status == 200 || rb.status == 200:
		if records != 1 || len(e.blobs()) != 1 {
			t.Fatalf("a 200 with %d records produced and %d blobs stored", records, len(e.blobs()))
		}
	default:
		if records != 0 || len(e.blobs()) != 0 {
			t.Fatalf("no 200, yet %d records and %d blobs", records, len(e.blobs()))
		}
	}
}
