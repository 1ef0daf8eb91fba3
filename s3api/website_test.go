package s3api

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/aws/smithy-go"

	"github.com/s3seal/s3seal/backend"
)

// docForwarder keeps bucket documents as a store does: a GET of one never
// put is the store's NoSuch... refusal; bucket "missing" does not exist.
type docForwarder struct {
	mu   sync.Mutex
	docs map[string][]byte // by sub-resource
	gets int
}

var missingDoc = map[string]string{"cors": "NoSuchCORSConfiguration", "website": "NoSuchWebsiteConfiguration"}

func (f *docForwarder) Forward(_ context.Context, in backend.RawRequest) (*backend.RawResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if in.Bucket == "missing" {
		return nil, &backend.Error{Code: "NoSuchBucket", StatusCode: 404, Message: "no bucket"}
	}
	sub := ""
	for k := range in.Query {
		sub = k
	}
	if f.docs == nil {
		f.docs = map[string][]byte{}
	}
	switch in.Method {
	case http.MethodPut:
		f.docs[sub] = in.Body
	case http.MethodDelete:
		delete(f.docs, sub)
	case http.MethodGet:
		f.gets++
		doc, ok := f.docs[sub]
		if !ok {
			return nil, &backend.Error{Code: missingDoc[sub], StatusCode: 404, Message: "store's words"}
		}
		return &backend.RawResponse{StatusCode: 200, Header: http.Header{}, Body: doc}, nil
	}
	return &backend.RawResponse{StatusCode: 200, Header: http.Header{}}, nil
}

func adminClient(t *testing.T, fw backend.Forwarder) (*s3.Client, string) {
	creds := Credentials{"admin": {AccessKey: "admin", SecretKey: "as", Read: []string{"*"}, Write: []string{"*"}, Admin: true}}
	srv := newTestServerFw(t, Config{Credentials: creds}, fw)
	return sdkClient(srv.URL, "admin", "as"), srv.URL
}

// wantAPIErr checks an S3 error's code and message, word for word.
func wantAPIErr(err error, code, msg string) error {
	var ae smithy.APIError
	if !errors.As(err, &ae) {
		return fmt.Errorf("want %s, got %v", code, err)
	}
	if ae.ErrorCode() != code || ae.ErrorMessage() != msg {
		return fmt.Errorf("want %s %q, got %s %q", code, msg, ae.ErrorCode(), ae.ErrorMessage())
	}
	return nil
}

