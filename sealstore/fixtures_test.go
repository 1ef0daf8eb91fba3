package sealstore

import (
	"bytes"
	"context"
	"crypto/md5"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"sync/atomic"
	"testing"
	"time"

	"github.com/s3seal/s3seal/backend"
	"github.com/s3seal/s3seal/backend/embedded"
	"github.com/s3seal/s3seal/crypto"
)

// The tests' shared set-up: a Store over the embedded backend
// (newFixture, newFixtureWith) or over moto_server (motoFixture, motoS3),
// with the bucket "bkt" created, and the helpers most tests use.

const bucket = "bkt"

// fixture is a Store st over the backend be (counting its HEADs), with the
// keyring kr and the context of the test.
type fixture struct {
	st  *Store
	be  *countingStore
	kr  *crypto.Keyring
	ctx context.Context
}

func newFixture(t testing.TB) *fixture {
	t.Helper()
	// As serve does over plain HTTP: the backend gets a checksum of every
	// body.
	return newFixtureWith(t, Options{BackendChecksum: true})
}

// newFixtureWith is newFixture with the Store's options opt (a spool in a
// fresh directory unless given) and the embedded store's beOpts.
func newFixtureWith(t testing.TB, opt Options, beOpts ...embedded.Option) *fixture {
	t.Helper()
	be, closer, err := embedded.NewStore(t.TempDir(), beOpts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { closer.Close() })
	key, _ := crypto.GenerateKey()
	kr, err := crypto.NewKeyring("k1", map[string][]byte{"k1": key})
	if err != nil {
		t.Fatal(err)
	}
	cs := &countingStore{Store: be}
	if opt.SpoolDir == "" {
		opt.SpoolDir = t.TempDir()
	}
	if opt.OwnerPendingAge == 0 {
		// The fixture's bucket is made on the store, without an owner:
		// a bucket from before owners, not one whose owner is on its way.
		opt.OwnerPendingAge = time.Nanosecond
	}
	st, err := New(Direct(cs), kr, opt)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := be.CreateBucket(ctx, bucket); err != nil {
		t.Fatal(err)
	}
	return &fixture{st: st, be: cs, kr: kr, ctx: ctx}
}

// motoFixture is newFixture over a moto_server started for the test.
func motoFixture(t *testing.T) *fixture {
	be := motoS3(t)
	f := &fixture{be: &countingStore{Store: be}, ctx: t.Context()}
	key, _ := crypto.GenerateKey()
	f.kr, _ = crypto.NewKeyring("k1", map[string][]byte{"k1": key})
	var err error
	if f.st, err = New(Direct(f.be), f.kr, Options{SpoolDir: t.TempDir()}); err != nil {
		t.Fatal(err)
	}
	if err := be.CreateBucket(f.ctx, bucket); err != nil {
		t.Fatal(err)
	}
	return f
}

// startMotoLoopback starts moto_server on a free loopback port.
func startMotoLoopback(t *testing.T) string {
	t.Helper()
	bin, err := exec.LookPath("moto_server")
	if err != nil {
		t.Skip("moto_server not installed")
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	cmd := exec.Command(bin, "-H", "127.0.0.1", "-p", fmt.Sprint(port))
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	ep := fmt.Sprintf("http://127.0.0.1:%d", port)
	for i := 0; i < 300; i++ {
		if resp, err := http.Get(ep + "/"); err == nil {
			resp.Body.Close()
			return ep
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatal("moto_server did not start")
	return ""
}

// countingStore counts HEADs, to see the listing cache work.
type countingStore struct {
	backend.Store
	heads   atomic.Int64
	lastMD  atomic.Value // ContentMD5 of the last PutObject
	lastCRC atomic.Value // ContentCRC32C of the last PutObject
}

func (c *countingStore) PutObject(ctx context.Context, in backend.PutInput) (backend.PutOutput, error) {
	c.lastMD.Store(in.ContentMD5)
	c.lastCRC.Store(in.ContentCRC32C)
	return c.Store.PutObject(ctx, in)
}

func (c *countingStore) HeadObject(ctx context.Context, bucket, key string) (backend.ObjectInfo, error) {
	c.heads.Add(1)
	return c.Store.HeadObject(ctx, bucket, key)
}

func (f *fixture) put(t *testing.T, key string, data []byte) ObjectInfo {
	t.Helper()
	info, err := f.st.Put(f.ctx, PutInput{Bucket: bucket, Key: key, Body: bytes.NewReader(data), Size: int64(len(data)),
		Meta: map[string]string{"color": "blue"}, Headers: backend.Headers{ContentType: "text/x-test"}})
	if err != nil {
		t.Fatalf("put %s: %v", key, err)
	}
	return info
}

func (f *fixture) get(t *testing.T, key string, rng *Range) (ObjectInfo, []byte, error) {
	t.Helper()
	info, rd, err := f.st.Get(f.ctx, bucket, key, rng)
	if err != nil {
		return info, nil, err
	}
	defer rd.Close()
	data, err := io.ReadAll(io.LimitReader(rd, rd.Len))
	return info, data, err
}

func randBytes(n int, seed uint64) []byte {
	r := rand.New(rand.NewPCG(seed, 7))
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return b
}

func md5hex(b []byte) string { return fmt.Sprintf("%x", md5.Sum(b)) }

func mustKey(t *testing.T) []byte {
	k, err := crypto.GenerateKey()
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// motoS3 starts moto_server for the test (skipping the test where it is
// not installed) and returns the backend client on it.
func motoS3(t *testing.T) *backend.S3 {
	t.Helper()
	ep := startMotoLoopback(t)
	be, err := backend.NewS3(backend.S3Config{Endpoint: ep, AccessKey: "a", SecretKey: "b", PathStyle: true, HTTPClient: http.DefaultClient})
	if err != nil {
		t.Fatal(err)
	}
	return be
}

// createLockBucket creates the bucket name with Object Lock enabled, as a
// client does (x-amz-bucket-object-lock-enabled), through be's Forward.
func createLockBucket(ctx context.Context, t *testing.T, be *backend.S3, name string) {
	t.Helper()
	if _, err := be.Forward(ctx, backend.RawRequest{Method: http.MethodPut, Bucket: name, Query: url.Values{},
		Header: http.Header{"X-Amz-Bucket-Object-Lock-Enabled": {"true"}}}); err != nil {
		t.Fatal(err)
	}
}

// rotationKeyring is a keyring of two fresh keys, "k1" the primary and
// "k2", for the rewrap tests that rotate from one to the other.
func rotationKeyring(t *testing.T) *crypto.Keyring {
	kr, _ := crypto.NewKeyring("k1", map[string][]byte{"k1": mustKey(t), "k2": mustKey(t)})
	return kr
}

// enableVersioning turns versioning on in the fixture's bucket.
func (f *fixture) enableVersioning(t *testing.T) {
	t.Helper()
	if err := f.be.PutBucketVersioning(f.ctx, bucket, "Enabled"); err != nil {
		t.Fatal(err)
	}
}
