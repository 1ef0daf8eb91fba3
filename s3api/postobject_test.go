package s3api

import (
	"bytes"
	"context"
	"crypto/md5"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"io"
	"mime/multipart"
	"net"
	"net/http"
	"net/textproto"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
)

const (
	postAK, postSK = "poster", "poster-secret"
	postBucket     = "forms"
)

// postPolicyDoc is a POST policy as a browser-upload issuer writes it:
// the given conditions plus the three SigV4 fields, expiring at exp.
type postSigner struct {
	ak, sk string
	now    time.Time
}

func (p postSigner) date() string { return p.now.UTC().Format("20060102T150405Z") }
func (p postSigner) cred() string {
	return p.ak + "/" + p.date()[:8] + "/us-east-1/s3/aws4_request"
}

// policy returns the base64 policy over conds (plus the SigV4 fields) and
// its signature, computed here independently of package sigv4.
func (p postSigner) policy(t *testing.T, exp time.Time, conds ...any) (string, string) {
	t.Helper()
	all := append([]any{}, conds...)
	all = append(all, map[string]string{"x-amz-algorithm": "AWS4-HMAC-SHA256"},
		map[string]string{"x-amz-credential": p.cred()}, map[string]string{"x-amz-date": p.date()})
	doc, err := json.Marshal(map[string]any{"expiration": exp.UTC().Format("2006-01-02T15:04:05.000Z"), "conditions": all})
	if err != nil {
		t.Fatal(err)
	}
	b64 := base64.StdEncoding.EncodeToString(doc)
	return b64, p.sign(b64)
}

func (p postSigner) sign(b64 string) string {
	k := hmacOf([]byte("AWS4"+p.sk), p.date()[:8])
	k = hmacOf(k, "us-east-1")
	k = hmacOf(k, "s3")
	k = hmacOf(k, "aws4_request")
	return hex.EncodeToString(hmacOf(k, b64))
}

// fields are the authentication fields for a signed policy.
func (p postSigner) fields(b64, sig string) [][2]string {
	return [][2]string{{"X-Amz-Algorithm", "AWS4-HMAC-SHA256"}, {"X-Amz-Credential", p.cred()},
		{"X-Amz-Date", p.date()}, {"Policy", b64}, {"X-Amz-Signature", sig}}
}

// formBody encodes fields, then the file part (filename "" = no filename
// parameter), then the after fields.
func formBody(t *testing.T, fields [][2]string, filename string, file []byte, after ...[2]string) (string, []byte) {
	t.Helper()
	var b bytes.Buffer
	mw := multipart.NewWriter(&b)
	for _, f := range fields {
		if err := mw.WriteField(f[0], f[1]); err != nil {
			t.Fatal(err)
		}
	}
	if file != nil {
		h := textproto.MIMEHeader{}
		cd := `form-data; name="file"`
		if filename != "" {
			cd += fmt.Sprintf(`; filename="%s"`, filename)
		}
		h.Set("Content-Disposition", cd)
		h.Set("Content-Type", "application/octet-stream")
		w, err := mw.CreatePart(h)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = w.Write(file)
	}
	for _, f := range after {
		_ = mw.WriteField(f[0], f[1])
	}
	_ = mw.Close()
	return mw.FormDataContentType(), b.Bytes()
}

type postResult struct {
	status int
	header http.Header
	body   string
}

func sendPost(t *testing.T, endpoint, ctype string, body []byte) postResult {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, endpoint+"/"+postBucket, bytes.NewReader(body))
	req.Header.Set("Content-Type", ctype)
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return postResult{resp.StatusCode, resp.Header, string(b)}
}

func newPostServer(t *testing.T) (string, *s3.Client) {
	t.Helper()
	creds := Credentials{
		postAK:   {AccessKey: postAK, SecretKey: postSK, Read: []string{"*"}, Write: []string{"*"}},
		"reader": {AccessKey: "reader", SecretKey: "reader-secret", Read: []string{"*"}},
	}
	url := newTestServer(t, creds)
	c := sdkClient(url, postAK, postSK)
	if _, err := c.CreateBucket(context.Background(), &s3.CreateBucketInput{Bucket: aws.String(postBucket)}); err != nil {
		t.Fatal(err)
	}
	return url, c
}

