package lfs

import (
	"net/http"
	"strings"
	"testing"

	"github.com/s3seal/s3seal/crypto"
)

// TestProduceContentTypeTooLong: a blob's Content-Type is sealed with it
// and must fit crypto.MaxObjectMeta; one that does not is the client's
// fault (400, nothing stored), not a storage failure (502, counted and
// logged as one). One that fits is kept exactly.
func TestProduceContentTypeTooLong(t *testing.T) {
	e := newEnv(t)
	_, srv := e.replica(nil)
	fits := "text/" + strings.Repeat("x", crypto.MaxObjectMeta-6-len("text/"))
	env := envelopeOf(t, produce(t, srv.URL, "orders", []byte("blob"), map[string]string{"Content-Type": fits}))
	a := doJSON(t, "POST", srv.URL+"/lfs/download", downloadBody(env, "stream"))
	if a.status != 200 || a.header.Get("Content-Type") != fits {
		t.Fatalf("fits: status %d, Content-Type of %d bytes", a.status, len(a.header.Get("Content-Type")))
	}
	a = produce(t, srv.URL, "orders", []byte("blob"), map[string]string{"Content-Type": fits + "x"})
	if a.status != http.StatusBadRequest {
		t.Errorf("one byte past: %d %s, want 400", a.status, a.body)
	}
}
