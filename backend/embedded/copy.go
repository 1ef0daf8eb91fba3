package embedded

import (
	"encoding/hex"
	"time"

	"github.com/johannesboyne/gofakes3"
)

// CopyObject replaces s3afero's copy, which writes around fixedBackend's
// staging and key locks: the source is read whole, staged, and written
// under the destination key's lock. X-Amz-Copy-Source-If-Match is decided
// against the source as read and, for a copy onto itself, again under the
// lock, so a write in between makes the copy fail with PreconditionFailed.
// gofakes3 has merged the source's metadata into meta already, so REPLACE
// does not remove keys the source had and the copy lacks.
func (b *fixedBackend) CopyObject(srcBucket, srcKey, dstBucket, dstKey string, meta map[string]string) (gofakes3.CopyObjectResult, error) {
	var none gofakes3.CopyObjectResult
	ifMatch, cond := meta["X-Amz-Copy-Source-If-Match"]
	src, err := b.GetObject(srcBucket, srcKey, nil)
	if err != nil {
		return none, err
	}
	defer src.Contents.Close()
	etag := src.Metadata[etagMetaKey]
	if etag == "" {
		etag = hex.EncodeToString(src.Hash)
	}
	if cond && !etagMatches(ifMatch, etag) {
		return none, gofakes3.ErrPreconditionFailed
	}
	check := func() error {
		if !cond || srcBucket != dstBucket || srcKey != dstKey {
			return nil
		}
		cur, err := b.MultiBucketBackend.HeadObject(srcBucket, fsKey(srcKey))
		if err != nil {
			return err
		}
		now := cur.Metadata[etagMetaKey]
		if now == "" {
			now = hex.EncodeToString(cur.Hash)
		}
		if now != etag {
			return gofakes3.ErrPreconditionFailed
		}
		return nil
	}
	if _, err := b.putObject(dstBucket, dstKey, meta, src.Contents, src.Size, nil, check); err != nil {
		return none, err
	}
	return gofakes3.CopyObjectResult{ETag: `"` + etag + `"`, LastModified: gofakes3.NewContentTime(time.Now())}, nil
}
