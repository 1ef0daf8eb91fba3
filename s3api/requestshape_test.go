package s3api

import (
	"io"
	"net/http"
	"strings"
	"testing"
)

// rawAnswer sends an unsigned request and returns the status and body.
func rawAnswer(t *testing.T, method, url string, h map[string]string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(method, url, nil)
	for k, v := range h {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// Requests whose shape alone is wrong get S3's answer before any
// signature check, as S3 gives it (versitygw's Router* and
// Server_large_http_header); unsigned requests otherwise get S3's words
// for an anonymous caller.
func TestShapeAndAnonymousAnswers(t *testing.T) {
	url := newTestServer(t, SingleCredential("ak", "sk"))
	const mna = "<Code>MethodNotAllowed</Code><Message>The specified method is not allowed against this resource.</Message>"
	const copySrc = "<Code>InvalidArgument</Code><Message>You can only specify a copy source header for copy requests.</Message>" +
		"<ArgumentName>x-amz-copy-source</ArgumentName><ArgumentValue>bucket/object</ArgumentValue>"
	cs := map[string]string{"X-Amz-Copy-Source": "bucket/object"}
	for _, tc := range []struct {
		method, path string
		h            map[string]string
		status       int
		want         string
	}{
		{"POST", "/", nil, 405, mna + "<Method>POST</Method><ResourceType>SERVICE</ResourceType>"},
		{"POST", "/bucket/object", nil, 405, mna + "<Method>POST</Method><ResourceType>SERVICE</ResourceType>"},
		{"PUT", "/bucket/object?uploadId=x", nil, 405, mna + "<Method>PUT</Method><ResourceType>UPLOAD</ResourceType>"},
		{"PUT", "/bucket/object?partNumber=1", nil, 400, "<Code>InvalidArgument</Code><Message>This operation does not accept partNumber without uploadId</Message>" +
			"<ArgumentName>partNumber</ArgumentName><ArgumentValue>partNumber</ArgumentValue>"},
		{"GET", "/bucket/object?uploads", nil, 400, "<Code>InvalidRequest</Code><Message>Key is not expected for the GET method ?uploads subresource</Message>"},
		{"GET", "/bucket/object?versions", nil, 400, "<Code>InvalidRequest</Code><Message>There is no such thing as the ?versions sub-resource for a key</Message>"},
		{"GET", "/bucket", cs, 400, copySrc},
		{"DELETE", "/bucket/object", cs, 400, copySrc},
		{"POST", "/bucket/object?uploadId=x", cs, 400, copySrc},
		{"POST", "/bucket?uploadId=x", cs, 400, copySrc},
		{"HEAD", "/bucket/object", cs, 400, ""},
		{"PUT", "/bucket/object", map[string]string{"X-Amz-Custom-Header": strings.Repeat("d", 8192)}, 400,
			"<Code>RequestHeaderSectionTooLarge</Code><Message>Your request header section exceeds the maximum allowed size.</Message><MaxSizeAllowed>8192</MaxSizeAllowed>"},
		// Anonymous callers: S3's words per operation.
		{"GET", "/", nil, 403, "<Code>AccessDenied</Code><Message>Access Denied.</Message>"},
		{"GET", "/bucket/object", nil, 403, "<Code>AccessDenied</Code><Message>Access Denied.</Message>"},
		{"PUT", "/new-bucket", nil, 403, "<Message>Anonymous users cannot invoke this API. Please authenticate.</Message>"},
		{"POST", "/bucket/object?uploads", nil, 403, "<Message>Anonymous users cannot initiate multipart uploads. Please authenticate.</Message>"},
		{"PUT", "/bucket/object", cs, 403, "<Message>Anonymous users cannot copy objects. Please authenticate.</Message>"},
		{"GET", "/bucket?ownershipControls", nil, 403, "<Message>s3:GetBucketOwnershipControls does not support Anonymous requests!</Message>"},
		{"PUT", "/bucket/object", map[string]string{"X-Amz-Content-Sha256": "STREAMING-AWS4-HMAC-SHA256-PAYLOAD"}, 400,
			"<Code>InvalidRequest</Code><Message>Anonymous requests don&#39;t support this x-amz-content-sha256 value. Please use UNSIGNED-PAYLOAD or STREAMING-UNSIGNED-PAYLOAD-TRAILER.</Message>"},
		{"GET", "/bucket/object?response-cache-control=max-age%3D90", nil, 400,
			"<Code>InvalidRequest</Code><Message>Request specific response headers cannot be used for anonymous GET requests.</Message>"},
		{"HEAD", "/bucket/object?response-content-disposition=inline", nil, 400, ""},
		{"GET", "/bucket/object?Response-Cache-Control=x", nil, 403, "<Code>AccessDenied</Code>"},
	} {
		status, body := rawAnswer(t, tc.method, url+tc.path, tc.h)
		if status != tc.status || !strings.Contains(body, tc.want) {
			t.Errorf("%s %s: HTTP %d %s\nwant HTTP %d with %s", tc.method, tc.path, status, body, tc.status, tc.want)
		}
	}
}
