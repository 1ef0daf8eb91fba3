package s3api

import (
	"bytes"
	"context"
	"crypto/md5"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"io"
	"net/http"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"

	"github.com/s3seal/s3seal/backend"
	"github.com/s3seal/s3seal/checksum"
)

var allAttributes = []types.ObjectAttributes{types.ObjectAttributesEtag, types.ObjectAttributesChecksum,
	types.ObjectAttributesObjectParts, types.ObjectAttributesStorageClass, types.ObjectAttributesObjectSize}

// TestGetObjectAttributes: plaintext size, ETag and checksum of a
// single-part object (no ObjectParts); of a multipart object its parts
// with sizes and per-part checksums, paged by max-parts and
// part-number-marker, the composite checksum without "-N" and its type;
// only the attributes asked for; S3's errors for a bad or missing
// attribute list and a missing key.
func TestGetObjectAttributes(t *testing.T) {
	url, ctx, c := newBucketServer(t, SingleCredential("ak", "sk"))
	b := aws.String("bkt")
	data := []byte("attributes of a sealed object")
	put, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: b, Key: aws.String("single"), Body: bytes.NewReader(data),
		ChecksumAlgorithm: types.ChecksumAlgorithmSha256})
	if err != nil {
		t.Fatal(err)
	}
	a, err := c.GetObjectAttributes(ctx, &s3.GetObjectAttributesInput{Bucket: b, Key: aws.String("single"), ObjectAttributes: allAttributes})
	if err != nil {
		t.Fatal(err)
	}
	if aws.ToInt64(a.ObjectSize) != int64(len(data)) || `"`+aws.ToString(a.ETag)+`"` != aws.ToString(put.ETag) ||
		a.StorageClass != types.StorageClassStandard || a.ObjectParts != nil || a.LastModified == nil {
		t.Fatalf("single: size %d etag %q (PUT %q) class %q parts %+v", aws.ToInt64(a.ObjectSize), aws.ToString(a.ETag), aws.ToString(put.ETag), a.StorageClass, a.ObjectParts)
	}
	if a.Checksum == nil || aws.ToString(a.Checksum.ChecksumSHA256) != b64sum(checksum.SHA256, data) || a.Checksum.ChecksumType != types.ChecksumTypeFullObject {
		t.Fatalf("single checksum %+v", a.Checksum)
	}
	// Only what is asked for.
	a, err = c.GetObjectAttributes(ctx, &s3.GetObjectAttributesInput{Bucket: b, Key: aws.String("single"),
		ObjectAttributes: []types.ObjectAttributes{types.ObjectAttributesObjectSize}})
	if err != nil || aws.ToInt64(a.ObjectSize) != int64(len(data)) || a.ETag != nil || a.Checksum != nil || a.StorageClass != "" {
		t.Fatalf("ObjectSize only: %+v, %v", a, err)
	}

	// A multipart object with XXHASH64 part checksums.
	key := aws.String("multi")
	cr, err := c.CreateMultipartUpload(ctx, &s3.CreateMultipartUploadInput{Bucket: b, Key: key, ChecksumAlgorithm: types.ChecksumAlgorithmXxhash64})
	if err != nil {
		t.Fatal(err)
	}
	parts := [][]byte{bytes.Repeat([]byte("1"), 5<<20), bytes.Repeat([]byte("2"), 5<<20), []byte("three")}
	var done []types.CompletedPart
	var raw []byte
	for i, p := range parts {
		sum := b64sum(checksum.XXHASH64, p)
		out, err := c.UploadPart(ctx, &s3.UploadPartInput{Bucket: b, Key: key, UploadId: cr.UploadId, PartNumber: aws.Int32(int32(i + 1)),
			Body: bytes.NewReader(p), ChecksumXXHASH64: aws.String(sum)})
		if err != nil {
			t.Fatal(err)
		}
		done = append(done, types.CompletedPart{PartNumber: aws.Int32(int32(i + 1)), ETag: out.ETag, ChecksumXXHASH64: aws.String(sum)})
		h := checksum.NewHasher(checksum.XXHASH64)
		h.Write(p)
		raw = append(raw, h.Sum()...)
	}
	comp, err := c.CompleteMultipartUpload(ctx, &s3.CompleteMultipartUploadInput{Bucket: b, Key: key, UploadId: cr.UploadId,
		MultipartUpload: &types.CompletedMultipartUpload{Parts: done}})
	if err != nil {
		t.Fatal(err)
	}
	composite := b64sum(checksum.XXHASH64, raw)
	if aws.ToString(comp.ChecksumXXHASH64) != composite+"-3" {
		t.Fatalf("complete: %q, want %q", aws.ToString(comp.ChecksumXXHASH64), composite+"-3")
	}
	a, err = c.GetObjectAttributes(ctx, &s3.GetObjectAttributesInput{Bucket: b, Key: key, ObjectAttributes: allAttributes, MaxParts: aws.Int32(2)})
	if err != nil {
		t.Fatal(err)
	}
	if aws.ToInt64(a.ObjectSize) != 10<<20+5 || `"`+aws.ToString(a.ETag)+`"` != aws.ToString(comp.ETag) ||
		a.Checksum == nil || aws.ToString(a.Checksum.ChecksumXXHASH64) != composite || a.Checksum.ChecksumType != types.ChecksumTypeComposite {
		t.Fatalf("multi: size %d etag %q checksum %+v", aws.ToInt64(a.ObjectSize), aws.ToString(a.ETag), a.Checksum)
	}
	op := a.ObjectParts
	if op == nil || aws.ToInt32(op.TotalPartsCount) != 3 || !aws.ToBool(op.IsTruncated) || aws.ToInt32(op.MaxParts) != 2 ||
		aws.ToString(op.NextPartNumberMarker) != "2" || len(op.Parts) != 2 {
		t.Fatalf("parts page 1: %+v", op)
	}
	for i, p := range op.Parts {
		if aws.ToInt32(p.PartNumber) != int32(i+1) || aws.ToInt64(p.Size) != int64(len(parts[i])) || aws.ToString(p.ChecksumXXHASH64) != b64sum(checksum.XXHASH64, parts[i]) {
			t.Fatalf("part %d: %+v", i+1, p)
		}
	}
	a, err = c.GetObjectAttributes(ctx, &s3.GetObjectAttributesInput{Bucket: b, Key: key, ObjectAttributes: allAttributes,
		MaxParts: aws.Int32(2), PartNumberMarker: aws.String("2")})
	if err != nil {
		t.Fatal(err)
	}
	if op = a.ObjectParts; aws.ToBool(op.IsTruncated) || len(op.Parts) != 1 || aws.ToInt32(op.Parts[0].PartNumber) != 3 ||
		aws.ToInt64(op.Parts[0].Size) != 5 || aws.ToString(op.PartNumberMarker) != "2" {
		t.Fatalf("parts page 2: %+v", op)
	}

	// The XML as S3 sends it: root GetObjectAttributesResponse, the ETag
	// unquoted, nothing not asked for.
	req, _ := http.NewRequest(http.MethodGet, url+"/bkt/single?attributes", nil)
	req.Header.Set("X-Amz-Object-Attributes", "ETag,ObjectSize")
	signAt(t, req, hexSHA(nil), time.Now())
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	xmlBody, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	wantXML := `<GetObjectAttributesResponse xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><ETag>` +
		strings.Trim(aws.ToString(put.ETag), `"`) + `</ETag><ObjectSize>29</ObjectSize></GetObjectAttributesResponse>`
	if resp.StatusCode != 200 || !strings.HasSuffix(strings.TrimSpace(string(xmlBody)), wantXML) || resp.Header.Get("Last-Modified") == "" {
		t.Fatalf("raw answer %d %s, want ...%s", resp.StatusCode, xmlBody, wantXML)
	}

	// Errors.
	_, err = c.GetObjectAttributes(ctx, &s3.GetObjectAttributesInput{Bucket: b, Key: aws.String("nope"), ObjectAttributes: allAttributes})
	if apiCode(err) != "NoSuchKey" {
		t.Fatalf("missing key: %v", err)
	}
	// A missing header is InvalidRequest, an unknown name InvalidArgument,
	// as AWS answers them.
	for hdr, code := range map[string]string{"": "InvalidRequest", "ETag,Bogus": "InvalidArgument"} {
		req, _ := http.NewRequest(http.MethodGet, url+"/bkt/single?attributes", nil)
		if hdr != "" {
			req.Header.Set("X-Amz-Object-Attributes", hdr)
		}
		signAt(t, req, hexSHA(nil), time.Now())
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 400 || !strings.Contains(string(body), "<Code>"+code+"</Code>") {
			t.Fatalf("attributes %q: %d %s", hdr, resp.StatusCode, body)
		}
	}
}

