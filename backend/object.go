package backend

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	smithyhttp "github.com/aws/smithy-go/transport/http"
)

// maxDeleteKeys is the S3 limit on keys in one DeleteObjects request.
const maxDeleteKeys = 1000

// PutObject uploads in.Body (exactly in.Size bytes) with Content-Length and,
// when given, Content-MD5 and x-amz-checksum-crc32c. The payload is signed
// as UNSIGNED-PAYLOAD, so the body is read once per attempt and never
// hashed with SHA-256; integrity in transit rests on those checksums and
// TLS. The body is rewound to offset 0 first, and
// the SDK's retryer rewinds it again before each new attempt; a Once body
// is sent as it comes, once, without either. Headers.Expires
// is sent verbatim, even if it is not a valid HTTP date. IfMatch and
// IfNoneMatch become the If-Match and If-None-Match headers, so the backend
// decides the condition atomically.
func (c *S3) PutObject(ctx context.Context, in PutInput) (PutOutput, error) {
	if in.Size < 0 {
		return PutOutput{}, fmt.Errorf("backend: PutObject %q: negative size %d", in.Key, in.Size)
	}
	input := &s3.PutObjectInput{
		Bucket:             &in.Bucket,
		Key:                &in.Key,
		ContentLength:      aws.Int64(in.Size),
		Metadata:           in.Meta,
		ContentMD5:         optString(in.ContentMD5),
		ContentType:        optString(in.Headers.ContentType),
		CacheControl:       optString(in.Headers.CacheControl),
		ContentDisposition: optString(in.Headers.ContentDisposition),
		ContentEncoding:    optString(in.Headers.ContentEncoding),
		ContentLanguage:    optString(in.Headers.ContentLanguage),
	}
	setClassAndRedirect(in.Headers, &input.StorageClass, &input.WebsiteRedirectLocation)
	setSSE(in.Headers, &input.ServerSideEncryption, &input.SSEKMSKeyId, &input.SSEKMSEncryptionContext, &input.BucketKeyEnabled)
	if in.IfMatch != "" {
		input.IfMatch = aws.String(`"` + unquote(in.IfMatch) + `"`)
	}
	if in.IfNoneMatch {
		input.IfNoneMatch = aws.String("*")
	}
	protectPut(input, in.Protect)
	apiOpts := []func(*s3.Options){
		s3.WithAPIOptions(v4.SwapComputePayloadSHA256ForUnsignedPayloadMiddleware),
	}
	if in.Headers.Expires != "" {
		// The modelled Expires member is a time.Time; S3 keeps the raw
		// string, so set the header itself.
		apiOpts = append(apiOpts, s3.WithAPIOptions(smithyhttp.SetHeaderValue("Expires", in.Headers.Expires)))
	}
	if once, ok := in.Body.(*Once); ok {
		// The SDK gets a reader it cannot rewind, and so sends it as it is.
		input.Body = once.sdkBody()
		out, err := c.api.PutObject(ctx, input, apiOpts...)
		return putOutput(out, err)
	}
	if in.ContentMD5 == "" && in.Body != nil && in.Size <= smallBodyMD5 {
		// Stores refuse PUTs without Content-MD5 (or a checksum) into
		// buckets with Object Lock, default retention included; s3seal's
		// own small objects (upload state, part records, manifests) may
		// land in such a bucket. They cost nothing to hash.
		md5, err := bodyMD5(in.Body)
		if err != nil {
			return PutOutput{}, &Error{Op: "PutObject", Err: err}
		}
		input.ContentMD5 = &md5
	}
	if in.Body != nil {
		if _, err := in.Body.Seek(0, io.SeekStart); err != nil {
			return PutOutput{}, &Error{Op: "PutObject", Err: fmt.Errorf("rewind body: %w", err)}
		}
		input.Body = in.Body
	}
	if in.Body != nil {
		input.ChecksumCRC32C = optString(in.ContentCRC32C)
	}
	out, err := sendChecked(c, "PutObject", &input.ChecksumCRC32C, &input.ContentMD5, in.Body, func() (*s3.PutObjectOutput, error) {
		return c.api.PutObject(ctx, input, apiOpts...)
	}, func(o *s3.PutObjectOutput) *string { return o.ChecksumCRC32C })
	if md5, ok := md5Wanted(err, input.ContentMD5, in.Body); ok {
		input.ContentMD5 = &md5
		out, err = c.api.PutObject(ctx, input, apiOpts...)
	}
	return putOutput(out, err)
}

func putOutput(out *s3.PutObjectOutput, err error) (PutOutput, error) {
	if err != nil {
		return PutOutput{}, wrapErr("PutObject", err)
	}
	return PutOutput{ETag: unquote(aws.ToString(out.ETag)), VersionID: aws.ToString(out.VersionId),
		SSE: string(out.ServerSideEncryption), SSEKMSKeyID: aws.ToString(out.SSEKMSKeyId), SSEBucketKey: aws.ToBool(out.BucketKeyEnabled)}, nil
}

