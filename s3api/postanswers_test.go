package s3api

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/hex"
	"encoding/xml"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/s3seal/s3seal/backend"
)

// errorElements reads an S3 error body into its elements by name.
func errorElements(t *testing.T, body string) map[string]string {
	t.Helper()
	out := map[string]string{}
	dec := xml.NewDecoder(strings.NewReader(body))
	var name string
	for {
		tok, err := dec.Token()
		if err != nil {
			return out
		}
		switch e := tok.(type) {
		case xml.StartElement:
			name = e.Name.Local
			out[name] = ""
		case xml.CharData:
			if name != "" {
				out[name] += string(e)
			}
		case xml.EndElement:
			name = ""
		}
	}
}

// TestPostObjectS3Answers: a form's refusals carry S3's code, message word
// for word, and the elements naming what was wrong (ArgumentName,
// ProposedSize, AWSAccessKeyId, ...), as versitygw's suite, written
// against S3, expects them; nothing is stored.
func TestPostObjectS3Answers(t *testing.T) {
	url, c := newPostServer(t)
	now := time.Now()
	p := postSigner{ak: postAK, sk: postSK, now: now}
	hour := now.Add(time.Hour)
	key := [2]string{"key", "up/x"}
	base := []any{map[string]string{"bucket": postBucket}, map[string]string{"key": "up/x"}}
	with := func(more ...any) []any { return append(append([]any{}, base...), more...) }
	signed := func(conds []any, fields ...[2]string) [][2]string {
		b64, sig := p.policy(t, hour, conds...)
		return append(p.fields(b64, sig), fields...)
	}
	without := func(fields [][2]string, name string) [][2]string {
		var out [][2]string
		for _, f := range fields {
			if !strings.EqualFold(f[0], name) {
				out = append(out, f)
			}
		}
		return out
	}
	rawPolicy := func(doc string) [][2]string {
		b64 := base64.StdEncoding.EncodeToString([]byte(doc))
		return append(p.fields(b64, p.sign(b64)), key)
	}
	badSig := signed(base, key)
	badSig[4][1] = "incorrect_signature"
	old := postSigner{ak: postAK, sk: postSK, now: now.Add(-61 * time.Minute)}
	oldB64, oldSig := old.policy(t, hour, base...)
	file := []byte("0123456789")

	for _, tc := range []struct {
		name   string
		fields [][2]string
		file   []byte
		status int
		want   map[string]string
	}{
		{"no policy", append(without(signed(base), "Policy"), key), file, 400, map[string]string{"Code": "InvalidArgument",
			"Message":      "Bucket POST must contain a field named 'policy'.  If it is specified, please check the order of the fields.",
			"ArgumentName": "policy", "ArgumentValue": ""}},
		{"empty policy", append(p.fields("", p.sign("")), key), file, 400, map[string]string{"Code": "InvalidPolicyDocument",
			"Message": "Invalid Policy: Expecting '{' but found End-of-Input"}},
		{"algorithm", append(without(signed(base), "X-Amz-Algorithm"), [2]string{"x-amz-algorithm", "invalid"}, key), file, 400,
			map[string]string{"Code": "InvalidArgument", "Message": "Only AWS4-HMAC-SHA256 is supported",
				"ArgumentName": "X-Amz-Algorithm", "ArgumentValue": "invalid"}},
		{"date", append(without(signed(base), "X-Amz-Date"), [2]string{"x-amz-date", "invalid_date"}, key), file, 400,
			map[string]string{"Code": "InvalidArgument", "Message": "X-Amz-Date must be formated via ISO8601 Long format",
				"ArgumentName": "X-Amz-Date", "ArgumentValue": "invalid_date"}},
		{"credential", append(without(signed(base), "X-Amz-Credential"), [2]string{"x-amz-credential", "malformed-no-slashes"}, key), file, 400,
			map[string]string{"Code": "InvalidArgument",
				"Message":      `the Credential is mal-formed; expecting "<YOUR-AKID>/YYYYMMDD/REGION/SERVICE/aws4_request".`,
				"ArgumentName": "x-amz-credential", "ArgumentValue": "malformed-no-slashes"}},
		{"signed over an hour ago", append(old.fields(oldB64, oldSig), key), file, 403, map[string]string{"Code": "AccessDenied",
			"Message": "Invalid according to Policy: Policy expired."}},
		{"signature", badSig, file, 403, map[string]string{"Code": "SignatureDoesNotMatch", "AWSAccessKeyId": postAK,
			"StringToSign": badSig[3][1], "SignatureProvided": "incorrect_signature",
			"StringToSignBytes": hexSpaced(badSig[3][1])}},
		{"anonymous", [][2]string{key}, file, 403, map[string]string{"Code": "AccessDenied", "Message": "Access Denied."}},
		{"list condition as written", signed(with([]any{"eq", "$content-type", "text/plain"}), key, [2]string{"content-type", "image/jpeg"}), file, 403,
			map[string]string{"Code": "AccessDenied", "Message": `Invalid according to Policy: Policy Condition failed: ["eq","$content-type","text/plain"]`}},
		{"simple condition", signed(with(map[string]string{"content-type": "application/xml"}), key, [2]string{"content-type", "text/html"}), file, 403,
			map[string]string{"Code": "AccessDenied", "Message": `Invalid according to Policy: Policy Condition failed: ["eq", "$content-type", "application/xml"]`}},
		{"bucket field, no bucket condition", signed([]any{map[string]string{"key": "up/x"}}, key, [2]string{"bucket", postBucket}), file, 403,
			map[string]string{"Code": "AccessDenied", "Message": "Invalid according to Policy: Extra input fields: bucket"}},
		{"too large", signed(with([]any{"content-length-range", 0, 5}), key), file, 400, map[string]string{"Code": "EntityTooLarge",
			"Message": "Your proposed upload exceeds the maximum allowed object size.", "ProposedSize": "10", "MaxSizeAllowed": "5"}},
		{"too small", signed(with([]any{"content-length-range", 100, 1024}), key), []byte("hi"), 400, map[string]string{"Code": "EntityTooSmall",
			"Message": "Your proposed upload is smaller than the minimum allowed size", "ProposedSize": "2", "MinSizeAllowed": "100"}},
		{"expiration not a string", rawPolicy(`{"expiration": true, "conditions": [{"hello": "world"}]}`), file, 400,
			map[string]string{"Code": "InvalidPolicyDocument", "Message": "Invalid Policy: Invalid JSON."}},
		{"unexpected member", rawPolicy(`{"conditions": [], "expiration": "2099-01-01T00:00:00Z", "extra": "field"}`), file, 400,
			map[string]string{"Code": "InvalidPolicyDocument", "Message": `Invalid Policy: Unexpected: "extra"`}},
		{"range not a number", signed(with([]any{"content-length-range", "invalid", "14"}), key), file, 400,
			map[string]string{"Code": "InvalidPolicyDocument", "Message": "Invalid Policy: Invalid JSON."}},
		{"unknown checksum", signed(with(map[string]string{"x-amz-checksum-invalid": "invalid"}), key, [2]string{"x-amz-checksum-invalid", "invalid"}), file, 400,
			map[string]string{"Code": "InvalidRequest", "Message": "The algorithm type you specified in x-amz-checksum- header is invalid."}},
		{"tagging not XML", signed(with(map[string]string{"tagging": "invalid"}), key, [2]string{"tagging", "invalid"}), file, 400,
			map[string]string{"Code": "MalformedXML"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ct, body := formBody(t, tc.fields, "upload.bin", tc.file)
			res := sendPost(t, url, ct, body)
			got := errorElements(t, res.body)
			if res.status != tc.status {
				t.Fatalf("got %d %s", res.status, res.body)
			}
			for k, v := range tc.want {
				g, ok := got[k]
				if !ok || g != v {
					t.Errorf("%s: got %q, want %q (%s)", k, g, v, res.body)
				}
			}
			assertNotStored(t, c)
		})
	}
}

