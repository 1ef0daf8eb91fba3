package backend

import (
	"context"
	"fmt"
	"io"
	"strconv"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	smithyhttp "github.com/aws/smithy-go/transport/http"
)

var _ Multipart = (*S3)(nil)

// CreateMultipartUpload starts an upload carrying in.Meta and in.Headers,
// sent as PutObject sends them (Expires verbatim).
func (c *S3) CreateMultipartUpload(ctx context.Context, in CreateMultipartInput) (string, error) {
	input := &s3.CreateMultipartUploadInput{
		Bucket:             &in.Bucket,
		Key:                &in.Key,
		Metadata:           in.Meta,
		ContentType:        optString(in.Headers.ContentType),
		CacheControl:       optString(in.Headers.CacheControl),
		ContentDisposition: optString(in.Headers.ContentDisposition),
		ContentEncoding:    optString(in.Headers.ContentEncoding),
		ContentLanguage:    optString(in.Headers.ContentLanguage),
	}
	protectCreate(input, in.Protect)
	setClassAndRedirect(in.Headers, &input.StorageClass, &input.WebsiteRedirectLocation)
	setSSE(in.Headers, &input.ServerSideEncryption, &input.SSEKMSKeyId, &input.SSEKMSEncryptionContext, &input.BucketKeyEnabled)
	var opts []func(*s3.Options)
	if in.Headers.Expires != "" {
		opts = append(opts, s3.WithAPIOptions(smithyhttp.SetHeaderValue("Expires", in.Headers.Expires)))
	}
	out, err := c.api.CreateMultipartUpload(ctx, input, opts...)
	if err != nil {
		return "", wrapErr("CreateMultipartUpload", err)
	}
	id := aws.ToString(out.UploadId)
	if id == "" {
		return "", &Error{Op: "CreateMultipartUpload", Err: fmt.Errorf("backend answered without an upload id")}
	}
	return id, nil
}

// UploadPart sends exactly in.Size bytes of in.Body, rewound to offset 0,
// with Content-Length and, when given, Content-MD5 and
// x-amz-checksum-crc32c; like PutObject the payload is UNSIGNED-PAYLOAD and
// the SDK adds no checksum of its own.
func (c *S3) UploadPart(ctx context.Context, in UploadPartInput) (string, error) {
	if in.Size < 0 {
		return "", fmt.Errorf("backend: UploadPart %q: negative size %d", in.Key, in.Size)
	}
	input := &s3.UploadPartInput{
		Bucket:        &in.Bucket,
		Key:           &in.Key,
		UploadId:      &in.UploadID,
		PartNumber:    aws.Int32(in.PartNumber),
		ContentLength: aws.Int64(in.Size),
		ContentMD5:    optString(in.ContentMD5),
	}
	if once, ok := in.Body.(*Once); ok {
		input.Body = once.sdkBody()
		out, err := c.api.UploadPart(ctx, input, s3.WithAPIOptions(v4.SwapComputePayloadSHA256ForUnsignedPayloadMiddleware))
		if err != nil {
			return "", wrapErr("UploadPart", err)
		}
		return unquote(aws.ToString(out.ETag)), nil
	}
	if in.Body != nil {
		if _, err := in.Body.Seek(0, io.SeekStart); err != nil {
			return "", &Error{Op: "UploadPart", Err: fmt.Errorf("rewind body: %w", err)}
		}
		input.Body = in.Body
	}
	if in.Body != nil {
		input.ChecksumCRC32C = optString(in.ContentCRC32C)
	}
	out, err := sendChecked(c, "UploadPart", &input.ChecksumCRC32C, &input.ContentMD5, in.Body, func() (*s3.UploadPartOutput, error) {
		return c.api.UploadPart(ctx, input,
			s3.WithAPIOptions(v4.SwapComputePayloadSHA256ForUnsignedPayloadMiddleware))
	}, func(o *s3.UploadPartOutput) *string { return o.ChecksumCRC32C })
	if md5, ok := md5Wanted(err, input.ContentMD5, in.Body); ok {
		input.ContentMD5 = &md5
		out, err = c.api.UploadPart(ctx, input,
			s3.WithAPIOptions(v4.SwapComputePayloadSHA256ForUnsignedPayloadMiddleware))
	}
	if err != nil {
		return "", wrapErr("UploadPart", err)
	}
	return unquote(aws.ToString(out.ETag)), nil
}