// GetObject fetches the object, or with in.Range the bytes
// [Off, Off+Len) as "Range: bytes=Off-(Off+Len-1)". Info.Size is always the
// size of the whole object (taken from Content-Range for a ranged read). A
// range starting past the end fails with the backend's InvalidRange; an
// IfMatch mismatch with PreconditionFailed.
func (c *S3) GetObject(ctx context.Context, in GetInput) (*Object, error) {
	vid, err := c.versionParam("GetObject", in.VersionID)
	if err != nil {
		return nil, err
	}
	input := &s3.GetObjectInput{Bucket: &in.Bucket, Key: &in.Key, VersionId: vid}
	if r := in.Range; r != nil {
		if r.Off < 0 || r.Len <= 0 {
			return nil, fmt.Errorf("backend: GetObject %q: invalid range off=%d len=%d", in.Key, r.Off, r.Len)
		}
		input.Range = aws.String(fmt.Sprintf("bytes=%d-%d", r.Off, r.Off+r.Len-1))
	}
	if in.IfMatch != "" {
		input.IfMatch = aws.String(`"` + unquote(in.IfMatch) + `"`)
	}
	out, err := c.api.GetObject(ctx, input)
	if err != nil {
		return nil, wrapErr("GetObject", err)
	}
	info := objectInfo(in.Key, out.ContentLength, out.ETag, out.LastModified, out.StorageClass, out.Metadata,
		stdHeaders(out.ContentType, out.CacheControl, out.ContentDisposition, out.ContentEncoding, out.ContentLanguage, out.ExpiresString))
	info.TagCount, info.Lock = int(aws.ToInt32(out.TagCount)), lockOf(out.ObjectLockMode, out.ObjectLockRetainUntilDate, out.ObjectLockLegalHoldStatus)
	info.Headers.WebsiteRedirectLocation = aws.ToString(out.WebsiteRedirectLocation)
	readSSE(&info.Headers, out.ServerSideEncryption, out.SSEKMSKeyId, out.BucketKeyEnabled)
	info.VersionID = aws.ToString(out.VersionId)
	body := io.ReadCloser(cutBody{out.Body, "GetObject"})
	if out.ContentLength == nil && in.Range == nil {
		// An answer without a length (a gateway that re-chunks it): the
		// object's size comes from a HEAD of the same version, never 0.
		hi, err := c.HeadObjectVersion(ctx, in.Bucket, in.Key, info.VersionID)
		if err != nil || unquote(hi.ETag) != unquote(info.ETag) {
			out.Body.Close()
			return nil, &Error{Op: "GetObject", Err: fmt.Errorf("the store's answer carries no length, and a HEAD could not give it: %v", err)}
		}
		info.Size = hi.Size
	}
	if cr := aws.ToString(out.ContentRange); cr != "" {
		total, err := rangeTotal(cr)
		if err == nil && in.Range != nil {
			err = rangeStarts(cr, in.Range.Off)
		}
		if err != nil {
			out.Body.Close()
			return nil, &Error{Op: "GetObject", Err: err}
		}
		info.Size = total
	} else if r := in.Range; r != nil {
		// The store ignored the range and sent the whole object (some do):
		// its bytes from the range's start, never its first ones as the
		// range.
		if _, err := io.CopyN(io.Discard, body, r.Off); err != nil {
			out.Body.Close()
			return nil, &Error{Op: "GetObject", Err: fmt.Errorf("skipping to a range the store ignored: %w", err)}
		}
		body = struct {
			io.Reader
			io.Closer
		}{io.LimitReader(body, r.Len), out.Body}
	}
	return &Object{Info: info, Body: body}, nil
}

// HeadObject reads an object's size, ETag, metadata and headers. A missing
// object (or bucket) fails with Code "NotFound": HEAD answers carry no body.
func (c *S3) HeadObject(ctx context.Context, bucket, key string) (ObjectInfo, error) {
	return c.HeadObjectVersion(ctx, bucket, key, "")
}

// HeadObjectVersion is HeadObject of one version (the current one when
// versionID is "").
func (c *S3) HeadObjectVersion(ctx context.Context, bucket, key, versionID string) (ObjectInfo, error) {
	vid, err := c.versionParam("HeadObject", versionID)
	if err != nil {
		return ObjectInfo{}, err
	}
	out, err := c.api.HeadObject(ctx, &s3.HeadObjectInput{Bucket: &bucket, Key: &key, VersionId: vid})
	if err != nil {
		return ObjectInfo{}, wrapErr("HeadObject", err)
	}
	info := objectInfo(key, out.ContentLength, out.ETag, out.LastModified, out.StorageClass, out.Metadata,
		stdHeaders(out.ContentType, out.CacheControl, out.ContentDisposition, out.ContentEncoding, out.ContentLanguage, out.ExpiresString))
	info.TagCount, info.Lock = int(aws.ToInt32(out.TagCount)), lockOf(out.ObjectLockMode, out.ObjectLockRetainUntilDate, out.ObjectLockLegalHoldStatus)
	info.Headers.WebsiteRedirectLocation = aws.ToString(out.WebsiteRedirectLocation)
	readSSE(&info.Headers, out.ServerSideEncryption, out.SSEKMSKeyId, out.BucketKeyEnabled)
	info.VersionID = aws.ToString(out.VersionId)
	return info, nil
}

