package backend

import (
	"context"
	"fmt"
	"net/url"
	"sort"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	smithyhttp "github.com/aws/smithy-go/transport/http"
)

// Versions are the operations of versioned buckets.
type Versions interface {
	// GetBucketVersioning answers "Enabled", "Suspended" or "" (never
	// enabled).
	GetBucketVersioning(ctx context.Context, bucket string) (string, error)
	// PutBucketVersioning sets "Enabled" or "Suspended".
	PutBucketVersioning(ctx context.Context, bucket, status string) error
	// HeadObjectVersion is HeadObject of one version ("" the current one).
	HeadObjectVersion(ctx context.Context, bucket, key, versionID string) (ObjectInfo, error)
	// DeleteObjectVersion deletes one version, or with VersionID "" makes
	// a delete marker in a versioned bucket (removes the object in an
	// unversioned one), conditional on IfMatch when set.
	DeleteObjectVersion(ctx context.Context, in DeleteInput) (DeleteOutput, error)
	// DeleteVersions is DeleteObjects with a version id per entry; per-key
	// failures come back in the result, one per entry in order.
	DeleteVersions(ctx context.Context, bucket string, objs []ObjectID) ([]DeleteResult, error)
	// ListObjectVersions lists one page of versions and delete markers.
	ListObjectVersions(ctx context.Context, in ListVersionsInput) (ListVersionsOutput, error)
}

// DeleteInput selects what a DeleteObjectVersion removes.
type DeleteInput struct {
	Bucket, Key string
	VersionID   string
	IfMatch     string // backend ETag, quotes optional
}

// DeleteOutput is what the backend answered to a delete.
type DeleteOutput struct {
	VersionID    string // the version removed, or the delete marker made
	DeleteMarker bool   // a delete marker was made, or removed
}

// ObjectID names a key, and a version of it, in DeleteVersions.
type ObjectID struct {
	Key, VersionID string
}

// ListVersionsInput selects one page of ListObjectVersions.
type ListVersionsInput struct {
	Bucket, Prefix, Delimiter  string
	KeyMarker, VersionIDMarker string
	MaxKeys                    int32
}

// VersionEntry is one version or delete marker, in S3's order: by key,
// newest first.
type VersionEntry struct {
	Key, VersionID string
	IsLatest       bool
	DeleteMarker   bool
	Size           int64 // backend size; 0 for a delete marker
	ETag           string
	LastModified   time.Time
	StorageClass   string
	OwnerID        string
	OwnerName      string
}

// ListVersionsOutput is one page of versions.
type ListVersionsOutput struct {
	Entries             []VersionEntry
	CommonPrefixes      []string
	IsTruncated         bool
	NextKeyMarker       string
	NextVersionIDMarker string
}

func (c *S3) GetBucketVersioning(ctx context.Context, bucket string) (string, error) {
	out, err := c.api.GetBucketVersioning(ctx, &s3.GetBucketVersioningInput{Bucket: &bucket})
	if err != nil {
		return "", wrapErr("GetBucketVersioning", err)
	}
	return string(out.Status), nil
}

func (c *S3) PutBucketVersioning(ctx context.Context, bucket, status string) error {
	_, err := c.api.PutBucketVersioning(ctx, &s3.PutBucketVersioningInput{Bucket: &bucket,
		VersioningConfiguration: &types.VersioningConfiguration{Status: types.BucketVersioningStatus(status)}},
		s3.WithAPIOptions(smithyhttp.AddContentChecksumMiddleware))
	return wrapErr("PutBucketVersioning", err)
}

func (c *S3) DeleteObjectVersion(ctx context.Context, in DeleteInput) (DeleteOutput, error) {
	vid, err := c.versionParam("DeleteObject", in.VersionID)
	if err != nil {
		return DeleteOutput{}, err
	}
	input := &s3.DeleteObjectInput{Bucket: &in.Bucket, Key: &in.Key, VersionId: vid}
	if in.IfMatch != "" {
		input.IfMatch = aws.String(`"` + unquote(in.IfMatch) + `"`)
	}
	out, err := c.api.DeleteObject(ctx, input, bypassHeader(ctx))
	if err != nil {
		return DeleteOutput{}, wrapErr("DeleteObject", err)
	}
	return DeleteOutput{VersionID: aws.ToString(out.VersionId), DeleteMarker: aws.ToBool(out.DeleteMarker)}, nil
}

