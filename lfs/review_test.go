package lfs

// Tests from a hostile review of the LFS module: regressions for what it
// found, and the attacks the module withstood.

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"

	"github.com/s3seal/s3seal/backend"
	"github.com/s3seal/s3seal/lfs/brokers"
	"github.com/s3seal/s3seal/sealstore"
)

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
// them with a broken broker. A review found both took the completion for
// their own, so B deleted the blob A had published. Now the one whose
// backend completion made the object owns it; the other answers 409
// upload_completed and touches nothing. Whoever wins: a 200 means the
// blob is there and its envelope produced once; no 200 means no record.
func TestConcurrentCompletionsOneOwner(t *testing.T) {
	e := newEnv(t)
	g := &gateBE{Store: e.be, both: make(chan struct{})}
	mk := func(p *fakeProducer) func(*Config) {
		return func(c *Config) {
			st, err := sealstore.New(g, e.kr, sealstore.Options{SpoolDir: t.TempDir(), BackendChecksum: true})
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
	if (ra.status == 409) == (rb.status == 409) {
		t.Fatalf("want exactly one owner and one 409: A %d, B %d", ra.status, rb.status)
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

// A review found: X-Kafka-Partition naming a partition the topic does not
// have kept the blob as an orphan; nothing was sent, so it is deleted.
// brokers.Session.Produce fails in route() before anything is sent (its own
// doc: "Other errors (unknown topic, partition out of range) mean nothing
// was sent"), yet publish treats every error not matching ErrNoBroker as
// "sent then failed": it keeps the blob, counts an orphan and answers 502
// "the record may exist". Expected: the blob is deleted (nothing was sent),
// no orphan, a 4xx/503 answer.
func TestBadPartitionDeletesBlob(t *testing.T) {
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(1, "orders"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	d, err := brokers.New(context.Background(), brokers.Config{Static: c.ListenAddrs()})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	e := newEnv(t)
	h, srv := e.replica(func(cfg *Config) { cfg.Producer = FromDiscovery(d) })
	a := produce(t, srv.URL, "orders", randBytes(5000, 52), map[string]string{"X-Kafka-Partition": "7"})
	t.Logf("answer %d %s; orphans %v; blobs %v", a.status, a.body, value(h.metrics.orphans), e.blobs())
	if len(e.blobs()) != 0 || value(h.metrics.orphans) != 0 {
		t.Fatalf("a produce to a partition that does not exist (nothing sent) left blob(s) %v and %v orphan(s); answer %d %s",
			e.blobs(), value(h.metrics.orphans), a.status, a.code(t))
	}
}

// A review found: /lfs/download put the key's second segment into the "topic"
// label of s3seal_lfs_requests_total without bounding it, for keys that
// do not exist. Any client (there is no API key by default) grows the
// process's memory without limit: every request keeps a new series whose
// label is up to ~1 MiB. Expected: labels only from validated topics.
func TestDownloadKeysDoNotGrowMetrics(t *testing.T) {
	e := newEnv(t)
	h, srv := e.replica(nil)
	const n = 20
	for i := 0; i < n; i++ {
		seg := fmt.Sprintf("%d-%s", i, strings.Repeat("x", 256<<10))
		a := doJSON(t, "POST", srv.URL+"/lfs/download", map[string]any{"bucket": testBucket, "key": "default/" + seg + "/obj", "mode": "stream"})
		if a.status == 200 {
			t.Fatalf("download of a missing key: 200")
		}
	}
	series := 0
	var buf bytes.Buffer
	mfs, _ := h.metrics.Registry().Gather()
	for _, mf := range mfs {
		for _, m := range mf.Metric {
			if mf.GetName() == "s3seal_lfs_requests_total" {
				series++
			}
			for _, l := range m.Label {
				buf.WriteString(l.GetValue())
			}
		}
	}
	t.Logf("%d request series, %d bytes of label values retained", series, buf.Len())
	if series >= n || buf.Len() > 1<<20 {
		t.Fatalf("%d failed downloads of made-up keys left %d series and %d bytes of label values in memory for good",
			n, series, buf.Len())
	}
}

// TestSweeperSparesLiveProduce: a /lfs/produce streaming a large blob is
// a multipart upload that may live longer than SessionTTL; the sweeper
// (on another replica) must not abort it while parts keep coming, and
// must abort a session nobody came back to. (A review found every upload
// older than the TTL was swept, live produces too.) Real time, with a
// 2 s session TTL and no grace.
func TestSweeperSparesLiveProduce(t *testing.T) {
	e := newEnv(t)
	short := func(c *Config) { c.SessionTTL, c.SweepGrace, c.Now = 2*time.Second, time.Millisecond, nil }
	_, srv := e.replica(short)
	sweeper, _ := e.replica(short)
	pr, pw := io.Pipe()
	const parts = 4
	data := randBytes(parts*sealstore.MinPartSize+100, 53)
	done := make(chan answer, 1)
	go func() {
		req, _ := http.NewRequest("POST", srv.URL+"/lfs/produce", pr)
		req.Header.Set("X-Kafka-Topic", "orders")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			done <- answer{status: -1, body: []byte(err.Error())}
			return
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		done <- answer{status: resp.StatusCode, body: b}
	}()
	// An abandoned session: created, never used.
	if a := doJSON(t, "POST", srv.URL+"/lfs/uploads", map[string]any{"topic": "orders", "size_bytes": 10}); a.status != 200 {
		t.Fatalf("session: %d %s", a.status, a.body)
	}
	swept := 0
	for i := 0; i < parts; i++ { // a part every second, 4 s in all: longer than the TTL
		if _, err := pw.Write(data[i*sealstore.MinPartSize : (i+1)*sealstore.MinPartSize]); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Second)
		n, err := sweeper.SweepExpired(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		swept += n
	}
	go func() { pw.Write(data[parts*sealstore.MinPartSize:]); pw.Close() }()
	a := <-done
	if a.status != 200 {
		t.Fatalf("the live produce answered %d %s", a.status, a.body)
	}
	if swept != 1 {
		t.Fatalf("swept %d uploads, want the abandoned session's only", swept)
	}
	if _, ups := e.objects(); len(ups) != 0 {
		t.Fatalf("uploads left: %v", ups)
	}
}

// Holds: a hostile backend swaps blob ciphertexts (with their metadata)
// between two keys, or flips a byte; stream download of blobs just under
// and over the 64 KiB hold-back is never a clean success with Go's client.
func TestSwappedOrTamperedBlobNeverClean(t *testing.T) {
	for _, size := range []int{holdBack - 1, holdBack, holdBack + 1, 3*holdBack + 5} {
		for _, attack := range []string{"swap", "flip-last", "flip-first", "truncate"} {
			t.Run(fmt.Sprintf("%d/%s", size, attack), func(t *testing.T) {
				e := newEnv(t)
				_, srv := e.replica(nil)
				d1, d2 := randBytes(size, 1), randBytes(size, 2)
				k1 := envelopeOf(t, produce(t, srv.URL, "orders", d1, nil)).Key
				k2 := envelopeOf(t, produce(t, srv.URL, "orders", d2, nil)).Key
				ctx := context.Background()
				get := func(k string) ([]byte, backend.ObjectInfo) {
					o, err := e.be.GetObject(ctx, backend.GetInput{Bucket: testBucket, Key: k})
					if err != nil {
						t.Fatal(err)
					}
					b, _ := io.ReadAll(o.Body)
					o.Body.Close()
					return b, o.Info
				}
				raw, info := get(k2)
				switch attack {
				case "flip-last":
					raw, info = get(k1)
					raw[len(raw)-20] ^= 1
				case "flip-first":
					raw, info = get(k1)
					raw[40] ^= 1
				case "truncate":
					raw, info = get(k1)
					raw = raw[:len(raw)-100]
				}
				if _, err := e.be.PutObject(ctx, backend.PutInput{Bucket: testBucket, Key: k1, Body: bytes.NewReader(raw),
					Size: int64(len(raw)), Meta: info.Meta, Headers: info.Headers}); err != nil {
					t.Fatal(err)
				}
				sum := sha256.Sum256(d1)
				for _, integ := range []map[string]any{nil, {"sha256": hex.EncodeToString(sum[:]), "size": size}} {
					body := map[string]any{"bucket": testBucket, "key": k1, "mode": "stream"}
					if integ != nil {
						body["integrity"] = integ
					}
					b, _ := jsonBody(body)
					resp, err := http.Post(srv.URL+"/lfs/download", "application/json", b)
					if err != nil {
						continue
					}
					got, rerr := io.ReadAll(resp.Body)
					resp.Body.Close()
					if resp.StatusCode == 200 && rerr == nil {
						t.Fatalf("tampered blob (%s) served as a clean 200 of %d bytes (equal to d1: %v, d2: %v)", attack, len(got),
							bytes.Equal(got, d1), bytes.Equal(got, d2))
					}
				}
			})
		}
	}
}

func jsonBody(v any) (io.Reader, error) {
	b, err := json.Marshal(v)
	return bytes.NewReader(b), err
}

// Holds: forged, altered, truncated, expired and foreign-keyring session
// ids; download keys escaping the namespace or naming another bucket.
func TestSessionIDsAndDownloadKeys(t *testing.T) {
	e := newEnv(t)
	_, a := e.replica(nil)
	other := newEnv(t) // another keyring, same bucket name
	_, o := other.replica(nil)
	in := initUpload(t, a.URL, map[string]any{"topic": "orders", "size_bytes": 10})
	id := in.UploadID
	flip := []byte(id)
	flip[len(flip)/2] ^= 1
	for name, bad := range map[string]string{"altered": string(flip), "truncated": id[:len(id)-4], "empty-ish": "AA", "junk": "..%2F..",
		"extended": id + "AAAA"} {
		if r := putPart(t, a.URL, bad, 1, []byte("0123456789")); r.status != 404 && r.status != 400 {
			t.Fatalf("%s id: part %d %s", name, r.status, r.body)
		}
	}
	if r := putPart(t, o.URL, id, 1, []byte("0123456789")); r.status != 404 {
		t.Fatalf("other keyring accepted the session: %d", r.status)
	}
	e.clock.Store(time.Now().Add(2 * DefaultSessionTTL).UnixNano())
	if r := putPart(t, a.URL, id, 1, []byte("0123456789")); r.status != 410 {
		t.Fatalf("expired: %d %s", r.status, r.body)
	}
	e.clock.Store(0)
	if _, ups := e.objects(); len(ups) != 0 {
		t.Fatalf("expired session's upload not aborted: %v", ups)
	}
	for _, k := range []string{"default/../x", "/default/x", "default//x", "default/./x", "other/x", "default\\..\\x", "default/x/..",
		".s3seal/x", "default", "default/%2e%2e/x"} {
		r := doJSON(t, "POST", a.URL+"/lfs/download", map[string]any{"bucket": testBucket, "key": k, "mode": "stream"})
		if r.status == 200 {
			t.Fatalf("key %q: 200", k)
		}
	}
	if r := doJSON(t, "POST", a.URL+"/lfs/download", map[string]any{"bucket": "../lfs", "key": "default/x", "mode": "stream"}); r.status != 400 {
		t.Fatalf("bucket: %d", r.status)
	}
}