// TestGetObjectAttributesByVersion: GetObjectAttributes reads a version
// as HEAD does: versionId=null is the object of an unversioned bucket (and
// named so), an unknown version id is 404, not 501, and an empty one is
// InvalidArgument (the embedded store, as S3, also refuses a malformed one).
func TestGetObjectAttributesByVersion(t *testing.T) {
	_, ctx, c := newBucketServer(t, SingleCredential("ak", "sk"))
	b, k := aws.String("bkt"), aws.String("k")
	if err := put(ctx, c, "bkt", "k"); err != nil {
		t.Fatal(err)
	}
	attrs := []types.ObjectAttributes{types.ObjectAttributesObjectSize}
	a, err := c.GetObjectAttributes(ctx, &s3.GetObjectAttributesInput{Bucket: b, Key: k, VersionId: aws.String("null"), ObjectAttributes: attrs})
	if err != nil || aws.ToInt64(a.ObjectSize) != 4 {
		t.Fatalf("versionId=null: %+v, %v", a, err)
	}
	h, err := c.HeadObject(ctx, &s3.HeadObjectInput{Bucket: b, Key: k, VersionId: aws.String("null")})
	if err != nil || aws.ToString(a.VersionId) != aws.ToString(h.VersionId) {
		t.Fatalf("versionId=null: attributes name version %q, HEAD %q (%v)", aws.ToString(a.VersionId), aws.ToString(h.VersionId), err)
	}
	_, err = c.GetObjectAttributes(ctx, &s3.GetObjectAttributesInput{Bucket: b, Key: k, VersionId: aws.String("0123456789abcdef0123456789abcdef"), ObjectAttributes: attrs})
	if httpStatus(err) != http.StatusNotFound {
		t.Fatalf("unknown version: %v, want 404 as HEAD gives", err)
	}
	_, err = c.GetObjectAttributes(ctx, &s3.GetObjectAttributesInput{Bucket: b, Key: k, VersionId: aws.String(""), ObjectAttributes: attrs})
	if apiCode(err) != "InvalidArgument" || httpStatus(err) != http.StatusBadRequest {
		t.Fatalf("empty version id: %v, want 400 InvalidArgument", err)
	}
}

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

