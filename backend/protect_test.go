package backend

import (
	"bytes"
	"context"
	"crypto/md5"
	"encoding/base64"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"
)

// A small PUT body without Content-MD5 gets one (stores want it in Object
// Lock buckets, default retention included); a large one is left alone.
func TestPutSendsMD5OfSmallBodies(t *testing.T) {
	var md5s []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		md5s = append(md5s, r.Header.Get("Content-Md5"))
		w.Header().Set("ETag", `"e"`)
	}))
	defer srv.Close()
	st, err := NewS3(S3Config{Endpoint: srv.URL, AccessKey: "a", SecretKey: "s", PathStyle: true, MaxAttempts: 1})
	must(t, err)
	ctx := context.Background()
	_, err = st.PutObject(ctx, PutInput{Bucket: "bkt", Key: "empty", Body: bytes.NewReader(nil)})
	must(t, err)
	_, err = st.PutObject(ctx, PutInput{Bucket: "bkt", Key: "big", Body: bytes.NewReader(make([]byte, smallBodyMD5+1)), Size: smallBodyMD5 + 1})
	must(t, err)
	if len(md5s) != 2 || md5s[0] != "1B2M2Y8AsgTpgAmY7PhCfg==" || md5s[1] != "" {
		t.Fatalf("Content-MD5 sent = %q, want the empty body's MD5, then none", md5s)
	}
}

// A store that demands Content-MD5 (AWS, for PUTs and parts in a bucket
// with Object Lock, default retention included) gets it on a second
// attempt, for bodies the caller sent without one.
func TestMD5AddedWhenTheStoreDemandsIt(t *testing.T) {
	var seen []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		md := r.Header.Get("Content-Md5")
		seen = append(seen, md)
		if md == "" {
			w.WriteHeader(http.StatusBadRequest)
			io.WriteString(w, `<Error><Code>InvalidRequest</Code><Message>Content-MD5 OR x-amz-checksum- HTTP header is required for Put Object requests with Object Lock parameters</Message></Error>`)
			return
		}
		w.Header().Set("ETag", `"e"`)
	}))
	defer srv.Close()
	st, err := NewS3(S3Config{Endpoint: srv.URL, AccessKey: "a", SecretKey: "s", PathStyle: true, MaxAttempts: 1})
	must(t, err)
	ctx := context.Background()
	big := make([]byte, smallBodyMD5+1)
	_, err = st.PutObject(ctx, PutInput{Bucket: "b", Key: "k", Body: bytes.NewReader(big), Size: int64(len(big))})
	must(t, err)
	_, err = st.UploadPart(ctx, UploadPartInput{Bucket: "b", Key: "k", UploadID: "u", PartNumber: 1, Body: bytes.NewReader(big), Size: int64(len(big))})
	must(t, err)
	sum := md5.Sum(big)
	want := base64.StdEncoding.EncodeToString(sum[:])
	if len(seen) != 4 || seen[0] != "" || seen[1] != want || seen[2] != "" || seen[3] != want {
		t.Fatalf("Content-MD5 per attempt = %q, want none then %s, twice", seen, want)
	}
}