func TestPostObjectStoresSealedObject(t *testing.T) {
	url, c := newPostServer(t)
	p := postSigner{ak: postAK, sk: postSK, now: time.Now()}
	b64, sig := p.policy(t, time.Now().Add(time.Hour),
		map[string]string{"bucket": postBucket}, []any{"starts-with", "$key", "up/"},
		[]any{"content-length-range", 1, 100}, []any{"starts-with", "$Content-Type", "text/"},
		[]any{"starts-with", "$x-amz-meta-note", "ba"}, []any{"eq", "$success_action_status", "201"})
	fields := append(p.fields(b64, sig), [2]string{"key", "up/${filename}"}, [2]string{"Content-Type", "text/plain,text/csv"},
		[2]string{"X-Amz-Meta-Note", "bar"}, [2]string{"success_action_status", "201"}, [2]string{"x-ignore-submit", "Upload"})
	data := []byte("hello, form")
	ct, body := formBody(t, fields, `C:\Users\me\hello.txt`, data, [2]string{"x-amz-meta-after", "ignored"})
	res := sendPost(t, url, ct, body)
	sum := md5.Sum(data)
	etag := `"` + hex.EncodeToString(sum[:]) + `"`
	if res.status != 201 || !strings.Contains(res.body, "<Key>up/hello.txt</Key>") || !strings.Contains(res.body, "<Bucket>forms</Bucket>") ||
		!strings.Contains(res.body, "<ETag>&#34;"+etag[1:len(etag)-1]+"&#34;</ETag>") || res.header.Get("ETag") != etag {
		t.Fatalf("got %d %v %s", res.status, res.header, res.body)
	}
	if loc := res.header.Get("Location"); loc != url+"/forms/up%2Fhello.txt" {
		t.Fatalf("Location %q", loc)
	}
	if res.header.Get("X-Amz-Checksum-Crc64nvme") == "" || res.header.Get("X-Amz-Checksum-Type") != "FULL_OBJECT" {
		t.Fatalf("no default checksum reported: %v", res.header)
	}
	out, err := c.GetObject(context.Background(), &s3.GetObjectInput{Bucket: aws.String(postBucket), Key: aws.String("up/hello.txt")})
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(out.Body)
	if string(got) != string(data) || aws.ToString(out.ContentType) != "text/plain,text/csv" || out.Metadata["note"] != "bar" || len(out.Metadata) != 1 {
		t.Fatalf("object %q %q %v", got, aws.ToString(out.ContentType), out.Metadata)
	}
}

func TestPostObjectAnswers(t *testing.T) {
	url, _ := newPostServer(t)
	p := postSigner{ak: postAK, sk: postSK, now: time.Now()}
	for _, tc := range []struct {
		name   string
		extra  [2]string
		status int
		check  func(postResult) bool
	}{
		{"default", [2]string{"success_action_status", "404"}, 204, func(r postResult) bool { return r.body == "" }},
		{"200", [2]string{"success_action_status", "200"}, 200, func(r postResult) bool { return r.body == "" }},
		{"redirect", [2]string{"success_action_redirect", "https://example.test/done?x=1"}, 303, func(r postResult) bool {
			return r.header.Get("Location") == `https://example.test/done?x=1&bucket=forms&key=a%2Fb+c&etag=%22900150983cd24fb0d6963f7d28e17f72%22`
		}},
		{"old redirect", [2]string{"redirect", "http://example.test/ok"}, 303, func(r postResult) bool {
			return strings.HasPrefix(r.header.Get("Location"), "http://example.test/ok?bucket=forms&key=a%2Fb+c&etag=")
		}},
		{"relative redirect", [2]string{"success_action_redirect", "/relative"}, 204, func(r postResult) bool { return true }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b64, sig := p.policy(t, time.Now().Add(time.Hour), map[string]string{"bucket": postBucket},
				map[string]string{"key": "a/b c"}, []any{"starts-with", "$" + tc.extra[0], ""})
			ct, body := formBody(t, append(p.fields(b64, sig), [2]string{"key", "a/b c"}, tc.extra), "f", []byte("abc"))
			res := sendPost(t, url, ct, body)
			if res.status != tc.status || !tc.check(res) {
				t.Fatalf("got %d %v %q", res.status, res.header, res.body)
			}
		})
	}
}

