package sealstore

import (
	"bytes"
	"context"
	"crypto/rand"
	"fmt"
	"sync"
	"testing"

	"github.com/s3seal/s3seal/kms"
)

// generateLiar is a KMS that keeps its keys in memory and, while lie is
// set, answers GenerateKey with a plaintext its sealed form does not hold
// (a bug, a proxy, another key's answer).
type generateLiar struct {
	mu   sync.Mutex
	keys map[string][]byte
	lie  bool
}

func (g *generateLiar) Scheme() string { return "liar" }

func (g *generateLiar) GenerateKey(_ context.Context, name string, _ map[string]string) ([]byte, []byte, string, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	plain := make([]byte, 32)
	rand.Read(plain)
	handle := fmt.Sprintf("h%d", len(g.keys))
	g.keys[handle] = bytes.Clone(plain)
	if g.lie {
		rand.Read(plain)
	}
	return plain, []byte(handle), name, nil
}

func (g *generateLiar) Decrypt(_ context.Context, _ string, sealed []byte, _ map[string]string) ([]byte, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	k, ok := g.keys[string(sealed)]
	if !ok {
		return nil, &kms.ProviderError{Kind: kms.Invalid, Err: fmt.Errorf("no such sealed key")}
	}
	return bytes.Clone(k), nil
}

func (g *generateLiar) Rewrap(_ context.Context, _ string, sealed []byte, _ map[string]string) ([]byte, error) {
	return sealed, nil
}
func (*generateLiar) Version(string, []byte) string       { return "" }
func (*generateLiar) Check(context.Context, string) error { return nil }

// TestRewrapToKMSKeyVerifiesTheNewEnvelope: rewrap --to a KMS key replaces
// a readable envelope with a new one. With --kms-check-writes=false
// (kms.Options.TrustGenerate, which rewrap takes from the same flags as
// serve) a KMS whose GenerateDataKey lies makes rewrap overwrite every
// object's only envelope with one that opens only from the process's
// cache: after the run the objects are lost. rewrap must prove the new
// envelope opens (through the KMS, not the cache) before it writes it, as
// --latest does, whatever TrustGenerate says: unlike a client's write, a
// rewrap destroys the object's only readable envelope.
func TestRewrapToKMSKeyVerifiesTheNewEnvelope(t *testing.T) {
	f := newFixture(t)
	liar := &generateLiar{keys: map[string][]byte{}}
	open := func() (*Store, *kms.Service) {
		svc, err := kms.NewService(kms.Options{TrustGenerate: true}, liar)
		if err != nil {
			t.Fatal(err)
		}
		kr, err := f.kr.WithService(svc, "", nil)
		if err != nil {
			t.Fatal(err)
		}
		st, err := New(Direct(f.be), kr, Options{SpoolDir: t.TempDir(), BackendChecksum: true, KMS: svc})
		if err != nil {
			t.Fatal(err)
		}
		return st, svc
	}
	st, _ := open()
	data := randBytes(1000, 3)
	if _, err := st.Put(f.ctx, PutInput{Bucket: bucket, Key: "obj", Body: bytes.NewReader(data), Size: int64(len(data))}); err != nil {
		t.Fatal(err)
	}
	liar.mu.Lock()
	liar.lie = true
	liar.mu.Unlock()
	var res []RewrapResult
	if err := st.Rewrap(f.ctx, bucket, RewrapOptions{To: "liar:master", NoWriters: true}, func(r RewrapResult) { res = append(res, r) }); err != nil {
		t.Fatal(err)
	}
	// A later process (a cold cache) reads the object back.
	st2, _ := open()
	_, rd, err := st2.Get(f.ctx, bucket, "obj", nil)
	if err == nil {
		rd.Close()
	}
	t.Logf("rewrap: %+v; read after: %v", res, err)
	if err != nil {
		t.Errorf("rewrap --to a KMS key whose GenerateDataKey lied left the object unreadable: %v", err)
	}
}