func (c *S3) DeleteVersions(ctx context.Context, bucket string, objs []ObjectID) ([]DeleteResult, error) {
	if len(objs) == 0 {
		return nil, nil
	}
	if len(objs) > maxDeleteKeys {
		return nil, fmt.Errorf("backend: DeleteObjects: %d keys, at most %d allowed", len(objs), maxDeleteKeys)
	}
	ids := make([]types.ObjectIdentifier, 0, len(objs))
	refused := map[int]error{}
	for i := range objs {
		vid, err := c.versionParam("DeleteObjects", objs[i].VersionID)
		if err != nil {
			refused[i] = err
			continue
		}
		ids = append(ids, types.ObjectIdentifier{Key: &objs[i].Key, VersionId: vid})
	}
	res := make([]DeleteResult, len(objs))
	if len(ids) == 0 {
		for i, err := range refused {
			e := err.(*Error)
			res[i] = DeleteResult{Key: objs[i].Key, VersionID: objs[i].VersionID, Code: e.Code, Message: e.Message}
		}
		return res, nil
	}
	out, err := c.api.DeleteObjects(ctx, &s3.DeleteObjectsInput{
		Bucket: &bucket,
		Delete: &types.Delete{Objects: ids, Quiet: aws.Bool(false)},
	}, s3.WithAPIOptions(smithyhttp.AddContentChecksumMiddleware), bypassHeader(ctx))
	if err != nil {
		return nil, wrapErr("DeleteObjects", err)
	}
	type id struct{ k, v string }
	got := make(map[id]DeleteResult, len(objs))
	byKey := make(map[string]DeleteResult, len(objs))
	loose := map[string][]DeleteResult{} // answers that name no version, by key
	answer := func(r DeleteResult) {
		got[id{r.Key, r.VersionID}] = r
		byKey[r.Key] = r
		if r.VersionID == "" {
			loose[r.Key] = append(loose[r.Key], r)
		}
	}
	for _, d := range out.Deleted {
		answer(DeleteResult{Key: aws.ToString(d.Key), VersionID: aws.ToString(d.VersionId), DeleteMarker: aws.ToBool(d.DeleteMarker),
			DeleteMarkerVersionID: aws.ToString(d.DeleteMarkerVersionId)})
	}
	for _, e := range out.Errors {
		answer(DeleteResult{Key: aws.ToString(e.Key), VersionID: aws.ToString(e.VersionId), Code: aws.ToString(e.Code), Message: aws.ToString(e.Message)})
	}
	unanswered := map[string][]int{} // entries with a version id no answer named, by key
	for i, o := range objs {
		if err, ok := refused[i]; ok {
			e := err.(*Error)
			res[i] = DeleteResult{Key: o.Key, VersionID: o.VersionID, Code: e.Code, Message: e.Message}
			continue
		}
		r, ok := got[id{o.Key, o.VersionID}]
		if !ok && (o.VersionID == "null" || o.VersionID == "") {
			// Stores differ in whether they echo a version for an entry
			// that named none (or "null").
			r, ok = byKey[o.Key]
		}
		if !ok {
			unanswered[o.Key] = append(unanswered[o.Key], i)
			continue
		}
		if r.VersionID == "" {
			r.VersionID = o.VersionID
		}
		res[i] = r
	}
	for k, idx := range unanswered {
		r, ok := oneAnswer(loose[k], len(idx))
		if !ok {
			r = DeleteResult{Code: "InternalError", Message: "backend did not report this key"}
		}
		for _, i := range idx {
			r.Key, r.VersionID = objs[i].Key, objs[i].VersionID
			res[i] = r
		}
	}
	return res, nil
}

// oneAnswer is the answer for n entries of one key that each named a
// version the store's answers do not repeat: moto reports a version
// delete the lock refused by key alone, as an Error without VersionId.
// Such answers are taken only when there are exactly n of them and all
// say the same, so that no entry can get another's answer.
func oneAnswer(loose []DeleteResult, n int) (DeleteResult, bool) {
	if len(loose) != n || n == 0 {
		return DeleteResult{}, false
	}
	for _, r := range loose[1:] {
		if r.Code != loose[0].Code || r.DeleteMarker != loose[0].DeleteMarker {
			return DeleteResult{}, false
		}
	}
	return loose[0], true
}