// CompleteMultipartUpload assembles in.Parts. IfMatch and IfNoneMatch are
// sent as given (an ETag is quoted). A 200 answer with an <Error> body
// comes back as that error (see error200.go).
func (c *S3) CompleteMultipartUpload(ctx context.Context, in CompleteMultipartInput) (CompleteMultipartOutput, error) {
	parts := make([]types.CompletedPart, len(in.Parts))
	for i, p := range in.Parts {
		parts[i] = types.CompletedPart{PartNumber: aws.Int32(p.PartNumber), ETag: aws.String(`"` + unquote(p.ETag) + `"`)}
	}
	input := &s3.CompleteMultipartUploadInput{
		Bucket:          &in.Bucket,
		Key:             &in.Key,
		UploadId:        &in.UploadID,
		MultipartUpload: &types.CompletedMultipartUpload{Parts: parts},
	}
	if in.IfMatch != "" {
		input.IfMatch = aws.String(quoteETag(in.IfMatch))
	}
	if in.IfNoneMatch != "" {
		input.IfNoneMatch = aws.String(quoteETag(in.IfNoneMatch))
	}
	out, err := withMD5Retry(func(o ...func(*s3.Options)) (*s3.CompleteMultipartUploadOutput, error) {
		return c.api.CompleteMultipartUpload(ctx, input, o...)
	}, xmlBodyMD5())
	if err != nil {
		return CompleteMultipartOutput{}, wrapErr("CompleteMultipartUpload", err)
	}
	return CompleteMultipartOutput{ETag: unquote(aws.ToString(out.ETag)), VersionID: aws.ToString(out.VersionId)}, nil
}

// quoteETag quotes an ETag for a conditional header; "*" stays bare.
func quoteETag(v string) string {
	if v == "*" {
		return v
	}
	return `"` + unquote(v) + `"`
}

// AbortMultipartUpload discards an upload and its parts.
func (c *S3) AbortMultipartUpload(ctx context.Context, bucket, key, uploadID string) error {
	_, err := c.api.AbortMultipartUpload(ctx, &s3.AbortMultipartUploadInput{Bucket: &bucket, Key: &key, UploadId: &uploadID})
	return wrapErr("AbortMultipartUpload", err)
}

// ListParts returns one page of the upload's parts.
func (c *S3) ListParts(ctx context.Context, in ListPartsInput) (ListPartsOutput, error) {
	input := &s3.ListPartsInput{Bucket: &in.Bucket, Key: &in.Key, UploadId: &in.UploadID}
	if in.Marker > 0 {
		input.PartNumberMarker = aws.String(strconv.Itoa(int(in.Marker)))
	}
	if in.MaxParts > 0 {
		input.MaxParts = aws.Int32(in.MaxParts)
	}
	out, err := c.api.ListParts(ctx, input)
	if err != nil {
		return ListPartsOutput{}, wrapErr("ListParts", err)
	}
	res := ListPartsOutput{IsTruncated: aws.ToBool(out.IsTruncated)}
	for _, p := range out.Parts {
		res.Parts = append(res.Parts, Part{
			PartNumber:   aws.ToInt32(p.PartNumber),
			ETag:         unquote(aws.ToString(p.ETag)),
			Size:         aws.ToInt64(p.Size),
			LastModified: timeOrZero(p.LastModified),
		})
	}
	if m := aws.ToString(out.NextPartNumberMarker); m != "" {
		n, err := strconv.ParseInt(m, 10, 32)
		if err != nil {
			return ListPartsOutput{}, &Error{Op: "ListParts", Err: fmt.Errorf("unusable NextPartNumberMarker %q", m)}
		}
		res.NextMarker = int32(n)
	}
	if res.IsTruncated && res.NextMarker == 0 && len(res.Parts) > 0 {
		res.NextMarker = res.Parts[len(res.Parts)-1].PartNumber
	}
	return res, nil
}

