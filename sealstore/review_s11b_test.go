package sealstore

// Review s11b (SSE-C), hostile store. These attacks HELD UP (the test
// passes): whatever the store does to an SSE-C object's metadata or
// bodies, s3seal never serves bytes without the right customer key and
// never serves wrong bytes.

import (
	"bytes"
	"io"
	"strings"
	"testing"

	"github.com/s3seal/s3seal/backend"
	"github.com/s3seal/s3seal/crypto"
)

func TestReviewS11bHostileStoreOnSSEC(t *testing.T) {
	f := newFixture(t)
	ckA, ckB := customerKeyOf(t, 0xA), customerKeyOf(t, 0xB)
	data := randBytes(2*65536+7, 91)
	other := randBytes(2*65536+7, 92)
	put := func(key string, d []byte, ck *crypto.CustomerKey) {
		t.Helper()
		if _, err := f.st.Put(f.ctx, PutInput{Bucket: bucket, Key: key, Body: bytes.NewReader(d), Size: int64(len(d)), CustomerKey: ck}); err != nil {
			t.Fatal(err)
		}
	}
	raw := func(key string) ([]byte, map[string]string) {
		t.Helper()
		obj, err := f.be.GetObject(f.ctx, backend.GetInput{Bucket: bucket, Key: key})
		if err != nil {
			t.Fatal(err)
		}
		defer obj.Body.Close()
		b, _ := io.ReadAll(obj.Body)
		m := map[string]string{}
		for k, v := range obj.Info.Meta {
			m[k] = v
		}
		return b, m
	}
	store := func(key string, body []byte, meta map[string]string) {
		t.Helper()
		if _, err := f.be.PutObject(f.ctx, backend.PutInput{Bucket: bucket, Key: key, Body: bytes.NewReader(body), Size: int64(len(body)), Meta: meta}); err != nil {
			t.Fatal(err)
		}
	}
	// never: no read of key with any of the keys serves anything but want
	// (want nil: nothing at all).
	never := func(what, key string, want []byte) {
		t.Helper()
		for _, ck := range []*crypto.CustomerKey{nil, ckA, ckB} {
			for _, rng := range []*Range{nil, {First: 0, Last: 9}, {First: 65530, Last: 65600}} {
				got, err := f.read(t, f.st, ReadInput{Key: key, CustomerKey: ck, Range: rng})
				if err == nil && (want == nil || !bytes.Equal(got, want) && (rng == nil || !bytes.Equal(got, want[rng.First:rng.Last+1]))) {
					t.Errorf("%s: read with key %v range %v served %d bytes", what, ck != nil, rng, len(got))
				}
			}
		}
	}

	put("a", data, ckA)
	put("b", other, ckB)
	put("p", other, nil)
	aBody, aMeta := raw("a")
	bBody, bMeta := raw("b")
	pBody, pMeta := raw("p")

	// Downgrade: strip the check value.
	m := map[string]string{}
	for k, v := range aMeta {
		if k != crypto.MetaSSEC {
			m[k] = v
		}
	}
	store("a", aBody, m)
	never("stripped check", "a", nil)
	// Another object's check value, and a mixed-case duplicate of it.
	m[crypto.MetaSSEC] = bMeta[crypto.MetaSSEC]
	store("a", aBody, m)
	never("swapped check", "a", nil)
	m[crypto.MetaSSEC] = aMeta[crypto.MetaSSEC]
	m[strings.ToUpper(crypto.MetaSSEC)] = bMeta[crypto.MetaSSEC]
	store("a", aBody, m)
	never("duplicate check", "a", data)
	// Another object's body under a's envelope; b's whole object under a's name.
	store("a", bBody, aMeta)
	never("swapped body", "a", nil)
	store("a", bBody, bMeta)
	never("moved object", "a", nil)
	// A's body under the plain object's envelope, and the reverse.
	store("a", aBody, pMeta)
	never("plain envelope", "a", nil)
	store("p", pBody, aMeta)
	never("ssec envelope on plain body", "p", nil)
	// Truncated body.
	store("a", aBody[:len(aBody)-20], aMeta)
	never("cut body", "a", nil)
	// Restored: reads again with A only.
	store("a", aBody, aMeta)
	if got, err := f.read(t, f.st, ReadInput{Key: "a", CustomerKey: ckA}); err != nil || !bytes.Equal(got, data) {
		t.Fatalf("restored: %v", err)
	}
}
