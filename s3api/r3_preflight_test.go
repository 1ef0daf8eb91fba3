package s3api

import (
	"context"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/s3seal/s3seal/backend"
)

// deniedForwarder: a store that refuses GET ?cors with AWS's wording,
// which names the store's account and the identity s3seal uses.
type deniedForwarder struct{ gets int }

const storeSecretWords = "User: arn:aws:iam::123456789012:user/s3seal-backend is not authorized to perform: s3:GetBucketCORS"

func (f *deniedForwarder) Forward(_ context.Context, in backend.RawRequest) (*backend.RawResponse, error) {
	f.gets++
	return nil, &backend.Error{Code: "AccessDenied", StatusCode: 403, Message: storeSecretWords}
}

// R3 check (HOLDS, passes): the unsigned CORS preflight does not hand the
// store's AccessDenied words (its account, s3seal's backend identity) to
// an anonymous client. Logged: a store refusal is not cached, so each
// anonymous OPTIONS is one backend GET ?cors (preflight takes no slot).
func TestR3PreflightLeaksStoreErrorToAnonymous(t *testing.T) {
	fw := &deniedForwarder{}
	_, url := adminClient(t, fw)
	for range 5 {
		req, _ := http.NewRequest(http.MethodOptions, url+"/bkt/obj", nil)
		req.Header.Set("Origin", "http://evil.example")
		req.Header.Set("Access-Control-Request-Method", "GET")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		t.Logf("status %d body %s", resp.StatusCode, body)
		if strings.Contains(string(body), "123456789012") || strings.Contains(string(body), "s3seal-backend") {
			t.Errorf("anonymous preflight got the store's words (status %d): %s", resp.StatusCode, body)
			break
		}
	}
	t.Logf("backend GET ?cors requests for 5 anonymous preflights: %d", fw.gets)
}

// R3 FINDING (low; fixed; this test now guards it): anonymous CORS preflights are
// served with a store round trip each: distinct bucket names (or any
// name whose lookup the store fails) are never answered from the cache,
// and preflight takes no request slot (routes.go routes OPTIONS to
// s.preflight, outside serve/acquire). 200 unsigned OPTIONS, 200 backend
// GET ?cors.
func TestR3PreflightAnonymousAmplification(t *testing.T) {
	fw := &docForwarder{}
	_, url := adminClient(t, fw)
	for i := range 200 {
		req, _ := http.NewRequest(http.MethodOptions, url+"/b"+strconv.Itoa(i)+"/o", nil)
		req.Header.Set("Origin", "http://evil.example")
		req.Header.Set("Access-Control-Request-Method", "GET")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	fw.mu.Lock()
	defer fw.mu.Unlock()
	if fw.gets >= 200 {
		t.Errorf("200 anonymous preflights made %d backend requests", fw.gets)
	}
}