// TestPostObjectRefusals covers each way a form is refused, with S3's
// code and message; none of them stores anything.
func TestPostObjectRefusals(t *testing.T) {
	url, c := newPostServer(t)
	now := time.Now()
	p := postSigner{ak: postAK, sk: postSK, now: now}
	hour := now.Add(time.Hour)
	base := []any{map[string]string{"bucket": postBucket}, []any{"starts-with", "$key", "up/"}}
	with := func(more ...any) []any { return append(append([]any{}, base...), more...) }
	signed := func(exp time.Time, conds []any, fields ...[2]string) [][2]string {
		b64, sig := p.policy(t, exp, conds...)
		return append(p.fields(b64, sig), fields...)
	}
	key := [2]string{"key", "up/x"}
	rawPolicy := func(doc string) [][2]string {
		b64 := base64.StdEncoding.EncodeToString([]byte(doc))
		return append(p.fields(b64, p.sign(b64)), key)
	}
	tampered := signed(hour, base, key)
	b64, _ := p.policy(t, hour, with([]any{"starts-with", "$key", ""})...)
	tampered[3][1] = b64 // a policy the signature does not cover
	file := []byte("abcdef")

	for _, tc := range []struct {
		name   string
		fields [][2]string
		file   []byte
		status int
		code   string
		msg    string
	}{
		{"expired", signed(now.Add(-time.Second), base, key), file, 403, "AccessDenied", "Invalid according to Policy: Policy expired."},
		{"key prefix", signed(hour, base, [2]string{"key", "down/x"}), file, 403, "AccessDenied",
			`Invalid according to Policy: Policy Condition failed: ["starts-with","$key","up/"]`},
		{"wrong bucket", signed(hour, []any{map[string]string{"bucket": "other"}, map[string]string{"key": "up/x"}}, key), file, 403, "AccessDenied",
			`Invalid according to Policy: Policy Condition failed: ["eq", "$bucket", "other"]`},
		{"eq meta", signed(hour, with([]any{"eq", "$x-amz-meta-foo", ""}), key, [2]string{"x-amz-meta-foo", "barclamp"}), file, 403, "AccessDenied",
			`Policy Condition failed: ["eq","$x-amz-meta-foo",""]`},
		{"absent field", signed(hour, with([]any{"starts-with", "$x-amz-meta-foo", "bar"}), key), file, 403, "AccessDenied",
			`Policy Condition failed: ["starts-with","$x-amz-meta-foo","bar"]`},
		{"content-type list", signed(hour, with([]any{"starts-with", "$Content-Type", "image/"}), key, [2]string{"Content-Type", "image/png,text/plain"}), file, 403, "AccessDenied",
			`Policy Condition failed: ["starts-with","$Content-Type","image/"]`},
		{"no dollar", signed(hour, with([]any{"eq", "key", "up/x"}), key), file, 403, "AccessDenied", `Policy Condition failed: ["eq","key","up/x"]`},
		{"extra field", signed(hour, base, key, [2]string{"X-Amz-Meta-Extra", "1"}), file, 403, "AccessDenied",
			"Invalid according to Policy: Extra input fields: X-Amz-Meta-Extra"},
		{"no bucket condition", signed(hour, []any{[]any{"starts-with", "$key", ""}}, key), file, 403, "AccessDenied",
			"Invalid according to Policy: Extra input fields: bucket"},
		{"too large", signed(hour, with([]any{"content-length-range", 0, 5}), key), file, 400, "EntityTooLarge",
			"Your proposed upload exceeds the maximum allowed object size."},
		{"too small", signed(hour, with([]any{"content-length-range", "7", "10"}), key), file, 400, "EntityTooSmall",
			"Your proposed upload is smaller than the minimum allowed size"},
		{"range not numbers", signed(hour, with([]any{"content-length-range", "test", "10"}), key), file, 400, "InvalidPolicyDocument",
			"Invalid Policy: Invalid JSON."},
		{"range negative", signed(hour, with([]any{"content-length-range", -1, 0}), key), file, 400, "InvalidPolicyDocument", "Invalid Policy: Invalid content-length-range"},
		{"tampered policy", tampered, file, 403, "SignatureDoesNotMatch", "The request signature we calculated does not match"},
		{"unknown access key", append(postSigner{ak: "nobody", sk: postSK, now: now}.fields(p.policy(t, hour, base...)), key), file, 403, "InvalidAccessKeyId", ""},
		{"read-only credential", append(postSigner{ak: "reader", sk: "reader-secret", now: now}.fields(postSigner{ak: "reader", sk: "reader-secret", now: now}.policy(t, hour, base...)), key),
			file, 403, "AccessDenied", "Access Denied"},
		{"missing signature", append(signed(hour, base)[:4], key), file, 400, "InvalidArgument",
			"Bucket POST must contain a field named 'x-amz-signature'.  If it is specified, please check the order of the fields."},
		{"missing key", signed(hour, base), file, 400, "InvalidArgument", "Bucket POST must contain a field named 'key'."},
		{"no file", signed(hour, base, key), nil, 400, "InvalidArgument", "POST requires exactly one file upload per request."},
		{"signature v2, wrong", [][2]string{{"AWSAccessKeyId", postAK}, {"policy", "e30="}, {"signature", "x"}, key}, file, 403, "SignatureDoesNotMatch", ""},
		{"anonymous", [][2]string{key}, file, 403, "AccessDenied", "Access Denied."},
		{"bad base64", append(p.fields("%%%", p.sign("%%%")), key), file, 400, "InvalidPolicyDocument", "Invalid Policy: invalid Base64 encoding."},
		{"bad json", rawPolicy(`{"expiration": `), file, 400, "InvalidPolicyDocument", "Invalid Policy: Invalid JSON."},
		{"no expiration", rawPolicy(`{"conditions": []}`), file, 400, "InvalidPolicyDocument", "Invalid Policy: Policy missing expiration."},
		{"EXPIRATION", rawPolicy(`{"EXPIRATION": "2099-01-01T00:00:00Z", "conditions": []}`), file, 400, "InvalidPolicyDocument", `Invalid Policy: Unexpected: "expiration"`},
		{"no conditions", rawPolicy(`{"expiration": "2099-01-01T00:00:00Z"}`), file, 400, "InvalidPolicyDocument", "Invalid Policy: Policy missing conditions."},
		{"bad expiration", rawPolicy(`{"expiration": "2099-01-01 00:00:00+02:00", "conditions": []}`), file, 400, "InvalidPolicyDocument",
			"Invalid Policy: Invalid 'expiration' value: '2099-01-01 00:00:00+02:00'"},
		{"empty condition", rawPolicy(`{"expiration": "2099-01-01T00:00:00Z", "conditions": [{}]}`), file, 400, "InvalidPolicyDocument",
			"Invalid Policy: Invalid Simple-Condition: Simple-Conditions must have exactly one property specified."},
		{"number condition", rawPolicy(`{"expiration": "2099-01-01T00:00:00Z", "conditions": [{"key": 1}]}`), file, 400, "InvalidPolicyDocument",
			"Invalid Policy: Invalid Simple-Condition: value must be a string."},
		{"unknown operation", rawPolicy(`{"expiration": "2099-01-01T00:00:00Z", "conditions": [["in", "$key", "a"]]}`), file, 400, "InvalidPolicyDocument",
			"Invalid Policy: Invalid Condition: unknown operation 'in'."},
		{"wrong arity", rawPolicy(`{"expiration": "2099-01-01T00:00:00Z", "conditions": [["eq", "$key"]]}`), file, 400, "InvalidPolicyDocument",
			"Invalid Policy: Invalid eq: wrong number of arguments."},
		{"not a condition", rawPolicy(`{"expiration": "2099-01-01T00:00:00Z", "conditions": ["key"]}`), file, 400, "InvalidPolicyDocument",
			"Invalid Policy: Invalid condition test: must be a List or Object."},
		{"tagging", signed(hour, with([]any{"starts-with", "$tagging", ""}), key, [2]string{"tagging", "invalid"}), file, 400, "MalformedXML", ""},
		{"content-md5", signed(hour, with([]any{"starts-with", "$Content-MD5", ""}), key, [2]string{"Content-MD5", "1B2M2Y8AsgTpgAmY7PhCfg=="}), file, 400, "BadDigest", ""},
		{"checksum", signed(hour, with([]any{"starts-with", "$x-amz-checksum-sha256", ""}), key,
			[2]string{"x-amz-checksum-sha256", "47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU="}), file, 400, "BadDigest", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ct, body := formBody(t, tc.fields, "x.txt", tc.file)
			res := sendPost(t, url, ct, body)
			if res.status != tc.status || !strings.Contains(res.body, "<Code>"+tc.code+"</Code>") || !strings.Contains(res.body, xmlText(tc.msg)) {
				t.Fatalf("got %d %s", res.status, res.body)
			}
			assertNotStored(t, c, "up/x", "down/x")
		})
	}
}

