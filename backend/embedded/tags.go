package embedded

import (
	"encoding/xml"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Object and bucket tags on the embedded store, with S3's limits.

const (
	maxObjTags   = 10
	maxBktTags   = 50
	maxTagKeyLen = 128 // characters
	maxTagValLen = 256
)

func itoa(n int) string { return strconv.Itoa(n) }

func errInvalidTag(msg string) error {
	return &mpError{http.StatusBadRequest, "InvalidTag", msg}
}

// checkTags applies S3's limits and sorts tags by key, the order S3
// answers them in (s3-tests test_put_obj_with_tags).
func checkTags(tags []tag, limit int) error {
	slices.SortStableFunc(tags, func(a, b tag) int { return strings.Compare(a.Key, b.Key) })
	if len(tags) > limit {
		return errInvalidTag("Object tags cannot be greater than " + itoa(limit))
	}
	seen := map[string]bool{}
	for _, t := range tags {
		if n := utf8.RuneCountInString(t.Key); n == 0 || n > maxTagKeyLen {
			return errInvalidTag("The TagKey you have provided is invalid")
		}
		if utf8.RuneCountInString(t.Value) > maxTagValLen {
			return errInvalidTag("The TagValue you have provided is invalid")
		}
		if seen[t.Key] {
			return errInvalidTag("Cannot provide multiple Tags with the same key")
		}
		seen[t.Key] = true
	}
	return nil
}

// parseTagQuery reads x-amz-tagging ("k1=v1&k2=v2", URL-encoded).
func parseTagQuery(v string) ([]tag, error) {
	var tags []tag
	for _, part := range strings.Split(v, "&") {
		if part == "" {
			continue
		}
		k, val, _ := strings.Cut(part, "=")
		uk, err1 := url.QueryUnescape(k)
		uv, err2 := url.QueryUnescape(val)
		if err1 != nil || err2 != nil {
			return nil, &mpError{http.StatusBadRequest, "InvalidArgument", "The header 'x-amz-tagging' shall be encoded as UTF-8 then URLEncoded URL query parameters without tag name duplicates."}
		}
		tags = append(tags, tag{Key: uk, Value: uv})
	}
	return tags, checkTags(tags, maxObjTags)
}

type taggingDoc struct {
	XMLName xml.Name `xml:"Tagging"`
	NS      string   `xml:"xmlns,attr,omitempty"`
	Tags    []tag    `xml:"TagSet>Tag"`
}

func parseTagDoc(r *http.Request, limit int) ([]tag, error) {
	body, err := readSubBody(r, maxSubBody)
	if err != nil {
		return nil, err
	}
	var doc taggingDoc
	if xml.Unmarshal(body, &doc) != nil {
		return nil, errMalformedXML
	}
	return doc.Tags, checkTags(doc.Tags, limit)
}

func (h *attrsHandler) serveObjectTagging(w http.ResponseWriter, r *http.Request, bucket, key string) error {
	vid, named, err := h.headVersion(r, bucket, key)
	if err != nil {
		return err
	}
	switch r.Method {
	case http.MethodGet:
		o, err := h.a.object(bucket, key, vid)
		if err != nil {
			return err
		}
		setVersionHeader(w, vid, named)
		return writeXML(w, taggingDoc{NS: s3XMLNS, Tags: o.Tags})
	case http.MethodPut:
		tags, err := parseTagDoc(r, maxObjTags)
		if err != nil {
			return err
		}
		if err := h.a.updateObject(bucket, key, vid, func(o *objAttrs) error { o.Tags = tags; return nil }); err != nil {
			return err
		}
		setVersionHeader(w, vid, named)
		w.WriteHeader(http.StatusOK)
	case http.MethodDelete:
		if err := h.a.updateObject(bucket, key, vid, func(o *objAttrs) error { o.Tags = nil; return nil }); err != nil {
			return err
		}
		setVersionHeader(w, vid, named)
		w.WriteHeader(http.StatusNoContent)
	default:
		return errMethod()
	}
	return nil
}

func (h *attrsHandler) serveBucketTagging(w http.ResponseWriter, r *http.Request, bucket string) error {
	switch r.Method {
	case http.MethodGet:
		b, err := h.a.bucket(bucket)
		if err != nil {
			return err
		}
		if len(b.Tags) == 0 {
			return &mpError{http.StatusNotFound, "NoSuchTagSet", "The TagSet does not exist."}
		}
		return writeXML(w, taggingDoc{NS: s3XMLNS, Tags: b.Tags})
	case http.MethodPut:
		tags, err := parseTagDoc(r, maxBktTags)
		if err != nil {
			return err
		}
		if err := h.a.updateBucket(bucket, func(b *bucketAttrs) error { b.Tags = tags; return nil }); err != nil {
			return err
		}
		w.WriteHeader(http.StatusNoContent)
	case http.MethodDelete:
		if err := h.a.updateBucket(bucket, func(b *bucketAttrs) error { b.Tags = nil; return nil }); err != nil {
			return err
		}
		w.WriteHeader(http.StatusNoContent)
	default:
		return errMethod()
	}
	return nil
}
