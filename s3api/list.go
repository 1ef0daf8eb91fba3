package s3api

import (
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"

	"github.com/s3seal/s3seal/s3api/s3err"
	"github.com/s3seal/s3seal/sealstore"
)

// listParams reads the parameters both listing versions share.
func listParams(q url.Values) (in sealstore.ListInput, encode bool, err error) {
	in.Prefix, in.Delimiter = q.Get("prefix"), q.Get("delimiter")
	in.MaxKeys = 1000
	if v := q.Get("max-keys"); v != "" {
		n, perr := strconv.Atoi(v)
		if perr != nil {
			return in, false, s3err.New(s3err.InvalidArgument, "Provided max-keys not an integer or within integer range.")
		}
		if n < 0 {
			// AWS names the value, not the parameter, in this one.
			return in, false, s3err.New(s3err.InvalidArgument, "Argument "+v+" must be an integer between 0 and 2147483647")
		}
		in.MaxKeys = int32(min(n, 1000))
	}
	encode, err = encodingType(q)
	return in, encode, err
}

// encodingType reads encoding-type: absent or "url".
func encodingType(q url.Values) (bool, error) {
	switch q.Get("encoding-type") {
	case "":
		return false, nil
	case "url":
		return true, nil
	}
	return false, s3err.New(s3err.InvalidArgument, "Invalid Encoding Method specified in Request.")
}

func (s *Server) listObjectsV1(req *request) error {
	q := req.r.URL.Query()
	in, encode, err := listParams(q)
	if err != nil {
		return err
	}
	in.Bucket, in.Marker = req.bucket, q.Get("marker")
	page, err := s.list(req, in)
	if err != nil {
		return err
	}
	enc := encoder(encode)
	marker := enc(in.Marker)
	out := listBucketResult{
		// V1's Prefix is given as sent, even with encoding-type=url: S3
		// does not encode it there (botocore decodes Delimiter, Marker,
		// NextMarker and keys of a V1 answer, not Prefix).
		Xmlns: s3ns, Name: req.bucket, Prefix: in.Prefix, Marker: &marker,
		MaxKeys: in.MaxKeys, Delimiter: enc(in.Delimiter), IsTruncated: page.IsTruncated,
	}
	if page.IsTruncated {
		out.NextMarker = enc(page.NextMarker)
	}
	fillEntries(&out, page, enc, s.objectOwners(req))
	if encode {
		out.EncodingType = "url"
	}
	writeXML(req.w, http.StatusOK, out)
	return nil
}

func (s *Server) listObjectsV2(req *request) error {
	q := req.r.URL.Query()
	in, encode, err := listParams(q)
	if err != nil {
		return err
	}
	in.Bucket, in.V2 = req.bucket, true
	in.ContinuationToken, in.StartAfter = q.Get("continuation-token"), q.Get("start-after")
	in.FetchOwner = q.Get("fetch-owner") == "true"
	page, err := s.list(req, in)
	if err != nil {
		return err
	}
	enc := encoder(encode)
	out := listBucketResult{
		Xmlns: s3ns, Name: req.bucket, Prefix: enc(in.Prefix), MaxKeys: in.MaxKeys,
		Delimiter: enc(in.Delimiter), IsTruncated: page.IsTruncated,
		NextContinuationToken: page.NextContinuationToken,
	}
	// S3 echoes the continuation token and StartAfter whenever the request
	// had them, even empty (clients read the echo).
	if q.Has("continuation-token") {
		out.ContinuationToken = &in.ContinuationToken
	}
	if q.Has("start-after") {
		sa := enc(in.StartAfter)
		out.StartAfter = &sa
	}
	var owners func(string) owner
	if in.FetchOwner {
		owners = s.objectOwners(req)
	}
	fillEntries(&out, page, enc, owners)
	n := len(out.Contents) + len(out.CommonPrefixes)
	out.KeyCount = &n
	if encode {
		out.EncodingType = "url"
	}
	writeXML(req.w, http.StatusOK, out)
	return nil
}

func (s *Server) list(req *request, in sealstore.ListInput) (sealstore.ListPage, error) {
	if in.MaxKeys == 0 {
		return sealstore.ListPage{}, s.store.HeadBucket(req.r.Context(), in.Bucket)
	}
	page, err := s.store.List(req.r.Context(), in)
	return page, bucketErr(err)
}

