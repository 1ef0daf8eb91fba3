package s3api

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/s3seal/s3seal/backend"
	"github.com/s3seal/s3seal/s3api/s3err"
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

// A store's NoSuch... refusal of a forwarded sub-resource reads as AWS
// words it (versitygw's suite: GetBucketOwnershipControls of a missing
// bucket got the embedded store's "The specified bucket does not exist"
// without the period); other refusals keep the store's words.
func TestStoreRefusalWording(t *testing.T) {
	for _, tc := range []struct {
		be       backend.Error
		code     string
		status   int
		wantWord string
	}{
		{backend.Error{Code: "NoSuchBucket", StatusCode: 404, Message: "The specified bucket does not exist"}, "NoSuchBucket", 404, "The specified bucket does not exist."},
		{backend.Error{Code: "NoSuchVersion", StatusCode: 404, Message: "nope"}, "NoSuchVersion", 404, "The specified version does not exist."},
		{backend.Error{Code: "InvalidTag", StatusCode: 400, Message: "The TagKey you have provided is too long."}, "InvalidTag", 400, "The TagKey you have provided is too long."},
	} {
		be := tc.be
		ae, ok := forwardErr(&be).(*s3err.Error)
		if !ok || string(ae.Code) != tc.code || ae.StatusCode != tc.status || ae.Message != tc.wantWord {
			t.Errorf("forwardErr(%+v) = %+v, want %s %d %q", tc.be, ae, tc.code, tc.status, tc.wantWord)
		}
	}
	be := backend.Error{Code: "NoSuchVersion", StatusCode: 404, Message: "nope"}
	if ae, ok := versionErr(&be).(*s3err.Error); !ok || ae.Message != "The specified version does not exist." {
		t.Errorf("versionErr: %+v", ae)
	}
}
