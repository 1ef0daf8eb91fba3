package s3api

import (
	"context"
	"encoding/xml"
	"io"
	"net/http"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
)

// A CORS configuration is judged as S3 judges it (moto words its
// refusals otherwise), before it reaches the store.
func TestPutBucketCorsChecked(t *testing.T) {
	fw := &docForwarder{}
	c, _ := adminClient(t, fw)
	ctx := context.Background()
	malformed := "The XML you provided was not well-formed or did not validate against our published schema."
	rule := func(origins, methods, headers, expose []string) []types.CORSRule {
		return []types.CORSRule{{AllowedOrigins: origins, AllowedMethods: methods, AllowedHeaders: headers, ExposeHeaders: expose}}
	}
	o, m := []string{"http://o.com"}, []string{"GET"}
	for i, tc := range []struct {
		rules     []types.CORSRule
		code, msg string
	}{
		{[]types.CORSRule{}, "MalformedXML", malformed},
		{rule([]string{}, m, nil, nil), "MalformedXML", malformed},
		{rule([]string{"*example.com*"}, m, nil, nil), "InvalidRequest", `AllowedOrigin "*example.com*" can not have more than one wildcard.`},
		{rule(o, []string{}, nil, nil), "MalformedXML", malformed},
		{rule(o, []string{"get"}, nil, nil), "InvalidRequest", "Found unsupported HTTP method in CORS config. Unsupported method is get"},
		{rule(o, []string{"GET", "OPTIONS"}, nil, nil), "InvalidRequest", "Found unsupported HTTP method in CORS config. Unsupported method is OPTIONS"},
		{rule(o, m, []string{"X-Amz-Date", `X"Quote"`}, nil), "InvalidRequest", `AllowedHeader "X"Quote"" contains invalid character.`},
		{rule(o, m, nil, []string{"invalid header"}), "InvalidRequest", `AllowedHeader "invalid header" contains invalid character.`},
	} {
		_, err := c.PutBucketCors(ctx, &s3.PutBucketCorsInput{Bucket: aws.String("bkt"), CORSConfiguration: &types.CORSConfiguration{CORSRules: tc.rules}})
		if err := wantAPIErr(err, tc.code, tc.msg); err != nil {
			t.Errorf("case %d: %v", i, err)
		}
	}
	good := &types.CORSConfiguration{CORSRules: rule([]string{"*"}, []string{"GET", "HEAD"}, []string{"*"}, []string{"x-amz-meta-a"})}
	// AWS's words for a Content-MD5 that is not one.
	_, err := c.PutBucketCors(ctx, &s3.PutBucketCorsInput{Bucket: aws.String("bkt"), CORSConfiguration: good, ContentMD5: aws.String("invalid")})
	if err := wantAPIErr(err, "InvalidDigest", "The Content-MD5 you specified was invalid."); err != nil {
		t.Error(err)
	}
	if len(fw.docs) != 0 {
		t.Fatalf("a refused configuration reached the store: %q", fw.docs)
	}
	_, err = c.PutBucketCors(ctx, &s3.PutBucketCorsInput{Bucket: aws.String("bkt"), CORSConfiguration: good})
	if err != nil {
		t.Fatal(err)
	}
}

type preflightAnswer struct {
	status                                            int
	code, message, resource                           string
	origin, methods, headers, expose, maxAge, credits string
}

func preflightReq(t *testing.T, url, origin, method, headers string) preflightAnswer {
	t.Helper()
	req, _ := http.NewRequest(http.MethodOptions, url, nil)
	if origin != "" {
		req.Header.Set("Origin", origin)
	}
	if method != "" {
		req.Header.Set("Access-Control-Request-Method", method)
	}
	if headers != "" {
		req.Header.Set("Access-Control-Request-Headers", headers)
	}
	return doCORS(t, req)
}

func doCORS(t *testing.T, req *http.Request) preflightAnswer {
	t.Helper()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	var e struct{ Code, Message, ResourceType string }
	_ = xml.Unmarshal(body, &e)
	h := resp.Header
	return preflightAnswer{resp.StatusCode, e.Code, e.Message, e.ResourceType,
		h.Get("Access-Control-Allow-Origin"), h.Get("Access-Control-Allow-Methods"), h.Get("Access-Control-Allow-Headers"),
		h.Get("Access-Control-Expose-Headers"), h.Get("Access-Control-Max-Age"), h.Get("Access-Control-Allow-Credentials")}
}