// fillEntries fills a listing's page in; owners, when not nil, gives each
// entry's owner.
func fillEntries(out *listBucketResult, page sealstore.ListPage, enc func(string) string, owners func(string) owner) {
	for _, e := range page.Entries {
		le := listEntry{Key: enc(e.Key), LastModified: s3Time(e.LastModified), ETag: quote(e.ETag),
			Size: e.Size, StorageClass: e.StorageClass}
		le.ChecksumAlgorithm, le.ChecksumType = listedChecksums(e.Checksums)
		if le.StorageClass == "" {
			le.StorageClass = "STANDARD"
		}
		if owners != nil {
			o := owners(e.Key)
			le.Owner = &o
		}
		out.Contents = append(out.Contents, le)
	}
	for _, p := range page.CommonPrefixes {
		out.CommonPrefixes = append(out.CommonPrefixes, commonPrefix{Prefix: enc(p)})
	}
}

// encoder returns the encoding of encoding-type=url, or the identity.
func encoder(encode bool) func(string) string {
	if !encode {
		return func(s string) string { return s }
	}
	return s3URLEncode
}

// s3URLEncode encodes a key as S3 does for encoding-type=url: every byte
// of its UTF-8 form but the unreserved characters of RFC 3986 (letters,
// digits, '-', '.', '_', '~') and '/' becomes %XX with upper-case hex, so
// a space is %20 and '+' is %2B, and "foo/" stays "foo/" (s3-tests
// test_bucket_list_encoding_basic). url.QueryEscape would turn '/' into
// %2F and a space into '+', which clients do not decode.
func s3URLEncode(s string) string {
	const hexDigits = "0123456789ABCDEF"
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9',
			c == '-', c == '.', c == '_', c == '~', c == '/':
			b.WriteByte(c)
		default:
			b.WriteByte('%')
			b.WriteByte(hexDigits[c>>4])
			b.WriteByte(hexDigits[c&15])
		}
	}
	return b.String()
}

// maxDeleteObjects is S3's limit on keys per DeleteObjects request.
const maxDeleteObjects = 1000

// parseDeleteRequest reads a DeleteObjects body: 1 to 1000 objects, each
// with a key. Anything else is MalformedXML, as in S3.
func parseDeleteRequest(body []byte) (deleteRequest, error) {
	var dr deleteRequest
	if err := decodeXML(body, &dr); err != nil || len(dr.Objects) == 0 || len(dr.Objects) > maxDeleteObjects {
		return dr, s3err.New(s3err.MalformedXML, "")
	}
	for _, o := range dr.Objects {
		if o.Key == "" {
			return dr, s3err.New(s3err.MalformedXML, "")
		}
	}
	return dr, nil
}