// objectInfo builds the description GET and HEAD answers share.
func objectInfo(key string, size *int64, etag *string, lm *time.Time, sc types.StorageClass, meta map[string]string, h Headers) ObjectInfo {
	h.StorageClass = string(sc)
	return ObjectInfo{
		Key:          key,
		Size:         aws.ToInt64(size),
		ETag:         unquote(aws.ToString(etag)),
		LastModified: timeOrZero(lm),
		StorageClass: string(sc),
		Meta:         lowerKeys(meta),
		Headers:      h,
	}
}

// setClassAndRedirect sets a request's StorageClass and
// WebsiteRedirectLocation from h, when given.
func setClassAndRedirect(h Headers, class *types.StorageClass, redirect **string) {
	if h.StorageClass != "" {
		*class = types.StorageClass(h.StorageClass)
	}
	*redirect = optString(h.WebsiteRedirectLocation)
}

// stdHeaders collects the standard headers of a GET or HEAD answer.
func stdHeaders(contentType, cacheControl, disposition, encoding, language, expires *string) Headers {
	return Headers{
		ContentType:        aws.ToString(contentType),
		CacheControl:       aws.ToString(cacheControl),
		ContentDisposition: aws.ToString(disposition),
		ContentEncoding:    aws.ToString(encoding),
		ContentLanguage:    aws.ToString(language),
		Expires:            aws.ToString(expires),
	}
}

// DeleteObject deletes one key. Deleting a missing key succeeds, as on S3.
func (c *S3) DeleteObject(ctx context.Context, bucket, key string) error {
	_, err := c.api.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: &bucket, Key: &key}, bypassHeader(ctx))
	return wrapErr("DeleteObject", err)
}

// DeleteObjects deletes up to 1000 keys in one non-quiet request and returns
// one result per distinct key, in the order given. The request carries
// Content-MD5 (older S3-compatible stores require it) besides the checksum
// the SDK adds. A key the backend did not mention comes back with Code
// "InternalError". More than 1000 keys is an error before any request.
func (c *S3) DeleteObjects(ctx context.Context, bucket string, keys []string) ([]DeleteResult, error) {
	if len(keys) == 0 {
		return nil, nil
	}
	if len(keys) > maxDeleteKeys {
		return nil, fmt.Errorf("backend: DeleteObjects: %d keys, at most %d allowed", len(keys), maxDeleteKeys)
	}
	objs := make([]types.ObjectIdentifier, len(keys))
	for i := range keys {
		objs[i] = types.ObjectIdentifier{Key: &keys[i]}
	}
	out, err := c.api.DeleteObjects(ctx, &s3.DeleteObjectsInput{
		Bucket: &bucket,
		Delete: &types.Delete{Objects: objs, Quiet: aws.Bool(false)},
	}, s3.WithAPIOptions(smithyhttp.AddContentChecksumMiddleware), bypassHeader(ctx))
	if err != nil {
		return nil, wrapErr("DeleteObjects", err)
	}
	got := make(map[string]DeleteResult, len(keys))
	for _, d := range out.Deleted {
		k := aws.ToString(d.Key)
		got[k] = DeleteResult{Key: k}
	}
	for _, e := range out.Errors {
		k := aws.ToString(e.Key)
		got[k] = DeleteResult{Key: k, Code: aws.ToString(e.Code), Message: aws.ToString(e.Message)}
	}
	res := make([]DeleteResult, 0, len(keys))
	seen := make(map[string]bool, len(keys))
	for _, k := range keys {
		if seen[k] {
			continue
		}
		seen[k] = true
		r, ok := got[k]
		if !ok {
			r = DeleteResult{Key: k, Code: "InternalError", Message: "backend did not report this key"}
		}
		res = append(res, r)
	}
	return res, nil
}

// rangeTotal extracts the complete length from "bytes a-b/total".
func rangeTotal(cr string) (int64, error) {
	i := strings.LastIndexByte(cr, '/')
	if i < 0 || cr[i+1:] == "*" {
		return 0, fmt.Errorf("unusable Content-Range %q", cr)
	}
	n, err := strconv.ParseInt(cr[i+1:], 10, 64)
	if err != nil {
		return 0, errors.Join(fmt.Errorf("unusable Content-Range %q", cr), err)
	}
	return n, nil
}

// rangeStarts checks that a Content-Range ("bytes START-END/TOTAL") starts
// at off: a store that answers another range than the one asked for would
// have its bytes served as the range.
func rangeStarts(cr string, off int64) error {
	var start, end int64
	var total string
	if _, err := fmt.Sscanf(cr, "bytes %d-%d/%s", &start, &end, &total); err != nil || start != off {
		return fmt.Errorf("the store answered range %q for one starting at byte %d", cr, off)
	}
	return nil
}

func optString(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

func unquote(etag string) string { return strings.Trim(etag, `"`) }

// lowerKeys returns m with lower-case keys (the SDK already lowers them;
// this keeps the ObjectInfo.Meta contract independent of that detail).
func lowerKeys(m map[string]string) map[string]string {
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[strings.ToLower(k)] = v
	}
	return out
}