// ListObjectVersions lists versions and delete markers, merged into S3's
// order (the SDK hands them over as two lists).
func (c *S3) ListObjectVersions(ctx context.Context, in ListVersionsInput) (ListVersionsOutput, error) {
	out, err := c.api.ListObjectVersions(ctx, &s3.ListObjectVersionsInput{
		Bucket:          &in.Bucket,
		Prefix:          optString(in.Prefix),
		Delimiter:       optString(in.Delimiter),
		KeyMarker:       optString(in.KeyMarker),
		VersionIdMarker: optString(in.VersionIDMarker),
		MaxKeys:         maxKeys(in.MaxKeys),
		EncodingType:    types.EncodingTypeUrl,
	})
	if err != nil {
		return ListVersionsOutput{}, wrapErr("ListObjectVersions", err)
	}
	dec := decoder(out.EncodingType)
	res := ListVersionsOutput{IsTruncated: aws.ToBool(out.IsTruncated), NextVersionIDMarker: aws.ToString(out.NextVersionIdMarker)}
	if res.NextKeyMarker, err = dec(aws.ToString(out.NextKeyMarker)); err != nil {
		return ListVersionsOutput{}, &Error{Op: "ListObjectVersions", Err: err}
	}
	for _, v := range out.Versions {
		e := VersionEntry{Key: aws.ToString(v.Key), VersionID: aws.ToString(v.VersionId), IsLatest: aws.ToBool(v.IsLatest),
			Size: aws.ToInt64(v.Size), ETag: unquote(aws.ToString(v.ETag)), LastModified: timeOrZero(v.LastModified),
			StorageClass: string(v.StorageClass)}
		if v.Owner != nil {
			e.OwnerID, e.OwnerName = aws.ToString(v.Owner.ID), aws.ToString(v.Owner.DisplayName)
		}
		res.Entries = append(res.Entries, e)
	}
	for _, m := range out.DeleteMarkers {
		e := VersionEntry{Key: aws.ToString(m.Key), VersionID: aws.ToString(m.VersionId), IsLatest: aws.ToBool(m.IsLatest),
			DeleteMarker: true, LastModified: timeOrZero(m.LastModified)}
		if m.Owner != nil {
			e.OwnerID, e.OwnerName = aws.ToString(m.Owner.ID), aws.ToString(m.Owner.DisplayName)
		}
		res.Entries = append(res.Entries, e)
	}
	for i := range res.Entries {
		if res.Entries[i].Key, err = dec(res.Entries[i].Key); err != nil {
			return ListVersionsOutput{}, &Error{Op: "ListObjectVersions", Err: err}
		}
	}
	sortVersions(res.Entries)
	for _, p := range out.CommonPrefixes {
		s, err := dec(aws.ToString(p.Prefix))
		if err != nil {
			return ListVersionsOutput{}, &Error{Op: "ListObjectVersions", Err: err}
		}
		res.CommonPrefixes = append(res.CommonPrefixes, s)
	}
	return res, nil
}

// sortVersions puts entries in S3's order: by key, then the latest first,
// then newest first. The backend sent each list in that order, so the sort
// is stable to keep its order among equal times.
func sortVersions(es []VersionEntry) {
	sort.SliceStable(es, func(i, j int) bool {
		a, b := es[i], es[j]
		if a.Key != b.Key {
			return a.Key < b.Key
		}
		if a.IsLatest != b.IsLatest {
			return a.IsLatest
		}
		return a.LastModified.After(b.LastModified)
	})
}

// copySource is x-amz-copy-source for in: bucket/key, and ?versionId= when
// a version is named.
func copySource(in CopyInput) string {
	s := url.PathEscape(in.SrcBucket) + "/" + escapeKey(in.SrcKey)
	if in.SrcVersionID != "" {
		s += "?versionId=" + url.QueryEscape(in.SrcVersionID)
	}
	return s
}

// versionParam is the VersionId to send for id: none for "".
func (c *S3) versionParam(op, id string) (*string, error) {
	if id == "" {
		return nil, nil
	}
	return &id, nil
}
