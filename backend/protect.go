package backend

import (
	"context"
	"crypto/md5"
	"encoding/base64"
	"fmt"
	"io"
	"net/url"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	smithyhttp "github.com/aws/smithy-go/transport/http"
)

// Protection is what the backend enforces on an object besides its bytes
// and metadata: Object Lock (retention and legal hold) and tags. s3seal
// passes it on as S3 headers; the backend, not s3seal, enforces it, so a
// locked object stays locked even against s3seal's own credential.
type Protection struct {
	LockMode    string    // "GOVERNANCE" or "COMPLIANCE", or ""
	RetainUntil time.Time // zero unless LockMode is set
	LegalHold   string    // "ON", "OFF" or ""
	Tagging     string    // URL query encoding of the tags (x-amz-tagging), or ""
	// ACL is a canned ACL (x-amz-acl) and Grants the x-amz-grant-*
	// headers by their suffix ("read", "read-acp", "write-acp",
	// "full-control"), as an admin credential set them.
	ACL    string
	Grants map[string]string
}

// Locks reports whether p asks for a retention or a legal hold.
func (p Protection) Locks() bool { return p.LockMode != "" || p.LegalHold != "" }

type bypassKey struct{}

// WithBypassGovernance marks ctx so that deletes made with it send
// x-amz-bypass-governance-retention: true, as the client asked. It travels
// in the context so that the delete operations keep their signatures.
func WithBypassGovernance(ctx context.Context) context.Context {
	return context.WithValue(ctx, bypassKey{}, true)
}

// BypassGovernance reports whether ctx carries WithBypassGovernance.
func BypassGovernance(ctx context.Context) bool {
	v, _ := ctx.Value(bypassKey{}).(bool)
	return v
}

// smallBodyMD5 is the largest PUT body the client hashes itself when the
// caller gave no Content-MD5.
const smallBodyMD5 = 1 << 20

// bodyMD5 is the base64 MD5 of body, which is left at offset 0.
func bodyMD5(body io.ReadSeeker) (string, error) {
	if _, err := body.Seek(0, io.SeekStart); err != nil {
		return "", fmt.Errorf("rewind body: %w", err)
	}
	h := md5.New()
	if _, err := io.Copy(h, body); err != nil {
		return "", fmt.Errorf("hash body: %w", err)
	}
	if _, err := body.Seek(0, io.SeekStart); err != nil {
		return "", fmt.Errorf("rewind body: %w", err)
	}
	return base64.StdEncoding.EncodeToString(h.Sum(nil)), nil
}

// bypassHeader sends x-amz-bypass-governance-retention when ctx asks.
func bypassHeader(ctx context.Context) func(*s3.Options) {
	if !BypassGovernance(ctx) {
		return func(*s3.Options) {}
	}
	return s3.WithAPIOptions(smithyhttp.SetHeaderValue("X-Amz-Bypass-Governance-Retention", "true"))
}

func protectPut(in *s3.PutObjectInput, p Protection) {
	in.ObjectLockMode, in.ObjectLockRetainUntilDate, in.ObjectLockLegalHoldStatus = p.sdkLock()
	in.Tagging = optString(p.Tagging)
	in.ACL, in.GrantRead, in.GrantReadACP, in.GrantWriteACP, in.GrantFullControl = p.sdkACL()
}

func protectCreate(in *s3.CreateMultipartUploadInput, p Protection) {
	in.ObjectLockMode, in.ObjectLockRetainUntilDate, in.ObjectLockLegalHoldStatus = p.sdkLock()
	in.Tagging = optString(p.Tagging)
	in.ACL, in.GrantRead, in.GrantReadACP, in.GrantWriteACP, in.GrantFullControl = p.sdkACL()
}

// sdkLock is p's retention and legal hold as the SDK's inputs take them.
func (p Protection) sdkLock() (types.ObjectLockMode, *time.Time, types.ObjectLockLegalHoldStatus) {
	var until *time.Time
	if !p.RetainUntil.IsZero() {
		until = aws.Time(p.RetainUntil)
	}
	return types.ObjectLockMode(p.LockMode), until, types.ObjectLockLegalHoldStatus(p.LegalHold)
}

