package s3api

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/aws/smithy-go"

	"github.com/s3seal/s3seal/s3api/s3err"
	"github.com/s3seal/s3seal/sealstore"
)

// A store's refusal of a setting reaches the client with its code, and
// with its words only when they are about the request: never words that
// name the store's own identity (its IAM role, account), nor the words
// of a code s3seal does not know.
func TestStoreRefusalKeepsTheStoresIdentity(t *testing.T) {
	for _, c := range []struct {
		refusal  sealstore.StoreError
		wantCode string
		wantMsg  string // "" for any that names no identity
	}{
		{sealstore.StoreError{Code: "AccessDeniedException", StatusCode: 400,
			Message: "User: arn:aws:iam::999988887777:role/s3seal-backend is not authorized to perform: s3:PutObjectTagging"}, "AccessDeniedException", ""},
		{sealstore.StoreError{Code: "InvalidArgument", StatusCode: 400, Message: "account 999988887777 may not tag here"}, "InvalidArgument", ""},
		{sealstore.StoreError{Code: "InvalidTag", StatusCode: 400, Message: "The TagValue you have provided is too long"}, "InvalidTag", "The TagValue you have provided is too long"},
	} {
		f := newFakeStore()
		f.putErr = &c.refusal
		url := fakeServer(t, f, lockCreds())
		_, err := sdkClient(url, "admin", "as").PutObjectTagging(context.Background(), &s3.PutObjectTaggingInput{Bucket: aws.String("bkt"), Key: aws.String("k"),
			Tagging: &types.Tagging{TagSet: []types.Tag{{Key: aws.String("a"), Value: aws.String("b")}}}})
		var ae smithy.APIError
		if !errors.As(err, &ae) || ae.ErrorCode() != c.wantCode {
			t.Errorf("store refused with %s: client got %v, want code %s", c.refusal.Code, err, c.wantCode)
			continue
		}
		msg := ae.ErrorMessage()
		if strings.Contains(msg, "999988887777") || strings.Contains(msg, "arn:") {
			t.Errorf("store refused with %s: the client read the store's identity: %q", c.refusal.Code, msg)
		}
		if c.wantMsg != "" && msg != c.wantMsg {
			t.Errorf("store refused with %s: message %q, want the store's %q", c.refusal.Code, msg, c.wantMsg)
		}
	}
}

// The same holds for a store's words on any operation: the codes whose
// words pass (InvalidArgument, KeyTooLongError, NotImplemented, and the
// lock refusals) lose them when they name the store's identity.
func TestStoreWordsOnAnyOperationKeepTheStoresIdentity(t *testing.T) {
	for _, code := range []string{"InvalidArgument", "KeyTooLongError", "NotImplemented"} {
		status := 400
		if code == "NotImplemented" {
			status = 501
		}
		be := &sealstore.StoreError{Code: code, StatusCode: status, Message: "User: arn:aws:iam::999988887777:role/s3seal may not"}
		answers := map[string]*s3err.Error{"fromBackend": toAPIError(be)}
		if lr := lockRefusal(be); lr != nil {
			answers["lockRefusal"] = lr
		}
		for name, ae := range answers {
			if strings.Contains(ae.Message, "999988887777") || strings.Contains(ae.Message, "arn:") {
				t.Errorf("%s of %s: the client reads %q", name, code, ae.Message)
			}
		}
	}
}