// GetObjectAttributes checks the customer key against the very version it
// describes, in one backend read (sealstore.Store.Attributes): when the
// key is overwritten by an object without a customer key between two
// reads, the SSE-C object's ETag, size and plaintext SHA-256 do not reach
// a client that never sent its key.
func TestAttributesOfSSECObjectNeedItsKey(t *testing.T) {
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

// ObjectParts shows one checksum per part, as S3 does: the object's
// algorithm's when the object has a checksum; else (parts recorded by an
// s3seal from before the default CRC64NVME) the client's alone, without
// s3seal's own CRC64NVME beside it.
func TestObjectPartChecksums(t *testing.T) {
	both := map[string]string{"crc32": "AAAAAA==", "crc64nvme": "BBBBBBBBBBB="}
	for _, tc := range []struct {
		name         string
		object, part map[string]string
		want         map[string]string
	}{
		{"default object", map[string]string{"crc64nvme": "X"}, both, map[string]string{"crc64nvme": "BBBBBBBBBBB="}},
		{"composite object", map[string]string{"crc32": "Y-2"}, both, map[string]string{"crc32": "AAAAAA=="}},
		{"no object checksum, part with two", nil, both, map[string]string{"crc32": "AAAAAA=="}},
		{"no object checksum, old record", nil, map[string]string{"crc32": "AAAAAA=="}, map[string]string{"crc32": "AAAAAA=="}},
		{"no object checksum, part with s3seal's alone", nil, map[string]string{"crc64nvme": "BBBBBBBBBBB="}, map[string]string{"crc64nvme": "BBBBBBBBBBB="}},
		{"no object checksum, part without", nil, nil, nil},
	} {
		if got := objectPartChecksums(tc.object, tc.part); len(got)+len(tc.want) > 0 && !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}