// A preflight is unsigned and answered from the bucket's CORS rules, read
// from the store; a change through s3seal is seen at once.
func TestPreflightOPTIONS(t *testing.T) {
	fw := &docForwarder{}
	c, url := adminClient(t, fw)
	ctx := context.Background()
	obj := url + "/bkt/object"
	notEnabled := preflightAnswer{status: 403, code: "AccessForbidden", message: "CORSResponse: CORS is not enabled for this bucket.", resource: "BUCKET"}
	forbidden := preflightAnswer{status: 403, code: "AccessForbidden", resource: "OBJECT", message: "CORSResponse: This CORS request is not allowed. " +
		"This is usually because the evalution of Origin, request method / Access-Control-Request-Method or Access-Control-Request-Headers are not whitelisted by the resource's CORS spec."}
	check := func(name string, got, want preflightAnswer) {
		t.Helper()
		if got != want {
			t.Errorf("%s:\n got %+v\nwant %+v", name, got, want)
		}
	}
	check("missing origin", preflightReq(t, obj, "", "GET", ""),
		preflightAnswer{status: 400, code: "BadRequest", message: "Insufficient information. Origin request header needed."})
	check("bad method", preflightReq(t, obj, "o.com", "get", ""),
		preflightAnswer{status: 400, code: "BadRequest", message: "Invalid Access-Control-Request-Method: get"})
	check("bad header", preflightReq(t, obj, "o.com", "GET", "Date, Bad/Header"),
		preflightAnswer{status: 400, code: "BadRequest", message: `Access-Control-Request-Headers " Bad/Header" contains invalid character.`})
	check("no bucket", preflightReq(t, url+"/missing/object", "o.com", "GET", ""),
		preflightAnswer{status: 404, code: "NoSuchBucket", message: "The specified bucket does not exist."})
	check("no rules", preflightReq(t, obj, "o.com", "GET", ""), notEnabled)

	_, err := c.PutBucketCors(ctx, &s3.PutBucketCorsInput{Bucket: aws.String("bkt"), CORSConfiguration: &types.CORSConfiguration{CORSRules: []types.CORSRule{
		{AllowedOrigins: []string{"http://example.com"}, AllowedMethods: []string{"GET", "HEAD"}, AllowedHeaders: []string{"X-Amz-Date", "X-Amz-*"},
			ExposeHeaders: []string{"Content-Type"}, MaxAgeSeconds: aws.Int32(100)},
		{AllowedOrigins: []string{"*"}, AllowedMethods: []string{"HEAD"}},
		{AllowedOrigins: []string{"http://www*"}, AllowedMethods: []string{"PUT"}},
	}}})
	if err != nil {
		t.Fatal(err)
	}
	check("first rule", preflightReq(t, obj, "http://example.com", "GET", "X-Amz-Date,x-amz-meta-a"), preflightAnswer{status: 200,
		origin: "http://example.com", methods: "GET, HEAD", headers: "x-amz-date, x-amz-meta-a", expose: "Content-Type, ETag", maxAge: "100", credits: "true"})
	check("wildcard origin", preflightReq(t, obj, "anything", "HEAD", ""), preflightAnswer{status: 200,
		origin: "*", methods: "HEAD", expose: "ETag", credits: "false"})
	check("wildcard in origin", preflightReq(t, obj, "http://www.a.com", "PUT", ""), preflightAnswer{status: 200,
		origin: "http://www.a.com", methods: "PUT", expose: "ETag", credits: "true"})
	check("header refused", preflightReq(t, obj, "http://example.com", "GET", "Authorization"), forbidden)
	check("method refused", preflightReq(t, obj, "http://example.com", "PUT", ""), forbidden)
	check("origin refused", preflightReq(t, obj, "http://other.com", "GET", ""), forbidden)

	// An actual request with an Origin gets the grant's headers, even
	// when it fails; an unsigned one (s3seal serves none) gets none and
	// costs no read of the rules.
	get, _ := http.NewRequest(http.MethodGet, obj, nil)
	get.Header.Set("Origin", "http://example.com")
	if got := doCORS(t, get); got.status != 403 || got.origin != "" {
		t.Errorf("unsigned actual request: %+v", got)
	}
	get.Header.Set("Authorization", "AWS4-HMAC-SHA256 Credential=nobody/20260101/us-east-1/s3/aws4_request, SignedHeaders=host, Signature=00")
	if got := doCORS(t, get); got.status != 403 || got.origin != "http://example.com" || got.methods != "GET, HEAD" {
		t.Errorf("actual request: %+v", got)
	}
	get.Header.Set("Origin", "http://other.com")
	if got := doCORS(t, get); got.origin != "" {
		t.Errorf("actual request from an origin not allowed: %+v", got)
	}

	if _, err := c.DeleteBucketCors(ctx, &s3.DeleteBucketCorsInput{Bucket: aws.String("bkt")}); err != nil {
		t.Fatal(err)
	}
	check("rules deleted", preflightReq(t, obj, "http://example.com", "GET", ""), notEnabled)
	gets := fw.gets
	for range 3 {
		preflightReq(t, obj, "http://example.com", "GET", "")
	}
	if fw.gets != gets {
		t.Errorf("the rules were read %d more times, want them kept", fw.gets-gets)
	}
}
