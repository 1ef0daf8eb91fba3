package s3api

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/s3seal/s3seal/backend"
	"github.com/s3seal/s3seal/backend/embedded"
	"github.com/s3seal/s3seal/crypto"
	"github.com/s3seal/s3seal/sealstore"
)

// The set-up the tests share: an embedded object store, a keyring, the
// S3 front over them, an SDK client, and a server with bucket "bkt".
// Every test that needs the embedded store gets it from embeddedStore.

// embeddedStore is a fresh embedded object store, closed when the test
// ends.
func embeddedStore(tb testing.TB) backend.Store {
	tb.Helper()
	be, closer, err := embedded.NewStore(tb.TempDir())
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { closer.Close() })
	return be
}

// testKeyring is a keyring of one fresh key, "k1".
func testKeyring() *crypto.Keyring {
	key, _ := crypto.GenerateKey()
	kr, _ := crypto.NewKeyring("k1", map[string][]byte{"k1": key})
	return kr
}

// newTestServer runs the S3 front in-process over the embedded store.
func newTestServer(t *testing.T, creds Credentials) string {
	return newTestServerWith(t, Config{Credentials: creds}).URL
}

// newTestServerWith is newTestServer with more of the Config set; Store is
// filled in.
func newTestServerWith(t *testing.T, cfg Config) *httptest.Server {
	return newTestServerOver(t, cfg, nil)
}

// newTestServerOver is newTestServerWith over the embedded store wrapped
// by wrap (when not nil), e.g. to make it slow or flaky.
func newTestServerOver(t *testing.T, cfg Config, wrap func(backend.Store) backend.Store) *httptest.Server {
	return newTestServerOverFw(t, cfg, nil, wrap)
}

// newTestServerFw is newTestServerWith over a store that keeps its
// settings (sealstore.Options.Settings) through fw.
func newTestServerFw(t *testing.T, cfg Config, fw backend.Forwarder) *httptest.Server {
	return newTestServerOverFw(t, cfg, fw, nil)
}

// newTestServerOverFw is newTestServerOver with the settings sent to fw.
func newTestServerOverFw(t *testing.T, cfg Config, fw backend.Forwarder, wrap func(backend.Store) backend.Store) *httptest.Server {
	t.Helper()
	be := embeddedStore(t)
	if wrap != nil {
		be = wrap(be)
	}
	var err error
	cfg.Store, err = sealstore.New(sealstore.Direct(be), testKeyring(), sealstore.Options{SpoolDir: t.TempDir(), Settings: fw,
		// Buckets tests make on the store are from before owners, not
		// ones whose owner is on its way (TestNewBucketIsNobodyElses...).
		OwnerPendingAge: time.Nanosecond})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(New(cfg))
	t.Cleanup(srv.Close)
	return srv
}

func sdkClient(endpoint, ak, sk string) *s3.Client {
	return s3.New(s3.Options{
		BaseEndpoint: aws.String(endpoint),
		Region:       "us-east-1",
		Credentials:  credentials.NewStaticCredentialsProvider(ak, sk, ""),
		UsePathStyle: true,
		HTTPClient:   http.DefaultClient,
	})
}

// newBucketServer is the opening of most tests: a server over the
// embedded store for creds, a client signing as "ak" (secret "sk"), and
// an empty bucket "bkt". It returns the server's URL too.
func newBucketServer(t *testing.T, creds Credentials) (string, context.Context, *s3.Client) {
	t.Helper()
	url := newTestServer(t, creds)
	ctx := context.Background()
	c := sdkClient(url, "ak", "sk")
	if _, err := c.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String("bkt")}); err != nil {
		t.Fatal(err)
	}
	return url, ctx, c
}
