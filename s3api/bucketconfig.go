package s3api

import (
	"unicode/utf8"

	"github.com/s3seal/s3seal/s3api/s3err"
)

// Bucket configurations s3seal judges as S3 does before they reach the
// store, that have no file of their own: the lifecycle rule count (the
// rules: lifecycle.go) and bucket tags (PutBucketTagging and
// CreateBucket's Tags).

// maxLifecycleRules is S3's limit on the rules of a lifecycle
// configuration.
const maxLifecycleRules = 1000

// maxBucketTagsMsg is AWS's answer to more than 50 bucket tags.
const maxBucketTagsMsg = "Bucket tag count cannot be greater than 50"

// parseBucketTagBody reads a PutBucketTagging document and checks it as
// AWS checks bucket tags (checkBucketTags).
func parseBucketTagBody(body []byte) ([]tag, error) {
	var t tagging
	if err := decodeXML(body, &t); err != nil {
		return nil, err
	}
	return t.TagSet.Tags, checkBucketTags(t.TagSet.Tags)
}

// checkBucketTags applies AWS's rules for bucket tags (PutBucketTagging
// and CreateBucket's Tags): at most 50 (400 BadRequest); keys of 1 to 128
// and values of at most 256 characters drawn from letters, digits, white
// space and _ . : / = + - @ (else InvalidTag, "The TagKey (TagValue) you
// have provided is invalid"); no "aws:" key, no key twice.
func checkBucketTags(tags []tag) error {
	if len(tags) > maxBucketTags {
		return s3err.New(s3err.BadRequest, maxBucketTagsMsg)
	}
	for _, t := range tags {
		if !utf8.ValidString(t.Key) || t.Key == "" || utf8.RuneCountInString(t.Key) > maxTagKey || !tagChars(t.Key) {
			return s3err.New(s3err.InvalidTag, "The TagKey you have provided is invalid")
		}
		if !utf8.ValidString(t.Value) || utf8.RuneCountInString(t.Value) > maxTagValue || !tagChars(t.Value) {
			return s3err.New(s3err.InvalidTag, "The TagValue you have provided is invalid")
		}
	}
	return checkTags(tags, maxBucketTags)
}