// ListMultipartUploads returns one page of the bucket's uploads in
// progress.
func (c *S3) ListMultipartUploads(ctx context.Context, in ListUploadsInput) (ListUploadsOutput, error) {
	input := &s3.ListMultipartUploadsInput{
		Bucket:         &in.Bucket,
		Prefix:         optString(in.Prefix),
		Delimiter:      optString(in.Delimiter),
		KeyMarker:      optString(in.KeyMarker),
		UploadIdMarker: optString(in.UploadIDMarker),
		EncodingType:   types.EncodingTypeUrl, // see ListObjects
	}
	if in.MaxUploads > 0 {
		input.MaxUploads = aws.Int32(in.MaxUploads)
	}
	out, err := c.api.ListMultipartUploads(ctx, input)
	if err != nil {
		return ListUploadsOutput{}, wrapErr("ListMultipartUploads", err)
	}
	dec := decoder(out.EncodingType)
	bad := func(err error) (ListUploadsOutput, error) {
		return ListUploadsOutput{}, &Error{Op: "ListMultipartUploads", Err: err}
	}
	res := ListUploadsOutput{
		IsTruncated:        aws.ToBool(out.IsTruncated),
		NextUploadIDMarker: aws.ToString(out.NextUploadIdMarker),
	}
	if res.NextKeyMarker, err = dec(aws.ToString(out.NextKeyMarker)); err != nil {
		return bad(err)
	}
	for _, u := range out.Uploads {
		key, err := dec(aws.ToString(u.Key))
		if err != nil {
			return bad(err)
		}
		res.Uploads = append(res.Uploads, Upload{Key: key, UploadID: aws.ToString(u.UploadId), Initiated: timeOrZero(u.Initiated),
			StorageClass: string(u.StorageClass)})
	}
	for _, p := range out.CommonPrefixes {
		prefix, err := dec(aws.ToString(p.Prefix))
		if err != nil {
			return bad(err)
		}
		res.CommonPrefixes = append(res.CommonPrefixes, prefix)
	}
	return res, nil
}

// UploadPartCopy copies bytes in.First..in.Last of the source object into
// part in.PartNumber (x-amz-copy-source with x-amz-copy-source-range and,
// with SrcIfMatch, x-amz-copy-source-if-match).
func (c *S3) UploadPartCopy(ctx context.Context, in UploadPartCopyInput) (string, error) {
	if in.First < 0 || in.Last < in.First {
		return "", fmt.Errorf("backend: UploadPartCopy %q: bad range %d-%d", in.Key, in.First, in.Last)
	}
	input := &s3.UploadPartCopyInput{
		Bucket:          &in.Bucket,
		Key:             &in.Key,
		UploadId:        &in.UploadID,
		PartNumber:      aws.Int32(in.PartNumber),
		CopySource:      aws.String(copySource(CopyInput{SrcBucket: in.SrcBucket, SrcKey: in.SrcKey, SrcVersionID: in.SrcVersionID})),
		CopySourceRange: aws.String(fmt.Sprintf("bytes=%d-%d", in.First, in.Last)),
	}
	if in.SrcIfMatch != "" {
		input.CopySourceIfMatch = aws.String(`"` + unquote(in.SrcIfMatch) + `"`)
	}
	// A store may refuse the copy without Content-MD5, as moto refuses
	// CopyObject into a bucket with a default retention.
	out, err := withMD5Retry(func(o ...func(*s3.Options)) (*s3.UploadPartCopyOutput, error) {
		return c.api.UploadPartCopy(ctx, input, o...)
	}, emptyBodyMD5())
	if err != nil {
		return "", wrapErr("UploadPartCopy", err)
	}
	if out.CopyPartResult == nil {
		return "", &Error{Op: "UploadPartCopy", Err: fmt.Errorf("no CopyPartResult in the answer")}
	}
	return unquote(aws.ToString(out.CopyPartResult.ETag)), nil
}