// Copies and CompleteMultipartUpload, whose bodies the SDK builds, get
// the MD5 of that body on a second attempt when a store demands one (moto
// does for CopyObject into a bucket with a default retention; AWS may for
// any write into a locked bucket).
func TestCopiesGetMD5WhenTheStoreDemandsIt(t *testing.T) {
	type attempt struct{ op, sent, body string }
	var seen []attempt
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		sum := md5.Sum(body)
		a := attempt{r.URL.Query().Get("x-id"), r.Header.Get("Content-Md5"), base64.StdEncoding.EncodeToString(sum[:])}
		seen = append(seen, a)
		if a.sent == "" {
			w.WriteHeader(http.StatusBadRequest)
			io.WriteString(w, `<Error><Code>MissingUploadObjectWithObjectLockHeaders</Code><Message>Content-MD5 or x-amz-sdk-checksum-algorithm header required to upload an object with a retention period configured using Object Lock</Message></Error>`)
			return
		}
		switch a.op {
		case "CopyObject":
			io.WriteString(w, `<CopyObjectResult><ETag>"c"</ETag></CopyObjectResult>`)
		case "UploadPartCopy":
			io.WriteString(w, `<CopyPartResult><ETag>"p"</ETag></CopyPartResult>`)
		default:
			io.WriteString(w, `<CompleteMultipartUploadResult><ETag>"m-1"</ETag></CompleteMultipartUploadResult>`)
		}
	}))
	defer srv.Close()
	st, err := NewS3(S3Config{Endpoint: srv.URL, AccessKey: "a", SecretKey: "s", PathStyle: true, MaxAttempts: 1})
	must(t, err)
	ctx := context.Background()
	if out, err := st.CopyObject(ctx, CopyInput{SrcBucket: "b", SrcKey: "s", Bucket: "b", Key: "k"}); err != nil || out.ETag != "c" {
		t.Fatalf("CopyObject: %+v %v", out, err)
	}
	if etag, err := st.UploadPartCopy(ctx, UploadPartCopyInput{SrcBucket: "b", SrcKey: "s", Bucket: "b", Key: "k", UploadID: "u",
		PartNumber: 1, First: 0, Last: 9}); err != nil || etag != "p" {
		t.Fatalf("UploadPartCopy: %q %v", etag, err)
	}
	if out, err := st.CompleteMultipartUpload(ctx, CompleteMultipartInput{Bucket: "b", Key: "k", UploadID: "u",
		Parts: []CompletedPart{{PartNumber: 1, ETag: "p"}}}); err != nil || out.ETag != "m-1" {
		t.Fatalf("CompleteMultipartUpload: %+v %v", out, err)
	}
	if len(seen) != 6 {
		t.Fatalf("attempts %+v, want two per call", seen)
	}
	for i := 0; i < 6; i += 2 {
		if seen[i].sent != "" || seen[i+1].sent != seen[i+1].body || seen[i].op != seen[i+1].op {
			t.Errorf("%s: attempts %+v then %+v, want none then the MD5 of the body sent", seen[i].op, seen[i], seen[i+1])
		}
	}
}

// Forward addresses keys as the SDK does: every byte but the unreserved
// ones and "/" percent-encoded.
func TestForwardEncodesKeysAndQuery(t *testing.T) {
	var paths, queries []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		paths, queries = append(paths, r.URL.EscapedPath()), append(queries, r.URL.RawQuery)
		io.WriteString(w, "<Tagging/>")
	}))
	defer srv.Close()
	st, err := NewS3(S3Config{Endpoint: srv.URL, AccessKey: "a", SecretKey: "s", PathStyle: true})
	must(t, err)
	_, err = st.Forward(context.Background(), RawRequest{Method: http.MethodGet, Bucket: "bkt", Key: "a b+c/é=?",
		Query: url.Values{"tagging": {""}, "versionId": {"v 1+"}}})
	must(t, err)
	if paths[0] != "/bkt/a%20b%2Bc/%C3%A9%3D%3F" || queries[0] != "tagging=&versionId=v%201%2B" {
		t.Fatalf("sent %s?%s", paths[0], queries[0])
	}
}

// oneAnswer hands version-less answers to entries only when each entry
// gets one and all are alike: never one entry another's answer.
func TestOneAnswer(t *testing.T) {
	denied := DeleteResult{Key: "k", Code: "AccessDenied"}
	for _, c := range []struct {
		name  string
		loose []DeleteResult
		n     int
		ok    bool
	}{
		{"one for one", []DeleteResult{denied}, 1, true},
		{"alike", []DeleteResult{denied, denied}, 2, true},
		{"fewer than entries", []DeleteResult{denied}, 2, false},
		{"more than entries", []DeleteResult{denied, denied}, 1, false},
		{"none", nil, 1, false},
		{"different codes", []DeleteResult{denied, {Key: "k", Code: "InternalError"}}, 2, false},
		{"a refusal and a deletion", []DeleteResult{denied, {Key: "k"}}, 2, false},
	} {
		r, ok := oneAnswer(c.loose, c.n)
		if ok != c.ok || (ok && r.Code != "AccessDenied") {
			t.Errorf("%s: %+v, %v; want ok %v", c.name, r, ok, c.ok)
		}
	}
}
