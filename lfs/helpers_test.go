package lfs

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/s3seal/s3seal/backend"
	"github.com/s3seal/s3seal/backend/embedded"
	"github.com/s3seal/s3seal/crypto"
	"github.com/s3seal/s3seal/sealstore"
)

// fakeProducer records what is produced and fails as told.
type fakeProducer struct {
	mu                               sync.Mutex
	connectErr, checkErr, produceErr error
	records                          []record
	connects, closes                 int
}

type record struct {
	topic      string
	partition  int32
	key, value []byte
}

func (f *fakeProducer) Connect(ctx context.Context) (Session, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.connectErr != nil {
		return nil, f.connectErr
	}
	f.connects++
	return &fakeSession{f}, nil
}

func (f *fakeProducer) got() []record {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]record(nil), f.records...)
}

type fakeSession struct{ f *fakeProducer }

func (s *fakeSession) Check(ctx context.Context) error {
	s.f.mu.Lock()
	defer s.f.mu.Unlock()
	return s.f.checkErr
}

func (s *fakeSession) Produce(ctx context.Context, topic string, partition int32, key, value []byte, headers map[string][]byte) (Produced, error) {
	s.f.mu.Lock()
	defer s.f.mu.Unlock()
	if s.f.produceErr != nil {
		return Produced{}, s.f.produceErr
	}
	s.f.records = append(s.f.records, record{topic, partition, key, value})
	return Produced{Partition: max(partition, 0), Offset: int64(len(s.f.records) - 1)}, nil
}

func (s *fakeSession) Close() error {
	s.f.mu.Lock()
	defer s.f.mu.Unlock()
	s.f.closes++
	return nil
}

const testBucket = "lfs"

// env is one backend with its keyring; replicas are Handlers over their
// own sealstore.Store on it, like s3seal processes sharing a store.
type env struct {
	t     *testing.T
	be    backend.Store
	kr    *crypto.Keyring
	prod  *fakeProducer
	clock atomic.Int64 // unix nanos; 0 = real time
}

func newEnv(t *testing.T) *env {
	t.Helper()
	be, closer, err := embedded.NewStore(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { closer.Close() })
	key, _ := crypto.GenerateKey()
	kr, err := crypto.NewKeyring("k1", map[string][]byte{"k1": key})
	if err != nil {
		t.Fatal(err)
	}
	if err := be.CreateBucket(context.Background(), testBucket); err != nil {
		t.Fatal(err)
	}
	return &env{t: t, be: be, kr: kr, prod: &fakeProducer{}}
}

func (e *env) now() time.Time {
	if n := e.clock.Load(); n != 0 {
		return time.Unix(0, n)
	}
	return time.Now()
}

func (e *env) store() *sealstore.Store {
	st, err := sealstore.New(sealstore.Direct(e.be), e.kr, sealstore.Options{SpoolDir: e.t.TempDir(), BackendChecksum: true, OwnerPendingAge: time.Nanosecond})
	if err != nil {
		e.t.Fatal(err)
	}
	return st
}

// replica starts a Handler (edit tweaks its Config) behind an httptest server.
func (e *env) replica(edit func(*Config)) (*Handler, *httptest.Server) {
	e.t.Helper()
	cfg := Config{Store: e.store(), Producer: e.prod, Keyring: e.kr, Bucket: testBucket, PartSize: sealstore.MinPartSize, Now: e.now}
	if edit != nil {
		edit(&cfg)
	}
	h, err := New(cfg)
	if err != nil {
		e.t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	e.t.Cleanup(srv.Close)
	return h, srv
}

// objects lists the bucket (s3seal's own .s3seal/ state included) and the
// multipart uploads in progress, as the backend has them.
func (e *env) objects() (keys []string, uploads []string) {
	e.t.Helper()
	ctx := context.Background()
	out, err := e.be.ListObjects(ctx, backend.ListInput{Bucket: testBucket, V2: true})
	if err != nil {
		e.t.Fatal(err)
	}
	for _, o := range out.Entries {
		keys = append(keys, o.Key)
	}
	ups, err := e.be.ListMultipartUploads(ctx, backend.ListUploadsInput{Bucket: testBucket})
	if err != nil {
		e.t.Fatal(err)
	}
	for _, u := range ups.Uploads {
		uploads = append(uploads, u.Key)
	}
	return keys, uploads
}

// blobs are the objects under the namespace (the blobs themselves).
func (e *env) blobs() []string {
	keys, _ := e.objects()
	var out []string
	for _, k := range keys {
		if !bytes.HasPrefix([]byte(k), []byte(".s3seal/")) {
			out = append(out, k)
		}
	}
	return out
}

func (e *env) assertEmpty() {
	e.t.Helper()
	if b := e.blobs(); len(b) != 0 {
		e.t.Fatalf("blobs left in storage: %v", b)
	}
	if _, ups := e.objects(); len(ups) != 0 {
		e.t.Fatalf("multipart uploads left: %v", ups)
	}
}

func randBytes(n int, seed uint64) []byte {
	r := rand.New(rand.NewPCG(seed, 9))
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return b
}

type answer struct {
	status int
	body   []byte
	header http.Header
}

func (a answer) code(t *testing.T) string {
	t.Helper()
	var e struct{ Code, Message string }
	_ = json.Unmarshal(a.body, &e)
	return e.Code
}

func do(t *testing.T, method, url string, body io.Reader, size int64, hdr map[string]string) answer {
	t.Helper()
	req, err := http.NewRequest(method, url, body)
	if err != nil {
		t.Fatal(err)
	}
	if body != nil {
		req.ContentLength = size
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("%s %s: reading the answer: %v", method, url, err)
	}
	return answer{resp.StatusCode, b, resp.Header}
}

func doJSON(t *testing.T, method, url string, v any) answer {
	t.Helper()
	b, _ := json.Marshal(v)
	return do(t, method, url, bytes.NewReader(b), int64(len(b)), map[string]string{"Content-Type": "application/json"})
}

func produce(t *testing.T, url, topic string, data []byte, hdr map[string]string) answer {
	t.Helper()
	h := map[string]string{"X-Kafka-Topic": topic}
	for k, v := range hdr {
		h[k] = v
	}
	return do(t, "POST", url+"/lfs/produce", bytes.NewReader(data), int64(len(data)), h)
}

func envelopeOf(t *testing.T, a answer) Envelope {
	t.Helper()
	if a.status != 200 {
		t.Fatalf("status %d: %s", a.status, a.body)
	}
	var env Envelope
	if err := json.Unmarshal(a.body, &env); err != nil {
		t.Fatal(err)
	}
	return env
}

// readBlob reads a blob through sealstore (decrypting it).
func (e *env) readBlob(key string) []byte {
	e.t.Helper()
	_, rd, err := e.store().Get(context.Background(), testBucket, key, nil)
	if err != nil {
		e.t.Fatal(err)
	}
	defer rd.Close()
	b, err := io.ReadAll(rd)
	if err != nil {
		e.t.Fatal(err)
	}
	return b
}

// value is the value of a counter.
func value(c prometheus.Collector) float64 {
	ch := make(chan prometheus.Metric, 1)
	c.Collect(ch)
	var m dto.Metric
	if err := (<-ch).Write(&m); err != nil {
		panic(err)
	}
	return m.GetCounter().GetValue()
}

func jsonInt(n int) string { b, _ := json.Marshal(n); return string(b) }
