package s3api

// Review s11b (SSE-C / SSE-KMS). These tests proved findings against the
// code before their fixes; they now assert the fixed behaviour.

import (
	"bytes"
	"context"
	"crypto/md5"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"

	"github.com/s3seal/s3seal/backend"
)

// headHook runs hook once, after the first HEAD of key that follows arm,
// before that HEAD's answer is returned: a write by another client that
// lands between two backend reads of one request.
type headHook struct {
	backend.Store
	key   string
	armed atomic.Bool
	hook  func()
}

func (h *headHook) HeadObject(ctx context.Context, bucket, key string) (backend.ObjectInfo, error) {
	bi, err := h.Store.HeadObject(ctx, bucket, key)
	// CompareAndSwap, not sync.Once: the hook's own PUT HEADs the key too.
	if key == h.key && h.armed.CompareAndSwap(true, false) {
		h.hook()
	}
	return bi, err
}

func ssecKey(b byte) (key, md5sum string) {
	raw := bytes.Repeat([]byte{b}, 32)
	sum := md5.Sum(raw)
	return base64.StdEncoding.EncodeToString(raw), base64.StdEncoding.EncodeToString(sum[:])
}

// TestReviewS11bAttributesOfSSECObjectWithoutKey (regression; fixed by
// checking the customer key against the very version described, in one
// backend read: sealstore.Store.Attributes).
// GetObjectAttributes reads the object's description with one backend
// HEAD (store.Attributes) and checks the customer key with a second one
// (store.Stat). When the key is overwritten by an object without a
// customer key between the two, the answer gives the SSE-C object's ETag,
// size and plaintext SHA-256 to a client that never sent its key.
func TestReviewS11bAttributesOfSSECObjectWithoutKey(t *testing.T) {
	var hh *headHook
	srv := newTestServerOver(t, Config{Credentials: SingleCredential("ak", "sk")}, func(s backend.Store) backend.Store {
		hh = &headHook{Store: s, key: "secret"}
		return hh
	})
	ctx := context.Background()
	c := sdkClient(srv.URL, "ak", "sk")
	b := aws.String("bkt")
	if _, err := c.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: b}); err != nil {
		t.Fatal(err)
	}
	secret := []byte("the victim's secret content, sealed with its customer key")
	key, keyMD5 := ssecKey(7)
	if _, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: b, Key: aws.String("secret"), Body: bytes.NewReader(secret),
		SSECustomerAlgorithm: aws.String("AES256"), SSECustomerKey: aws.String(key), SSECustomerKeyMD5: aws.String(keyMD5),
		ChecksumAlgorithm: types.ChecksumAlgorithmSha256}); err != nil {
		t.Fatal(err)
	}
	// Without the race, the attributes are refused without the key.
	if _, err := c.GetObjectAttributes(ctx, &s3.GetObjectAttributesInput{Bucket: b, Key: aws.String("secret"),
		ObjectAttributes: []types.ObjectAttributes{types.ObjectAttributesEtag}}); apiCode(err) != "InvalidRequest" {
		t.Fatalf("attributes without the key: %v", err)
	}
	// The attacker's own write lands between the two HEADs.
	hh.hook = func() {
		if _, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: b, Key: aws.String("secret"), Body: strings.NewReader("mine")}); err != nil {
			t.Errorf("attacker put: %v", err)
		}
	}
	hh.armed.Store(true)
	out, err := c.GetObjectAttributes(ctx, &s3.GetObjectAttributesInput{Bucket: b, Key: aws.String("secret"),
		ObjectAttributes: []types.ObjectAttributes{types.ObjectAttributesEtag, types.ObjectAttributesObjectSize, types.ObjectAttributesChecksum}})
	if err != nil {
		// The SSE-C object was described (the first HEAD) without its key.
		if apiCode(err) != "InvalidRequest" {
			t.Errorf("refused with %v, want InvalidRequest", err)
		}
		return
	}
	sum := md5.Sum(secret)
	sha := sha256.Sum256(secret)
	wantETag, wantSHA := fmt.Sprintf("%x", sum), base64.StdEncoding.EncodeToString(sha[:])
	var gotSHA string
	if out.Checksum != nil {
		gotSHA = aws.ToString(out.Checksum.ChecksumSHA256)
	}
	t.Logf("answer without a customer key: ETag %s, size %d, SHA-256 %s", aws.ToString(out.ETag), aws.ToInt64(out.ObjectSize), gotSHA)
	if aws.ToString(out.ETag) == wantETag || gotSHA == wantSHA || aws.ToInt64(out.ObjectSize) == int64(len(secret)) {
		t.Errorf("GetObjectAttributes without the customer key described the SSE-C object (ETag %v, SHA-256 %v, size %v)",
			aws.ToString(out.ETag) == wantETag, gotSHA == wantSHA, aws.ToInt64(out.ObjectSize) == int64(len(secret)))
	}
}

// TestReviewS11bOversizedKMSValuesAre500 (regression; fixed by bounding
// the SSE-KMS values in s3api, checkKMSValues, and answering a store's
// size refusals with the client's 4xx, sizeRefusal). An SSE-KMS key
// id or encryption context the store cannot take (too large for its
// metadata or headers) is the client's bad input, but s3seal answers 500
// InternalError ("The object store refused the request
// (MetadataTooLarge)"): a retryable server error that SDKs retry, for a
// request that can never succeed. S3 answers such input with a 4xx.
func TestReviewS11bOversizedKMSValuesAre500(t *testing.T) {
	srv := newTestServerOver(t, Config{Credentials: SingleCredential("ak", "sk")}, nil)
	ctx := context.Background()
	c := sdkClient(srv.URL, "ak", "sk")
	b := aws.String("bkt")
	if _, err := c.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: b}); err != nil {
		t.Fatal(err)
	}
	for name, in := range map[string]*s3.PutObjectInput{
		"key id 6000 bytes": {SSEKMSKeyId: aws.String(strings.Repeat("k", 6000))},
		"context 80 KiB":    {SSEKMSEncryptionContext: aws.String(base64.StdEncoding.EncodeToString([]byte(`{"a":"` + strings.Repeat("a", 60000) + `"}`)))},
	} {
		in.Bucket, in.Key, in.Body, in.ServerSideEncryption = b, aws.String("k"), strings.NewReader("x"), types.ServerSideEncryptionAwsKms
		_, err := c.PutObject(ctx, in)
		var status int
		var re interface{ HTTPStatusCode() int }
		if errors.As(err, &re) {
			status = re.HTTPStatusCode()
		}
		t.Logf("%s: %d %v", name, status, err)
		if status >= 500 {
			t.Errorf("%s: %d %s, want a 4xx client error", name, status, apiCode(err))
		}
	}
}