// hexSpaced is s's bytes in hex, separated by spaces.
func hexSpaced(s string) string {
	parts := make([]string, len(s))
	for i := range len(s) {
		parts[i] = hex.EncodeToString([]byte{s[i]})
	}
	return strings.Join(parts, " ")
}

// TestPostObjectNotAForm: a bucket POST without a subresource that is not
// multipart/form-data is S3's 412, naming the condition, before any
// authentication.
func TestPostObjectNotAForm(t *testing.T) {
	url, _ := newPostServer(t)
	req, _ := http.NewRequest(http.MethodPost, url+"/"+postBucket, strings.NewReader("body"))
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var b bytes.Buffer
	_, _ = b.ReadFrom(resp.Body)
	got := errorElements(t, b.String())
	if resp.StatusCode != 412 || got["Code"] != "PreconditionFailed" ||
		got["Message"] != "At least one of the pre-conditions you specified did not hold." ||
		got["Condition"] != "Bucket POST must be of the enclosure-type multipart/form-data" {
		t.Fatalf("got %d %s", resp.StatusCode, b.String())
	}
}

// tagRecorder notes the tags of each object the backend is asked to
// store.
type tagRecorder struct {
	backend.Store
	mu   sync.Mutex
	tags map[string]string
}

func (r *tagRecorder) PutObject(ctx context.Context, in backend.PutInput) (backend.PutOutput, error) {
	r.mu.Lock()
	r.tags[in.Key] = in.Protect.Tagging
	r.mu.Unlock()
	return r.Store.PutObject(ctx, in)
}