func (s *Server) deleteObjects(req *request) error {
	if err := bucketPolicy.check(req.r.Header); err != nil {
		return err
	}
	ctx, err := bypassCtx(req)
	if err != nil {
		return err
	}
	body, err := readXMLBody(req, maxXMLBody)
	if err != nil {
		return err
	}
	dr, err := parseDeleteRequest(body)
	if err != nil {
		return err
	}
	out := deleteResult{Xmlns: s3ns}
	var entries []sealstore.DeleteEntry
	for _, o := range dr.Objects {
		vid := ""
		if o.VersionID != nil {
			vid = *o.VersionID
		}
		if err := sealstore.CheckKey(o.Key); err != nil {
			ae := toAPIError(err)
			out.Errors = append(out.Errors, deleteError{Key: o.Key, VersionID: vid, Code: ae.Code, Message: ae.Message})
			continue
		}
		if _, err := s.authorizeKey(req, "DeleteObject", req.bucket, o.Key, vid); err != nil {
			// Each key is decided as its own DeleteObject (keyauth.go).
			ae := toAPIError(err)
			out.Errors = append(out.Errors, deleteError{Key: o.Key, VersionID: vid, Code: ae.Code, Message: ae.Message})
			continue
		}
		if o.VersionID != nil && vid == "" {
			// An empty <VersionId> names the version "", which does not
			// exist: S3 answers that entry NoSuchVersion. Taken for "no
			// version" it would make a delete marker (or delete the object).
			ae := s3err.New(s3err.NoSuchVersion, "")
			out.Errors = append(out.Errors, deleteError{Key: o.Key, Code: ae.Code, Message: ae.Message})
			continue
		}
		if vid != "" && !sealstore.WellFormedVersionID(vid) {
			// A malformed id (" ", a padded id) is refused as DeleteObject
			// refuses it: a store may read a blank one as "no version".
			ae := s3err.New(s3err.InvalidArgument, "Invalid version id specified")
			out.Errors = append(out.Errors, deleteError{Key: o.Key, VersionID: vid, Code: ae.Code, Message: ae.Message})
			continue
		}
		cond, err := parseDeleteCondition(o.ETag, o.Size, o.LastModifiedTime)
		if err != nil {
			ae := toAPIError(err)
			out.Errors = append(out.Errors, deleteError{Key: o.Key, VersionID: vid, Code: ae.Code, Message: ae.Message})
			continue
		}
		entries = append(entries, sealstore.DeleteEntry{Key: o.Key, VersionID: vid, Cond: cond})
	}
	if len(entries) > 0 {
		res, err := s.store.DeleteEntries(ctx, req.bucket, entries)
		if err != nil {
			return bucketErr(err)
		}
		var deleted []sealstore.DeleteEntry
		for i, r := range res {
			switch {
			case r.Code != "":
				out.Errors = append(out.Errors, deleteError{Key: r.Key, VersionID: r.VersionID, Code: s3err.Code(r.Code), Message: r.Message})
				continue
			case !dr.Quiet:
				out.Deleted = append(out.Deleted, deletedEntry{Key: r.Key, VersionID: r.VersionID,
					DeleteMarker: r.DeleteMarker, DeleteMarkerVersionID: r.DeleteMarkerVersionID})
			}
			if i < len(entries) {
				deleted = append(deleted, entries[i])
			}
		}
		if err := s.forgetDeletedACLs(req, deleted); err != nil {
			return err
		}
	}
	writeXML(req.w, http.StatusOK, out)
	return nil
}

// maxBuckets is S3's largest max-buckets.
const maxBuckets = 10000

// listBuckets answers ListBuckets with S3's parameters: prefix,
// max-buckets (1 to 10000) and continuation-token, over the buckets the
// caller may read, in name order. The continuation token is the last name
// of the page (opaque to clients, as S3's; versitygw's suite expects the
// name). Each bucket is in the store's region. The owner is the caller
// (its canonical id and display name), and the buckets listed are those
// it owns (ownsListed).
func (s *Server) listBuckets(req *request) error {
	q := req.r.URL.Query()
	prefix := q.Get("prefix")
	limit := maxBuckets
	if v, ok := q["max-buckets"]; ok {
		n, err := strconv.Atoi(v[0])
		if err != nil || n < 1 || n > maxBuckets {
			return s3err.New(s3err.InvalidArgument, "Argument max-buckets must be an integer between 1 and 10000.")
		}
		limit = n
	}
	after := ""
	if v, ok := q["continuation-token"]; ok {
		if v[0] == "" {
			return s3err.New(s3err.InvalidArgument, "The continuation token provided is incorrect.")
		}
		after = v[0]
	}
	buckets, err := s.store.ListBuckets(req.r.Context())
	if err != nil {
		return err
	}
	sort.Slice(buckets, func(i, j int) bool { return buckets[i].Name < buckets[j].Name })
	out := listAllMyBucketsResult{Xmlns: s3ns, Owner: owner{ID: req.who.CanonicalID, DisplayName: req.who.DisplayName}, Prefix: prefix}
	for _, b := range buckets {
		if !req.cred.canRead(b.Name) || !strings.HasPrefix(b.Name, prefix) || b.Name <= after {
			continue
		}
		if owns, err := s.ownsListed(req, b.Name); err != nil {
			return err
		} else if !owns {
			continue
		}
		if len(out.Buckets) == limit {
			out.ContinuationToken = out.Buckets[limit-1].Name
			break
		}
		out.Buckets = append(out.Buckets, bucketInfo{Name: b.Name, CreationDate: s3Time(b.Created), BucketRegion: s.region()})
	}
	writeXML(req.w, http.StatusOK, out)
	return nil
}