// sdkACL is p's canned ACL and grants (read, read-acp, write-acp,
// full-control) as the SDK's inputs take them.
func (p Protection) sdkACL() (types.ObjectCannedACL, *string, *string, *string, *string) {
	return types.ObjectCannedACL(p.ACL), optString(p.Grants["read"]), optString(p.Grants["read-acp"]),
		optString(p.Grants["write-acp"]), optString(p.Grants["full-control"])
}

// protectCopy sets p's retention, legal hold, ACL and grants on a copy.
func protectCopy(in *s3.CopyObjectInput, p Protection) {
	in.ObjectLockMode, in.ObjectLockRetainUntilDate, in.ObjectLockLegalHoldStatus = p.sdkLock()
	in.ACL, in.GrantRead, in.GrantReadACP, in.GrantWriteACP, in.GrantFullControl = p.sdkACL()
}

// lockOf is the lock a GET or HEAD answer reports.
func lockOf(mode types.ObjectLockMode, until *time.Time, hold types.ObjectLockLegalHoldStatus) Protection {
	return Protection{LockMode: string(mode), RetainUntil: aws.ToTime(until), LegalHold: string(hold)}
}

// md5Refused reports whether err is a store's refusal of a write without
// Content-MD5: AWS answers InvalidRequest to PUTs and parts in buckets
// with Object Lock (default retention included, which s3seal cannot know
// of in advance); moto answers MissingUploadObjectWithObjectLockHeaders,
// to CopyObject as well.
func md5Refused(err error) bool {
	if err == nil {
		return false
	}
	e, ok := wrapErr("", err).(*Error)
	return ok && (e.Code == "InvalidRequest" || e.Code == "MissingUploadObjectWithObjectLockHeaders") &&
		strings.Contains(e.Message, "Content-MD5")
}

// md5Wanted reports whether err is md5Refused of a body sent without
// Content-MD5 and then returns the body's MD5 for one more attempt, with
// the body rewound. Bodies without MD5 are large spools, over TLS or
// carrying CRC32C instead (see sealstore.Options.BackendChecksum); hashing
// them again costs a read of the spool only where the store demands it.
func md5Wanted(err error, sent *string, body io.ReadSeeker) (string, bool) {
	if sent != nil || body == nil || !md5Refused(err) {
		return "", false
	}
	md5, herr := bodyMD5(body)
	return md5, herr == nil
}

// withMD5Retry runs call, which sends a request whose body the SDK builds
// (a copy's empty body, CompleteMultipartUpload's XML), and when the store
// refuses it for want of Content-MD5 (md5Refused) runs it once more with
// the option md5, which adds that body's MD5.
func withMD5Retry[T any](call func(opts ...func(*s3.Options)) (T, error), md5 func(*s3.Options)) (T, error) {
	out, err := call()
	if md5Refused(err) {
		out, err = call(md5)
	}
	return out, err
}

// emptyBodyMD5 sends the MD5 of an empty body (CopyObject, UploadPartCopy).
func emptyBodyMD5() func(*s3.Options) {
	return s3.WithAPIOptions(smithyhttp.SetHeaderValue("Content-Md5", emptyMD5))
}

// xmlBodyMD5 has the SDK add the MD5 of the request body it serialised.
func xmlBodyMD5() func(*s3.Options) {
	return s3.WithAPIOptions(smithyhttp.AddContentChecksumMiddleware)
}

// ObjectTagging reads an object's tags (GetObjectTagging).
func (c *S3) ObjectTagging(ctx context.Context, bucket, key, versionID string) (string, error) {
	vid, err := c.versionParam("GetObjectTagging", versionID)
	if err != nil {
		return "", err
	}
	out, err := c.api.GetObjectTagging(ctx, &s3.GetObjectTaggingInput{Bucket: &bucket, Key: &key, VersionId: vid})
	if err != nil {
		return "", wrapErr("GetObjectTagging", err)
	}
	return encodeTagging(out.TagSet), nil
}

// encodeTagging encodes tags as x-amz-tagging takes them, in their order:
// key=value pairs joined by "&", each side URL-escaped with "%20" for a
// space.
func encodeTagging(tags []types.Tag) string {
	parts := make([]string, len(tags))
	for i, t := range tags {
		parts[i] = strings.ReplaceAll(url.QueryEscape(aws.ToString(t.Key))+"="+url.QueryEscape(aws.ToString(t.Value)), "+", "%20")
	}
	return strings.Join(parts, "&")
}