// TestPostObjectTaggingAndResponse: the tagging field's document becomes
// the object's tags, and a 201 answer is a PostResponse in no namespace,
// as AWS sends it.
func TestPostObjectTaggingAndResponse(t *testing.T) {
	rec := &tagRecorder{tags: map[string]string{}}
	srv := newTestServerOver(t, Config{Credentials: Credentials{postAK: {AccessKey: postAK, SecretKey: postSK, Read: []string{"*"}, Write: []string{"*"}}}},
		func(s backend.Store) backend.Store { rec.Store = s; return rec })
	c := sdkClient(srv.URL, postAK, postSK)
	if _, err := c.CreateBucket(context.Background(), &s3.CreateBucketInput{Bucket: aws.String(postBucket)}); err != nil {
		t.Fatal(err)
	}
	p := postSigner{ak: postAK, sk: postSK, now: time.Now()}
	tagging := `<Tagging><TagSet><Tag><Key>env</Key><Value>test</Value></Tag><Tag><Key>a b</Key><Value>c.d</Value></Tag></TagSet></Tagging>`
	b64, sig := p.policy(t, time.Now().Add(time.Hour), map[string]string{"bucket": postBucket}, map[string]string{"key": "tagged"},
		[]any{"eq", "$tagging", tagging}, []any{"eq", "$success_action_status", "201"})
	ct, body := formBody(t, append(p.fields(b64, sig), [2]string{"key", "tagged"}, [2]string{"tagging", tagging},
		[2]string{"success_action_status", "201"}), "f", []byte("data"))
	res := sendPost(t, srv.URL, ct, body)
	var pr struct {
		XMLName xml.Name
		Key     string
	}
	if res.status != 201 || xml.Unmarshal([]byte(res.body), &pr) != nil || pr.Key != "tagged" ||
		pr.XMLName.Local != "PostResponse" || pr.XMLName.Space != "" {
		t.Fatalf("got %d %s", res.status, res.body)
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if got := rec.tags["tagged"]; got != "env=test&a+b=c.d" && got != "env=test&a%20b=c.d" {
		t.Fatalf("stored with tags %q", got)
	}
}
