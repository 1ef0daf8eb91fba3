package s3api

import (
	"io"
	"net/http"
	"strings"
	"testing"
)

// A refusal carries the extra elements S3 puts in its error body (here
// InvalidArgument's ArgumentName and ArgumentValue) after the Message.
func TestErrorBodyExtraElements(t *testing.T) {
	url := newTestServer(t, SingleCredential("ak", "sk"))
	req, _ := http.NewRequest("GET", url+"/bkt/k", nil)
	req.Header.Set("Authorization", "invalid_header")
	r, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Body.Close()
	b, _ := io.ReadAll(r.Body)
	want := "<Message>Authorization header is invalid -- one and only one &#39; &#39; (space) required.</Message>" +
		"<ArgumentName>Authorization</ArgumentName><ArgumentValue>invalid_header</ArgumentValue>"
	if r.StatusCode != 400 || !strings.Contains(string(b), want) {
		t.Fatalf("HTTP %d %s\nwant it to contain %s", r.StatusCode, b, want)
	}
}