func xmlText(s string) string {
	var b bytes.Buffer
	_ = xml.EscapeText(&b, []byte(s))
	return b.String()
}

// sendCutRequest writes head and body, then half-closes the connection,
// as a client that dies mid-upload, and waits for the server's answer.
func sendCutRequest(t *testing.T, addr, head string, body []byte) string {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(10 * time.Second))
	_, _ = conn.Write([]byte(head))
	_, _ = conn.Write(body)
	_ = conn.(*net.TCPConn).CloseWrite()
	out, _ := io.ReadAll(conn)
	return string(out)
}

func assertNotStored(t *testing.T, c *s3.Client, keys ...string) {
	t.Helper()
	out, err := c.ListObjectsV2(context.Background(), &s3.ListObjectsV2Input{Bucket: aws.String(postBucket)})
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Contents) != 0 {
		t.Fatalf("stored %s", aws.ToString(out.Contents[0].Key))
	}
}

// TestPostObjectFormLimits: a form that is not multipart, fields before
// the file above S3's 20 KB, and a form cut inside its file.
func TestPostObjectFormLimits(t *testing.T) {
	endpoint, c := newPostServer(t)
	p := postSigner{ak: postAK, sk: postSK, now: time.Now()}
	b64, sig := p.policy(t, time.Now().Add(time.Hour), map[string]string{"bucket": postBucket}, []any{"starts-with", "$key", ""})
	fields := append(p.fields(b64, sig), [2]string{"key", "cut"})

	res := sendPost(t, endpoint, "multipart/form-data", []byte("x"))
	if res.status != 400 || !strings.Contains(res.body, "<Code>MalformedPOSTRequest</Code>") {
		t.Fatalf("no boundary: %d %s", res.status, res.body)
	}
	ct, body := formBody(t, append(fields, [2]string{"x-ignore-pad", strings.Repeat("p", 30<<10)}), "f", []byte("data"))
	res = sendPost(t, endpoint, ct, body)
	if res.status != 400 || !strings.Contains(res.body, "<Code>MaxPostPreDataLengthExceeded</Code>") {
		t.Fatalf("large fields: %d %s", res.status, res.body)
	}
	data := bytes.Repeat([]byte("0123456789"), 50<<10)
	ct, body = formBody(t, fields, "f", data)
	cut := body[:bytes.Index(body, data)+len(data)/2]
	res = sendPost(t, endpoint, ct, cut)
	if res.status != 400 || !strings.Contains(res.body, "<Code>MalformedPOSTRequest</Code>") {
		t.Fatalf("cut form: %d %s", res.status, res.body)
	}
	// The same cut on the wire: the connection closes mid-file.
	u, _ := url.Parse(endpoint)
	answer := sendCutRequest(t, u.Host, "POST /"+postBucket+" HTTP/1.1\r\nHost: "+u.Host+"\r\nContent-Type: "+ct+
		fmt.Sprintf("\r\nContent-Length: %d\r\n\r\n", len(body)), cut)
	if !strings.HasPrefix(answer, "HTTP/1.1 400 ") {
		t.Fatalf("cut connection: %q", answer)
	}
	assertNotStored(t, c)
	// And whole, it is stored.
	if res = sendPost(t, endpoint, ct, body); res.status != 204 {
		t.Fatalf("whole form: %d %s", res.status, res.body)
	}
	if got := readObject(t, c, postBucket, "cut"); got != string(data) {
		t.Fatalf("stored %d bytes", len(got))
	}
}

