package s3api

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/s3seal/s3seal/backend"
	"github.com/s3seal/s3seal/crypto"
	"github.com/s3seal/s3seal/sealstore"
)

// shortStore cuts every GET body after keep bytes and ends it as net/http
// does for a body shorter than its Content-Length.
type shortStore struct {
	backend.Store
	keep int64
}

func (s *shortStore) GetObject(ctx context.Context, in backend.GetInput) (*backend.Object, error) {
	obj, err := s.Store.GetObject(ctx, in)
	if err != nil {
		return nil, err
	}
	obj.Body = struct {
		io.Reader
		io.Closer
	}{io.MultiReader(io.LimitReader(obj.Body, s.keep), iotestErr{io.ErrUnexpectedEOF}), obj.Body}
	return obj, nil
}

type iotestErr struct{ err error }

func (e iotestErr) Read([]byte) (int, error) { return 0, e.err }

// syncBuffer is a log sink the server's goroutines can share.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestShortBackendBodyLogged: a GET whose backend body is cut never looks
// like a success to the client (an error status, or fewer bytes than
// Content-Length) and is logged as an error naming the object.
func TestShortBackendBodyLogged(t *testing.T) {
	be := embeddedStore(t)
	kr := testKeyring()
	ctx := context.Background()
	whole, _ := sealstore.New(sealstore.Direct(be), kr, sealstore.Options{SpoolDir: t.TempDir()})
	if err := be.CreateBucket(ctx, "bkt"); err != nil {
		t.Fatal(err)
	}
	data := bytes.Repeat([]byte("0123456789abcdef"), 3*65536/16+100)
	if _, err := whole.Put(ctx, sealstore.PutInput{Bucket: "bkt", Key: "obj", Body: bytes.NewReader(data), Size: int64(len(data))}); err != nil {
		t.Fatal(err)
	}
	var logs syncBuffer
	prev := slog.Default()
	slog.SetDefault(slog.New(slog.NewTextHandler(&logs, nil)))
	t.Cleanup(func() { slog.SetDefault(prev) })

	seg := int64(crypto.SegmentSize + crypto.SegmentOverhead)
	for _, keep := range []int64{5, 1000, seg - 1, seg, 2*seg + 10} {
		for _, rng := range []string{"", "bytes=10-"} {
			st, _ := sealstore.New(sealstore.Direct(&shortStore{Store: be, keep: keep}), kr, sealstore.Options{SpoolDir: t.TempDir()})
			srv := httptest.NewServer(New(Config{Store: st, Credentials: SingleCredential("ak", "sk")}))
			before := len(logs.String())
			req, _ := http.NewRequest(http.MethodGet, srv.URL+"/bkt/obj", nil)
			if rng != "" {
				req.Header.Set("Range", rng)
			}
			if err := signRequest(ctx, req); err != nil {
				t.Fatal(err)
			}
			resp, err := http.DefaultClient.Do(req)
			if err == nil {
				body, rerr := io.ReadAll(resp.Body)
				resp.Body.Close()
				if resp.StatusCode/100 == 2 && rerr == nil && int64(len(body)) == resp.ContentLength {
					t.Errorf("cut after %d (%q): complete %d answer of %d bytes", keep, rng, resp.StatusCode, len(body))
				}
			}
			srv.Close() // waits for the handler, so its log line is written
			if got := logs.String()[before:]; !strings.Contains(got, "level=ERROR") || !strings.Contains(got, "obj") {
				t.Errorf("cut after %d (%q): no error logged: %q", keep, rng, got)
			}
		}
	}
}
