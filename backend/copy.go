package backend

import (
	"context"
	"fmt"
	"net/url"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
)

// emptyMD5 is the base64 MD5 of an empty body.
const emptyMD5 = "1B2M2Y8AsgTpgAmY7PhCfg=="

// MaxCopySize is the largest object one CopyObject may copy, as on S3;
// larger ones need a multipart copy (UploadPartCopy).
const MaxCopySize = 5 << 30

// CopyInput is a server-side copy within the backend with the REPLACE
// metadata directive: the copy gets Meta and Headers, not the source's.
type CopyInput struct {
	SrcBucket, SrcKey string
	Bucket, Key       string
	// SrcIfMatch, when set, makes the copy conditional on the source's
	// backend ETag (quotes optional): PreconditionFailed when it differs.
	SrcIfMatch string
	Meta       map[string]string // user metadata, keys without "x-amz-meta-"
	Headers    Headers

	// SrcVersionID, when set, copies that version of the source.
	SrcVersionID string
	// Lock is the copy's retention (LockMode, RetainUntil) and legal hold,
	// which a store never copies from the source, and its canned ACL and
	// grants. Its Tagging is used with ReplaceTags only: otherwise the
	// store copies the source's tags.
	Lock Protection
	// ReplaceTags gives the copy Lock.Tagging ("": none) in place of the
	// source's tags (x-amz-tagging-directive REPLACE).
	ReplaceTags bool
}

// CopyOutput is what the backend answered to a copy.
type CopyOutput struct {
	ETag      string // backend ETag of the copy, quotes removed
	VersionID string // the version the copy made, "" when unversioned
}

// CopyObject copies an object within the backend (x-amz-copy-source) with
// MetadataDirective REPLACE and, with SrcIfMatch, CopySourceIfMatch; the
// bytes never leave the backend. Headers.Expires is not copied (it is a
// raw string s3seal does not parse).
func (c *S3) CopyObject(ctx context.Context, in CopyInput) (CopyOutput, error) {
	input := &s3.CopyObjectInput{
		Bucket:             &in.Bucket,
		Key:                &in.Key,
		CopySource:         aws.String(copySource(in)),
		MetadataDirective:  types.MetadataDirectiveReplace,
		Metadata:           in.Meta,
		ContentType:        optString(in.Headers.ContentType),
		CacheControl:       optString(in.Headers.CacheControl),
		ContentDisposition: optString(in.Headers.ContentDisposition),
		ContentEncoding:    optString(in.Headers.ContentEncoding),
		ContentLanguage:    optString(in.Headers.ContentLanguage),
	}
	setClassAndRedirect(in.Headers, &input.StorageClass, &input.WebsiteRedirectLocation)
	setSSE(in.Headers, &input.ServerSideEncryption, &input.SSEKMSKeyId, &input.SSEKMSEncryptionContext, &input.BucketKeyEnabled)
	protectCopy(input, in.Lock)
	if in.ReplaceTags {
		input.TaggingDirective = types.TaggingDirectiveReplace
		input.Tagging = optString(in.Lock.Tagging)
	}
	if in.SrcIfMatch != "" {
		input.CopySourceIfMatch = aws.String(`"` + unquote(in.SrcIfMatch) + `"`)
	}
	var out *s3.CopyObjectOutput
	var err error
	if in.Lock.Locks() {
		// Stores demand Content-MD5 of a write that sets a lock (moto on
		// CopyObject too): it gets the MD5 of the request's empty body.
		out, err = c.api.CopyObject(ctx, input, emptyBodyMD5())
	} else {
		// A default retention locks the copy all the same (moto then
		// refuses it without Content-MD5): the MD5 follows a refusal.
		out, err = withMD5Retry(func(o ...func(*s3.Options)) (*s3.CopyObjectOutput, error) {
			return c.api.CopyObject(ctx, input, o...)
		}, emptyBodyMD5())
	}
	if err != nil {
		return CopyOutput{}, wrapErr("CopyObject", err)
	}
	if out.CopyObjectResult == nil {
		return CopyOutput{}, &Error{Op: "CopyObject", Err: fmt.Errorf("no CopyObjectResult in the answer")}
	}
	return CopyOutput{ETag: unquote(aws.ToString(out.CopyObjectResult.ETag)), VersionID: aws.ToString(out.VersionId)}, nil
}

// escapeKey escapes each segment of an object key for x-amz-copy-source.
func escapeKey(key string) string {
	// EscapedPath keeps sub-delimiters such as ";" and "+" as they are;
	// some stores cut the copy source at ";" or read "+" as a space.
	r := strings.NewReplacer("+", "%2B", ";", "%3B")
	return r.Replace((&url.URL{Path: key}).EscapedPath())
}
