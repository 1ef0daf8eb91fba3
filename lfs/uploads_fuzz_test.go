package lfs

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// FuzzUploadInitRequest: any POST /lfs/uploads body never panics the
// handler; a refusal is a JSON error with a code and a 4xx status; an
// upload is started only for a valid topic, a Kafka key of standard
// base64 of at most 4 KiB, a partition >= 0 when one is named, a size of
// 1 byte to the blob limit and a known checksum algorithm, and is
// answered with a session id.
func FuzzUploadInitRequest(f *testing.F) {
	h, _ := fuzzHandler(f)
	for _, s := range []string{
		`{"topic":"t","size_bytes":10}`,
		`{"topic":" t.1_-x ","key":"a2V5","partition":3,"content_type":"text/plain","size_bytes":5368709120,"checksum_alg":"MD5","checksum":"0123456789abcdef0123456789ABCDEF"}`,
		`{"topic":"t","size_bytes":5368709121}`, `{"topic":"t","size_bytes":0}`, `{"topic":"t","size_bytes":-1}`,
		`{"topic":"t","size_bytes":1,"partition":-1}`, `{"topic":"t","size_bytes":1,"partition":2147483648}`,
		`{"topic":"..","size_bytes":1}`, `{"topic":"a/b","size_bytes":1}`, `{"topic":"","size_bytes":1}`,
		`{"topic":"t","size_bytes":1,"key":"not base64!"}`, `{"topic":"t","size_bytes":1,"key":"` + strings.Repeat("A", 5464) + `"}`,
		`{"topic":"t","size_bytes":1,"checksum_alg":"none","checksum":"00"}`, `{"topic":"t","size_bytes":1,"checksum_alg":"sha1"}`,
		`{"topic":"t","size_bytes":1,"checksum_alg":"crc32","checksum":"zzzzzzzz"}`,
		`{"topic":"t","size_bytes":1.5}`, `{"topic":"t","size_bytes":"1"}`, `null`, ``, `{`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		status, code, out := serveJSON(t, h, http.MethodPost, "/lfs/uploads", body)
		if status != http.StatusOK {
			if status >= 500 {
				t.Fatalf("%.80q: %d %s", body, status, code)
			}
			return
		}
		var in uploadInitRequest
		if err := json.NewDecoder(bytes.NewReader(body)).Decode(&in); err != nil {
			t.Fatalf("%.80q: accepted a body that is no JSON: %v", body, err)
		}
		topic := strings.TrimSpace(in.Topic)
		if checkTopic(topic, "topic") != nil {
			t.Fatalf("%.80q: accepted topic %q", body, topic)
		}
		if k := strings.TrimSpace(in.Key); k != "" {
			b, err := base64.StdEncoding.DecodeString(k)
			if err != nil || len(b) > maxKafkaKey {
				t.Fatalf("%.80q: accepted Kafka key %.40q", body, k)
			}
		}
		if in.Partition != nil && *in.Partition < 0 || in.SizeBytes <= 0 || in.SizeBytes > DefaultMaxBlobSize {
			t.Fatalf("%.80q: accepted", body)
		}
		if _, e := parseChecksum(in.ChecksumAlg, in.Checksum); e != nil {
			t.Fatalf("%.80q: accepted checksum %q %q", body, in.ChecksumAlg, in.Checksum)
		}
		var ans uploadInitResponse
		if err := json.Unmarshal(out, &ans); err != nil || ans.UploadID == "" || !strings.HasPrefix(ans.S3Key, "default/"+topic+"/lfs/") {
			t.Fatalf("%.80q: answered %.200q", body, out)
		}
	})
}

// FuzzUploadCompleteRequest: any POST /lfs/uploads/{id}/complete body, for
// a live session none of whose parts was uploaded, never panics the
// handler and is refused with a JSON error with a code and a 4xx status
// (a body naming no parts, a part twice, or parts that are not there).
func FuzzUploadCompleteRequest(f *testing.F) {
	h, _ := fuzzHandler(f)
	r := httptest.NewRequest(http.MethodPost, "/lfs/uploads", strings.NewReader(`{"topic":"t","size_bytes":10,"checksum_alg":"none"}`))
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	var ans uploadInitResponse
	if w.Code != http.StatusOK || json.Unmarshal(w.Body.Bytes(), &ans) != nil {
		f.Fatalf("starting the upload: %d %s", w.Code, w.Body.Bytes())
	}
	path := "/lfs/uploads/" + ans.UploadID + "/complete"
	for _, s := range []string{
		`{"parts":[{"part_number":1,"etag":"\"abc\""}]}`, `{"parts":[{"part_number":1,"etag":"x"},{"part_number":1,"etag":"x"}]}`,
		`{"parts":[{"part_number":2},{"part_number":1}]}`, `{"parts":[{"part_number":0}]}`, `{"parts":[{"part_number":-1}]}`,
		`{"parts":[{"part_number":10001}]}`, `{"parts":[{"part_number":9223372036854775807}]}`, `{"parts":[]}`, `{"parts":null}`,
		`{}`, `null`, ``, `{"parts":[{"part_number":"1"}]}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		status, code, _ := serveJSON(t, h, http.MethodPost, path, body)
		if status == http.StatusOK || status >= 500 {
			t.Fatalf("%.80q: %d %s", body, status, code)
		}
	})
}
