package lfs

import (
	"testing"
	"time"
)

// TestSessionIDsAndDownloadKeys: forged, altered, truncated, expired and
// foreign-keyring session ids are refused; so are download keys escaping
// the namespace or naming another bucket.
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