// TestPostObjectCaseInsensitiveNames: field names, condition names and
// operators match whatever their case; values do not.
func TestPostObjectCaseInsensitiveNames(t *testing.T) {
	url, c := newPostServer(t)
	p := postSigner{ak: postAK, sk: postSK, now: time.Now()}
	b64, sig := p.policy(t, time.Now().Add(time.Hour), map[string]string{"bUcKeT": postBucket},
		[]any{"StArTs-WiTh", "$KeY", `\$foo`}, []any{"EQ", "$CoNtEnT-TyPe", "text/plain"})
	fields := [][2]string{{"x-amz-algorithm", "AWS4-HMAC-SHA256"}, {"X-AMZ-CREDENTIAL", p.cred()},
		{"x-Amz-Date", p.date()}, {"pOLICy", b64}, {"x-amz-signature", sig},
		{"kEy", `\$foo.txt`}, {"content-type", "text/plain"}}
	ct, body := formBody(t, fields, "", []byte("bar"))
	if res := sendPost(t, url, ct, body); res.status != 204 {
		t.Fatalf("got %d %s", res.status, res.body)
	}
	if got := readObject(t, c, postBucket, `\$foo.txt`); got != "bar" {
		t.Fatalf("got %q", got)
	}
	fields[6][1] = "Text/plain"
	ct, body = formBody(t, fields, "", []byte("bar"))
	if res := sendPost(t, url, ct, body); res.status != 403 {
		t.Fatalf("value case: got %d %s", res.status, res.body)
	}
}