// A website configuration is judged as S3 judges it, whatever the store
// would say, then kept by the store and read back; s3seal serves no
// website from it.
func TestBucketWebsite(t *testing.T) {
	fw := &docForwarder{}
	c, _ := adminClient(t, fw)
	ctx := context.Background()
	idx := &types.IndexDocument{Suffix: aws.String("index.html")}
	redirect := func(r types.Redirect) []types.RoutingRule { return []types.RoutingRule{{Redirect: &r}} }
	many := make([]types.RoutingRule, 51)
	for i := range many {
		many[i] = types.RoutingRule{Redirect: &types.Redirect{ReplaceKeyPrefixWith: aws.String("p/")}}
	}
	long := make([]types.RoutingRule, 50)
	for i := range long {
		long[i] = types.RoutingRule{Condition: &types.Condition{KeyPrefixEquals: aws.String(strings.Repeat("a", 3000))},
			Redirect: &types.Redirect{ReplaceKeyWith: aws.String("x")}}
	}
	malformed := "The XML you provided was not well-formed or did not validate against our published schema."
	badProto := "Invalid protocol, protocol can be http or https. If not defined the protocol will be selected automatically."
	for i, tc := range []struct {
		cfg       types.WebsiteConfiguration
		code, msg string
	}{
		{types.WebsiteConfiguration{IndexDocument: &types.IndexDocument{Suffix: aws.String("")}}, "InvalidArgument", "The IndexDocument Suffix is not well formed"},
		{types.WebsiteConfiguration{IndexDocument: &types.IndexDocument{Suffix: aws.String("/index.html")}}, "InvalidArgument", "The IndexDocument Suffix is not well formed"},
		{types.WebsiteConfiguration{IndexDocument: idx, ErrorDocument: &types.ErrorDocument{Key: aws.String("")}}, "InvalidArgument", "The ErrorDocument Key is not well formed"},
		{types.WebsiteConfiguration{ErrorDocument: &types.ErrorDocument{Key: aws.String("e.html")}}, "MalformedXML", malformed},
		{types.WebsiteConfiguration{RedirectAllRequestsTo: &types.RedirectAllRequestsTo{HostName: aws.String("e.com"), Protocol: "ftp"}}, "InvalidRequest", badProto},
		{types.WebsiteConfiguration{RedirectAllRequestsTo: &types.RedirectAllRequestsTo{HostName: aws.String("e.com")}, IndexDocument: idx}, "MalformedXML", malformed},
		{types.WebsiteConfiguration{IndexDocument: idx, RoutingRules: redirect(types.Redirect{HostName: aws.String("e.com"), Protocol: "ftp"})}, "InvalidRequest", badProto},
		{types.WebsiteConfiguration{IndexDocument: idx, RoutingRules: redirect(types.Redirect{})}, "MalformedXML", malformed},
		{types.WebsiteConfiguration{IndexDocument: idx, RoutingRules: []types.RoutingRule{{Condition: &types.Condition{}, Redirect: &types.Redirect{HostName: aws.String("e.com")}}}}, "MalformedXML", malformed},
		{types.WebsiteConfiguration{IndexDocument: idx, RoutingRules: redirect(types.Redirect{ReplaceKeyWith: aws.String("a"), ReplaceKeyPrefixWith: aws.String("b")})},
			"InvalidRequest", "You can only define ReplaceKeyPrefix or ReplaceKey but not both."},
		{types.WebsiteConfiguration{IndexDocument: idx, RoutingRules: redirect(types.Redirect{HttpRedirectCode: aws.String("300")})},
			"InvalidRequest", "The provided HTTP redirect code (300) is not valid. Valid codes are 3XX except 300."},
		{types.WebsiteConfiguration{IndexDocument: idx, RoutingRules: redirect(types.Redirect{HttpRedirectCode: aws.String("3xx")})}, "MalformedXML", malformed},
		{types.WebsiteConfiguration{IndexDocument: idx, RoutingRules: []types.RoutingRule{{Condition: &types.Condition{HttpErrorCodeReturnedEquals: aws.String("418")},
			Redirect: &types.Redirect{HostName: aws.String("e.com")}}}}, "InvalidRequest", "The provided HTTP error code (418) is not valid. Valid codes are 4XX or 5XX."},
		{types.WebsiteConfiguration{IndexDocument: idx, RoutingRules: many}, "InvalidRequest",
			"51 routing rules provided, the number of routing rules in a website configuration is limited to 50."},
		{types.WebsiteConfiguration{IndexDocument: idx, RoutingRules: long}, "MaxMessageLengthExceeded", "Your request was too big."},
	} {
		_, err := c.PutBucketWebsite(ctx, &s3.PutBucketWebsiteInput{Bucket: aws.String("bkt"), WebsiteConfiguration: &tc.cfg})
		if err := wantAPIErr(err, tc.code, tc.msg); err != nil {
			t.Errorf("case %d: %v", i, err)
		}
	}
	if len(fw.docs) != 0 {
		t.Fatalf("a refused configuration reached the store: %q", fw.docs)
	}

	_, err := c.GetBucketWebsite(ctx, &s3.GetBucketWebsiteInput{Bucket: aws.String("bkt")})
	if err := wantAPIErr(err, "NoSuchWebsiteConfiguration", "The specified bucket does not have a website configuration"); err != nil {
		t.Fatalf("GET before PUT: %v", err)
	}
	_, err = c.PutBucketWebsite(ctx, &s3.PutBucketWebsiteInput{Bucket: aws.String("missing"), WebsiteConfiguration: &types.WebsiteConfiguration{IndexDocument: idx}})
	if err := wantAPIErr(err, "NoSuchBucket", "The specified bucket does not exist."); err != nil {
		t.Fatal(err)
	}
	_, err = c.PutBucketWebsite(ctx, &s3.PutBucketWebsiteInput{Bucket: aws.String("bkt"), WebsiteConfiguration: &types.WebsiteConfiguration{
		IndexDocument: idx, ErrorDocument: &types.ErrorDocument{Key: aws.String("err.html")},
		RoutingRules: []types.RoutingRule{{Condition: &types.Condition{HttpErrorCodeReturnedEquals: aws.String("404")},
			Redirect: &types.Redirect{HostName: aws.String("e.com"), HttpRedirectCode: aws.String("301"), Protocol: types.ProtocolHttps}}}}})
	if err != nil {
		t.Fatal(err)
	}
	got, err := c.GetBucketWebsite(ctx, &s3.GetBucketWebsiteInput{Bucket: aws.String("bkt")})
	if err != nil || aws.ToString(got.IndexDocument.Suffix) != "index.html" || aws.ToString(got.ErrorDocument.Key) != "err.html" ||
		len(got.RoutingRules) != 1 || got.RoutingRules[0].Redirect.Protocol != types.ProtocolHttps ||
		aws.ToString(got.RoutingRules[0].Condition.HttpErrorCodeReturnedEquals) != "404" {
		t.Fatalf("read back %+v, %v", got, err)
	}
	if _, err := c.DeleteBucketWebsite(ctx, &s3.DeleteBucketWebsiteInput{Bucket: aws.String("bkt")}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.GetBucketWebsite(ctx, &s3.GetBucketWebsiteInput{Bucket: aws.String("bkt")}); apiCode(err) != "NoSuchWebsiteConfiguration" {
		t.Fatalf("GET after DELETE: %v", err)
	}
}
