package lfs

import (
	"bytes"
	"context"
	"crypto/md5"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"regexp"
	"strings"
	"testing"

	"github.com/s3seal/s3seal/backend"
	"github.com/s3seal/s3seal/lfs/brokers"
	"github.com/twmb/franz-go/pkg/kfake"
)

var keyRE = regexp.MustCompile(`^default/orders/lfs/\d{4}/\d{2}/\d{2}/obj-[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)

func TestProduceSmallBlob(t *testing.T) {
	e := newEnv(t)
	h, srv := e.replica(func(c *Config) { c.ProxyID = "p1" })
	data := randBytes(100_000, 1)
	md := md5.Sum(data)
	a := produce(t, srv.URL, "orders", data, map[string]string{
		"X-Kafka-Key": base64.StdEncoding.EncodeToString([]byte("k1")), "X-Kafka-Partition": "2",
		"X-LFS-Checksum-Alg": "md5", "X-LFS-Checksum": hex.EncodeToString(md[:]), "Content-Type": "image/png",
		"X-Request-ID": "req-1"})
	env := envelopeOf(t, a)
	sha := sha256.Sum256(data)
	if env.Version != 1 || env.Bucket != testBucket || !keyRE.MatchString(env.Key) || env.Size != int64(len(data)) ||
		env.SHA256 != hex.EncodeToString(sha[:]) || env.ChecksumAlg != "md5" || env.Checksum != hex.EncodeToString(md[:]) ||
		env.ContentType != "image/png" || env.ProxyID != "p1" || env.CreatedAt == "" {
		t.Fatalf("envelope %+v", env)
	}
	if a.header.Get("X-Request-ID") != "req-1" {
		t.Fatalf("request id not echoed: %q", a.header.Get("X-Request-ID"))
	}
	// The record value is the envelope, with the key and partition asked for.
	recs := e.prod.got()
	if len(recs) != 1 || recs[0].topic != "orders" || recs[0].partition != 2 || string(recs[0].key) != "k1" {
		t.Fatalf("records %+v", recs)
	}
	if !bytes.HasPrefix(recs[0].value, []byte(`{"kfs_lfs":1,`)) || !bytes.Equal(bytes.TrimSpace(a.body), recs[0].value) {
		t.Fatalf("record value %s, answer %s", recs[0].value, a.body)
	}
	if got := e.readBlob(env.Key); !bytes.Equal(got, data) {
		t.Fatal("stored blob differs")
	}
	// The backend holds ciphertext.
	obj, err := e.be.GetObject(context.Background(), backend.GetInput{Bucket: testBucket, Key: env.Key})
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := io.ReadAll(obj.Body)
	obj.Body.Close()
	if bytes.Contains(raw, data[:1000]) {
		t.Fatal("the backend holds plaintext")
	}
	if value(h.metrics.uploads.WithLabelValues("orders")) != 1 ||
		value(h.metrics.requests.WithLabelValues("orders", "ok", "produce")) != 1 ||
		value(h.metrics.uploadBytes) != float64(len(data)) {
		t.Fatal("metrics not counted")
	}
	if e.prod.connects != 1 || e.prod.closes != 1 {
		t.Fatalf("connects %d closes %d", e.prod.connects, e.prod.closes)
	}
}

// A blob larger than a part streams into a multipart upload, with and
// without a declared length; nothing is buffered beyond sealstore's spool.
func TestProduceStreamsPastOnePart(t *testing.T) {
	e := newEnv(t)
	_, srv := e.replica(nil)
	data := randBytes(11<<20+12345, 2)
	sha := sha256.Sum256(data)
	for _, size := range []int64{int64(len(data)), -1} {
		body := io.MultiReader(bytes.NewReader(data)) // not a *bytes.Reader: no length from the body
		a := do(t, "POST", srv.URL+"/lfs/produce", body, size, map[string]string{"X-Kafka-Topic": "orders",
			"X-LFS-Checksum": hex.EncodeToString(sha[:])})
		env := envelopeOf(t, a)
		if env.Size != int64(len(data)) || env.SHA256 != hex.EncodeToString(sha[:]) || env.ChecksumAlg != "sha256" {
			t.Fatalf("envelope %+v", env)
		}
		info, err := e.store().Head(context.Background(), testBucket, env.Key)
		if err != nil {
			t.Fatal(err)
		}
		if info.PartsCount != 3 {
			t.Fatalf("size %d: %d parts, want 3", size, info.PartsCount)
		}
		if !bytes.Equal(e.readBlob(env.Key), data) {
			t.Fatal("stored blob differs")
		}
	}
	if _, ups := e.objects(); len(ups) != 0 {
		t.Fatalf("uploads left: %v", ups)
	}
}

func TestProduceChecksumMismatchStoresNothing(t *testing.T) {
	for _, n := range []int{1000, 6 << 20} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			e := newEnv(t)
			_, srv := e.replica(nil)
			a := produce(t, srv.URL, "orders", randBytes(n, 3), map[string]string{"X-LFS-Checksum": strings.Repeat("ab", 32)})
			if a.status != 400 || a.code(t) != "checksum_mismatch" {
				t.Fatalf("%d %s", a.status, a.body)
			}
			e.assertEmpty()
			if len(e.prod.got()) != 0 {
				t.Fatal("a record was produced")
			}
		})
	}
}

func TestProduceBrokerFailures(t *testing.T) {
	sent := fmt.Errorf("%w: request timed out", ErrSentThenFailed)
	for _, tc := range []struct {
		name                    string
		connect, check, produce error
		status                  int
		code                    string
		kept                    bool
	}{
		{"no broker before upload", ErrNoBroker, nil, nil, 503, "backend_unavailable", false},
		{"check fails after upload", nil, ErrNoBroker, nil, 503, "backend_unavailable", false},
		{"no broker accepted", nil, nil, fmt.Errorf("tried 3: %w", ErrNoBroker), 503, "backend_unavailable", false},
		{"sent then failed", nil, nil, sent, 502, "backend_error", true},
	} {
		for _, n := range []int{1000, 6 << 20} {
			t.Run(fmt.Sprint(tc.name, n), func(t *testing.T) {
				e := newEnv(t)
				e.prod.connectErr, e.prod.checkErr, e.prod.produceErr = tc.connect, tc.check, tc.produce
				h, srv := e.replica(nil)
				a := produce(t, srv.URL, "orders", randBytes(n, 4), nil)
				if a.status != tc.status || a.code(t) != tc.code {
					t.Fatalf("%d %s", a.status, a.body)
				}
				orphans := value(h.metrics.orphans)
				if tc.kept {
					if b := e.blobs(); len(b) != 1 || orphans != 1 {
						t.Fatalf("blobs %v, orphans %v: want the blob kept and counted", b, orphans)
					}
					return
				}
				e.assertEmpty()
				if orphans != 0 {
					t.Fatalf("orphans %v", orphans)
				}
				if tc.connect != nil {
					// Nothing at all was written: not even multipart state.
					if keys, _ := e.objects(); len(keys) != 0 {
						t.Fatalf("objects written without a broker: %v", keys)
					}
				}
			})
		}
	}
}

// A delete that fails after the produce failed leaves an orphan, counted.
func TestProduceDeleteFailureCountsOrphan(t *testing.T) {
	e := newEnv(t)
	e.prod.checkErr = ErrNoBroker
	e.be = &failingDeletes{Store: e.be}
	h, srv := e.replica(nil)
	a := produce(t, srv.URL, "orders", randBytes(1000, 5), nil)
	if a.status != 503 || value(h.metrics.orphans) != 1 || value(h.metrics.storageErrors) != 1 {
		t.Fatalf("%d %s orphans %v", a.status, a.body, value(h.metrics.orphans))
	}
}

type failingDeletes struct{ backend.Store }

func (f *failingDeletes) DeleteObject(ctx context.Context, bucket, key string) error {
	return fmt.Errorf("injected delete failure")
}

func (f *failingDeletes) DeleteObjectVersion(ctx context.Context, in backend.DeleteInput) (backend.DeleteOutput, error) {
	return backend.DeleteOutput{}, fmt.Errorf("injected delete failure")
}

func TestProduceRequestErrors(t *testing.T) {
	e := newEnv(t)
	_, srv := e.replica(func(c *Config) { c.MaxBlobSize = 6 << 20; c.APIKey = "sekrit" })
	auth := map[string]string{"X-API-Key": "sekrit"}
	with := func(kv ...string) map[string]string {
		m := map[string]string{"Authorization": "Bearer sekrit"}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return m
	}
	small := []byte("hello")
	for _, tc := range []struct {
		name, topic string
		data        []byte
		hdr         map[string]string
		status      int
		code        string
	}{
		{"no key", "t", small, nil, 401, "unauthorized"},
		{"wrong key", "t", small, map[string]string{"X-API-Key": "sekriT"}, 401, "unauthorized"},
		{"missing topic", "", small, auth, 400, "missing_topic"},
		{"invalid topic", "a/b", small, auth, 400, "invalid_topic"},
		{"long topic", strings.Repeat("a", 250), small, auth, 400, "invalid_topic"},
		{"invalid key", "t", small, with("X-Kafka-Key", "%%%"), 400, "invalid_key"},
		{"invalid partition", "t", small, with("X-Kafka-Partition", "x"), 400, "invalid_partition"},
		{"negative partition", "t", small, with("X-Kafka-Partition", "-1"), 400, "invalid_partition"},
		{"unknown alg", "t", small, with("X-LFS-Checksum-Alg", "sha1"), 400, "invalid_checksum"},
		{"bad checksum", "t", small, with("X-LFS-Checksum", "xyz"), 400, "invalid_checksum"},
		{"checksum with none", "t", small, with("X-LFS-Checksum-Alg", "none", "X-LFS-Checksum", "00"), 400, "invalid_checksum"},
		{"empty", "t", nil, auth, 400, "empty_upload"},
		{"too large declared", "t", make([]byte, 6<<20+1), auth, 413, "payload_too_large"},
		{"ok bearer", "t", small, with(), 200, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := produce(t, srv.URL, tc.topic, tc.data, tc.hdr)
			if a.status != tc.status || (tc.code != "" && a.code(t) != tc.code) {
				t.Fatalf("%d %s", a.status, a.body)
			}
			if a.status != 200 {
				var eb map[string]string
				_ = json.Unmarshal(a.body, &eb)
				if eb["request_id"] == "" || eb["request_id"] != a.header.Get("X-Request-ID") {
					t.Fatalf("error body %s", a.body)
				}
			}
		})
	}
	// A body without a declared length that passes the maximum.
	a := do(t, "POST", srv.URL+"/lfs/produce", io.MultiReader(bytes.NewReader(make([]byte, 7<<20))), -1,
		with("X-Kafka-Topic", "t"))
	if a.status != 413 || a.code(t) != "payload_too_large" {
		t.Fatalf("%d %s", a.status, a.body)
	}
	if a := do(t, "GET", srv.URL+"/lfs/produce", nil, 0, auth); a.status != 405 || a.code(t) != "method_not_allowed" {
		t.Fatalf("%d %s", a.status, a.body)
	}
	if b := e.blobs(); len(b) != 1 {
		t.Fatalf("blobs %v, want the one good produce", b)
	}
	if _, ups := e.objects(); len(ups) != 0 {
		t.Fatalf("uploads left: %v", ups)
	}
}

// TestBadPartitionDeletesBlob: X-Kafka-Partition naming a partition the
// topic does not have fails in brokers.Session.Produce's route() before
// anything is sent (its doc: "Other errors (unknown topic, partition out
// of range) mean nothing was sent"), so publish must not take it for
// "sent then failed" (keep the blob, count an orphan, answer 502 "the
// record may exist"): the blob is deleted and no orphan is counted.
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