// TestPostObjectRangeInclusive: a file of exactly the minimum and the
// maximum of content-length-range is stored.
func TestPostObjectRangeInclusive(t *testing.T) {
	url, c := newPostServer(t)
	p := postSigner{ak: postAK, sk: postSK, now: time.Now()}
	b64, sig := p.policy(t, time.Now().Add(time.Hour), map[string]string{"bucket": postBucket},
		[]any{"starts-with", "$key", "r"}, []any{"content-length-range", 6, 100}, []any{"content-length-range", "0", "6"})
	ct, body := formBody(t, append(p.fields(b64, sig), [2]string{"key", "r"}), "f", []byte("sixsix"))
	if res := sendPost(t, url, ct, body); res.status != 204 {
		t.Fatalf("got %d %s", res.status, res.body)
	}
	if got := readObject(t, c, postBucket, "r"); got != "sixsix" {
		t.Fatalf("got %q", got)
	}
}

// TestPostObjectCutInFields: a form that ends among its fields is
// malformed; one that closes without a file has no file.
func TestPostObjectCutInFields(t *testing.T) {
	url, _ := newPostServer(t)
	ct, body := formBody(t, [][2]string{{"key", "k"}, {"x-ignore-a", "b"}}, "", nil)
	if res := sendPost(t, url, ct, body); res.status != 400 || !strings.Contains(res.body, "POST requires exactly one file upload per request.") {
		t.Fatalf("no file: %d %s", res.status, res.body)
	}
	if res := sendPost(t, url, ct, nil); res.status != 400 {
		t.Fatalf("empty: %d %s", res.status, res.body)
	}
	boundary := ct[strings.Index(ct, "boundary=")+len("boundary="):]
	if res := sendPost(t, url, ct, []byte("--"+boundary+"--\r\n")); res.status != 400 || !strings.Contains(res.body, "exactly one file") {
		t.Fatalf("no parts: %d %s", res.status, res.body)
	}
	cut := body[:bytes.Index(body, []byte("x-ignore-a"))]
	if res := sendPost(t, url, ct, cut); res.status != 400 || !strings.Contains(res.body, "<Code>MalformedPOSTRequest</Code>") {
		t.Fatalf("cut: %d %s", res.status, res.body)
	}
}

// A POST form with both an "acl" and an "x-amz-acl" field (both covered
// by the policy) gets the same answer every time, whatever Go's map
// order: "acl=public-read" with "x-amz-acl=private" is refused (two canned
// ACLs, neither of S3's names), never stored with one of them silently
// dropped (objectHeader joins both fields in the order sent).
func TestPostTwoACLFieldsAlwaysRefused(t *testing.T) {
	url, _ := newPostServer(t)
	p := postSigner{ak: postAK, sk: postSK, now: time.Now()}
	b64, sig := p.policy(t, time.Now().Add(time.Hour),
		map[string]string{"bucket": postBucket}, []any{"starts-with", "$key", "up/"},
		[]any{"starts-with", "$acl", ""}, []any{"starts-with", "$x-amz-acl", ""})
	statuses := map[int]int{}
	for i := range 40 {
		fields := append(p.fields(b64, sig), [2]string{"key", fmt.Sprintf("up/acl-%d", i)},
			[2]string{"acl", "public-read"}, [2]string{"x-amz-acl", "private"})
		ct, body := formBody(t, fields, "f.txt", []byte("data"))
		statuses[sendPost(t, url, ct, body).status]++
	}
	if len(statuses) != 1 || statuses[204] != 0 || statuses[200] != 0 {
		t.Fatalf("want every upload asking for two ACLs to be refused the same way; got status counts %v "+
			"(204 = stored, the ACL request silently dropped)", statuses)
	}
}
