package s3api

import (
	"context"
	"crypto/hmac"
	"crypto/sha1"
	"encoding/base64"
	"encoding/json"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
)

// v2Form is a browser POST form signed with Signature Version 2, as
// s3-tests signs its forms: the policy document, its base64 HMAC-SHA1
// under secret, and the fields given.
func v2Form(t *testing.T, ak, secret string, exp time.Time, conds []any, fields ...[2]string) [][2]string {
	t.Helper()
	doc, err := json.Marshal(map[string]any{"expiration": exp.UTC().Format("2006-01-02T15:04:05Z"), "conditions": conds})
	if err != nil {
		t.Fatal(err)
	}
	b64 := base64.StdEncoding.EncodeToString(doc)
	m := hmac.New(sha1.New, []byte(secret))
	m.Write([]byte(b64))
	auth := [][2]string{{"AWSAccessKeyId", ak}, {"policy", b64}, {"signature", base64.StdEncoding.EncodeToString(m.Sum(nil))}}
	return append(auth, fields...)
}

// TestPostObjectSignatureV2: a form signed with Signature Version 2 is
// answered as S3 answers it while anything is wrong with it (403 for a
// wrong signature, an unknown key, an expired policy, a policy for another
// bucket or one that does not cover a field; 400 for a malformed policy),
// and nothing is stored then; a form where everything holds is stored,
// answered 204 as a SigV4 form is.
func TestPostObjectSignatureV2(t *testing.T) {
	url, c := newPostServer(t)
	t.Run("all holds", func(t *testing.T) {
		hour := time.Now().Add(time.Hour)
		conds := []any{map[string]string{"bucket": postBucket}, []any{"starts-with", "$key", "v2/"},
			[]any{"starts-with", "$Content-Type", "text/"}}
		ct, body := formBody(t, v2Form(t, postAK, postSK, hour, conds, [2]string{"key", "v2/x"}, [2]string{"Content-Type", "text/plain"}), "x.txt", []byte("abcdef"))
		res := sendPost(t, url, ct, body)
		if res.status != 204 {
			t.Fatalf("got %d %s", res.status, res.body)
		}
		out, err := c.GetObject(context.Background(), &s3.GetObjectInput{Bucket: aws.String(postBucket), Key: aws.String("v2/x")})
		if err != nil {
			t.Fatal(err)
		}
		got, _ := io.ReadAll(out.Body)
		out.Body.Close()
		if string(got) != "abcdef" || aws.ToString(out.ContentType) != "text/plain" {
			t.Fatalf("stored %q (%s)", got, aws.ToString(out.ContentType))
		}
		if _, err := c.DeleteObject(context.Background(), &s3.DeleteObjectInput{Bucket: aws.String(postBucket), Key: aws.String("v2/x")}); err != nil {
			t.Fatal(err)
		}
	})
	hour := time.Now().Add(time.Hour)
	conds := []any{map[string]string{"bucket": postBucket}, []any{"starts-with", "$key", "up/"},
		[]any{"starts-with", "$Content-Type", "text/"}}
	key, ctype := [2]string{"key", "up/x"}, [2]string{"Content-Type", "text/plain"}
	wrongSig := v2Form(t, postAK, postSK, hour, conds, key, ctype)
	wrongSig[2][1] = "AAAA" + wrongSig[2][1][4:]
	noSig := v2Form(t, postAK, postSK, hour, conds, key, ctype)
	noSig = append(noSig[:2], noSig[3:]...)
	for _, tc := range []struct {
		name   string
		fields [][2]string
		status int
		code   string
		msg    string
	}{
		{"wrong signature", wrongSig, 403, "SignatureDoesNotMatch", ""},
		{"other secret", v2Form(t, postAK, "not-the-secret", hour, conds, key, ctype), 403, "SignatureDoesNotMatch", ""},
		{"unknown key", v2Form(t, "nobody", postSK, hour, conds, key, ctype), 403, "InvalidAccessKeyId", ""},
		{"expired", v2Form(t, postAK, postSK, time.Now().Add(-time.Minute), conds, key, ctype), 403, "AccessDenied",
			"Invalid according to Policy: Policy expired."},
		{"other bucket", v2Form(t, postAK, postSK, hour, append([]any{map[string]string{"bucket": "other"}}, conds[1:]...), key, ctype),
			403, "AccessDenied", "Policy Condition failed"},
		{"uncovered field", v2Form(t, postAK, postSK, hour, conds[:2], key, ctype), 403, "AccessDenied",
			"Invalid according to Policy: Extra input fields: Content-Type"},
		{"condition fails", v2Form(t, postAK, postSK, hour, conds, key, [2]string{"Content-Type", "image/png"}), 403, "AccessDenied",
			"Policy Condition failed"},
		{"no signature", noSig, 400, "InvalidArgument", "'signature'"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ct, body := formBody(t, tc.fields, "x.txt", []byte("abcdef"))
			res := sendPost(t, url, ct, body)
			if res.status != tc.status || !strings.Contains(res.body, "<Code>"+tc.code+"</Code>") || !strings.Contains(res.body, xmlText(tc.msg)) {
				t.Fatalf("got %d %s", res.status, res.body)
			}
			assertNotStored(t, c, "up/x")
		})
	}
}

// TestPostPolicyOptionalFields: a starts-with "" condition allows a form
// that leaves its field out, and a flexible checksum field needs no
// condition (it only narrows what is accepted: a wrong one is refused).
func TestPostPolicyOptionalFields(t *testing.T) {
	url, c := newPostServer(t)
	hour := time.Now().Add(time.Hour)
	conds := []any{map[string]string{"bucket": postBucket}, []any{"starts-with", "$key", "opt/"},
		[]any{"starts-with", "$x-amz-server-side-encryption", ""}}
	ct, body := formBody(t, v2Form(t, postAK, postSK, hour, conds, [2]string{"key", "opt/a"}), "a.txt", []byte("abc"))
	if res := sendPost(t, url, ct, body); res.status != 204 {
		t.Fatalf("a form without the starts-with \"\" field: %d %s", res.status, res.body)
	}
	// sha256("abc") in base64, then a wrong one.
	good := [2]string{"x-amz-checksum-sha256", "ungWv48Bz+pBQUDeXa4iI7ADYaOWF3qctBD/YfIAFa0="}
	ct, body = formBody(t, v2Form(t, postAK, postSK, hour, conds[:2], [2]string{"key", "opt/b"}, good), "b.txt", []byte("abc"))
	if res := sendPost(t, url, ct, body); res.status != 204 {
		t.Fatalf("a form with a checksum field: %d %s", res.status, res.body)
	}
	bad := [2]string{"x-amz-checksum-sha256", "n4bQgYhMfWWaL+qgxVrQFaO/TxsrC4Is0V1sFbDwCgg="}
	ct, body = formBody(t, v2Form(t, postAK, postSK, hour, conds[:2], [2]string{"key", "opt/c"}, bad), "c.txt", []byte("abc"))
	if res := sendPost(t, url, ct, body); res.status != 400 {
		t.Fatalf("a form with a wrong checksum field: %d %s", res.status, res.body)
	}
	if _, err := c.HeadObject(context.Background(), &s3.HeadObjectInput{Bucket: aws.String(postBucket), Key: aws.String("opt/c")}); err == nil {
		t.Fatal("a form whose checksum does not match was stored")
	}
}
