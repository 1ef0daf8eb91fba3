package s3api

import (
	"encoding/xml"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/gorilla/mux"

	"github.com/s3seal/s3seal/s3api/s3err"
	"github.com/s3seal/s3seal/sealstore"
)

// The version sub-resources and parameters routes serves (kept here, with
// their handlers).
func init() {
	for _, k := range []string{"versioning", "versions", "version-id-marker"} {
		bucketSubs[k] = true
	}
	objectSubs["versionid"] = true
}

// versioningConfiguration is the body of Get/PutBucketVersioning.
type versioningConfiguration struct {
	XMLName   xml.Name `xml:"VersioningConfiguration"`
	Xmlns     string   `xml:"xmlns,attr,omitempty"`
	Status    string   `xml:"Status,omitempty"`
	MfaDelete string   `xml:"MfaDelete,omitempty"`
}

func (s *Server) getBucketVersioning(req *request) error {
	if err := bucketPolicy.check(req.r.Header); err != nil {
		return err
	}
	st, err := s.store.BucketVersioning(req.r.Context(), req.bucket)
	if err != nil {
		return bucketErr(versionErr(err))
	}
	writeXML(req.w, http.StatusOK, versioningConfiguration{Xmlns: s3ns, Status: st})
	return nil
}

func (s *Server) putBucketVersioning(req *request) error {
	if err := bucketPolicy.check(req.r.Header); err != nil {
		return err
	}
	body, err := readXMLBody(req, maxXMLBody)
	if err != nil {
		return err
	}
	var vc versioningConfiguration
	if err := decodeXML(body, &vc); err != nil {
		return err
	}
	switch {
	case vc.Status != "Enabled" && vc.Status != "Suspended":
		return s3err.New(s3err.MalformedXML, "")
	case vc.MfaDelete == "Enabled":
		return s3err.New(s3err.NotImplemented, "s3seal does not implement MFA delete")
	case vc.MfaDelete != "" && vc.MfaDelete != "Disabled":
		return s3err.New(s3err.MalformedXML, "")
	}
	if vc.Status == "Suspended" {
		if err := s.lockForbidsSuspend(req); err != nil {
			return err
		}
	}
	if err := s.store.SetBucketVersioning(req.r.Context(), req.bucket, vc.Status); err != nil {
		return bucketErr(versionErr(err))
	}
	req.w.WriteHeader(http.StatusOK)
	return nil
}

// versionErr passes on the backend's answers about versions that a
// client must see as they are (fromBackend would hide them).
func versionErr(err error) error {
	var be *sealstore.StoreError
	if !errors.As(err, &be) {
		return err
	}
	switch code := s3err.Code(be.Code); code {
	case s3err.NoSuchVersion, s3err.InvalidArgument, s3err.MethodNotAllowed, "IllegalVersioningConfigurationException", s3err.MalformedXML:
		if be.StatusCode > 0 {
			return storeRefusal(be)
		}
		return s3err.New(code, be.Message)
	case "NotImplemented":
		return s3err.New(s3err.NotImplemented, be.Message)
	}
	return err
}

// versionParam reads ?versionId=: "" when absent; present but empty is
// refused, as S3 does.
func versionParam(r *http.Request) (string, error) {
	q := r.URL.Query()
	if !q.Has("versionId") {
		return "", nil
	}
	return checkVersionID(q.Get("versionId"))
}

// checkVersionID refuses a version id no store makes: empty, or not
// well-formed (sealstore.WellFormedVersionID), as S3 does, whatever the
// backend would answer (moto takes any id for a missing version).
func checkVersionID(v string) (string, error) {
	if v == "" {
		return "", s3err.New(s3err.InvalidArgument, "Version id cannot be the empty string")
	}
	if !sealstore.WellFormedVersionID(v) {
		return "", s3err.New(s3err.InvalidArgument, "Invalid version id specified")
	}
	return v, nil
}

// setVersionID sets x-amz-version-id when the object has one.
// writtenVersion is the version id a write answers with: none for "null".
// S3 names no version when a write lands in a bucket without versioning;
// moto answers "null" there, and rclone then asks for ?versionId=null,
// which moto refuses (400).
func writtenVersion(vid string) string {
	if vid == "null" {
		return ""
	}
	return vid
}

func setVersionID(h http.Header, vid string) {
	if vid != "" {
		h.Set("x-amz-version-id", vid)
	}
}

// readErr is objectErr for GET and HEAD of a version: a delete marker
// answers 404 NoSuchKey when it is the current version and 405
// MethodNotAllowed when it was asked for by id, with x-amz-delete-marker
// and its version id, as S3 does.
func readErr(h http.Header, err error, vid string) error {
	var be *sealstore.StoreError
	if errors.As(err, &be) && (be.DeleteMarker || be.Code == "MethodNotAllowed") {
		h.Set("x-amz-delete-marker", "true")
		setVersionID(h, be.VersionID)
		if vid != "" {
			setVersionID(h, vid)
			return s3err.New(s3err.MethodNotAllowed, "The specified method is not allowed against this resource.")
		}
		return s3err.New(s3err.NoSuchKey, "")
	}
	if vid != "" && sealstore.StoreCode(err) == "BadRequest" {
		// A bare 400 to an id s3seal found well-formed (moto's HEAD of
		// an id not its own): no such version.
		return s3err.New(s3err.NoSuchVersion, "")
	}
	return objectErr(versionErr(err))
}

// attributesErr is readErr for GetObjectAttributes: a delete marker is
// 404 NoSuchKey with x-amz-delete-marker, asked for by id too (as
// versitygw's suite expects of S3; GET and HEAD answer 405 there), and a
// version asked for by id that the store does not find is NoSuchVersion
// (the HEAD beneath says only 404).
func attributesErr(h http.Header, err error, vid string) error {
	var be *sealstore.StoreError
	if errors.As(err, &be) && (be.DeleteMarker || be.Code == "MethodNotAllowed") {
		h.Set("x-amz-delete-marker", "true")
		setVersionID(h, be.VersionID)
		setVersionID(h, vid)
		return s3err.New(s3err.NoSuchKey, "")
	}
	if vid != "" && errors.As(err, &be) && (be.Code == "NotFound" || be.Code == "NoSuchKey") {
		return s3err.New(s3err.NoSuchVersion, "")
	}
	return readErr(h, err, vid)
}

// sourceVersionErr is a copy source's HEAD that found nothing (a bare 404)
// for a version asked for by id: NoSuchVersion, as S3 answers it.
func sourceVersionErr(err error, vid string) error {
	if vid != "" && vid != "null" && sealstore.StoreCode(err) == "NotFound" {
		return s3err.New(s3err.NoSuchVersion, "")
	}
	return err
}

// deleteCondition reads S3's conditional delete headers.
func deleteCondition(h http.Header) (*sealstore.DeleteCondition, error) {
	return parseDeleteCondition(h.Get("If-Match"), h.Get("X-Amz-If-Match-Size"), h.Get("X-Amz-If-Match-Last-Modified-Time"))
}

// parseDeleteCondition reads a conditional delete from its three values
// (headers, or a DeleteObjects entry's ETag, Size and LastModifiedTime);
// nil when none is set.
func parseDeleteCondition(ifMatch, size, lastModified string) (*sealstore.DeleteCondition, error) {
	ifMatch, size, lastModified = strings.TrimSpace(ifMatch), strings.TrimSpace(size), strings.TrimSpace(lastModified)
	if ifMatch == "" && size == "" && lastModified == "" {
		return nil, nil
	}
	c := &sealstore.DeleteCondition{Size: -1}
	if ifMatch != "" {
		for _, e := range strings.Split(ifMatch, ",") {
			if e = strings.Trim(strings.TrimPrefix(strings.TrimSpace(e), "W/"), `"`); e != "" {
				c.IfMatch = append(c.IfMatch, e)
			}
		}
		if c.IfMatch == nil {
			return nil, s3err.New(s3err.InvalidArgument, "If-Match must name an ETag or *")
		}
	}
	if size != "" {
		n, err := strconv.ParseInt(size, 10, 64)
		if err != nil || n < 0 {
			return nil, s3err.New(s3err.InvalidArgument, "x-amz-if-match-size must be a non-negative integer")
		}
		c.Size = n
	}
	if lastModified != "" {
		t, err := http.ParseTime(lastModified)
		if err != nil {
			if t, err = time.Parse(time.RFC3339Nano, lastModified); err != nil {
				return nil, s3err.New(s3err.InvalidArgument, "x-amz-if-match-last-modified-time must be an HTTP date or an ISO 8601 time")
			}
		}
		c.LastModified = t
	}
	return c, nil
}

func (s *Server) deleteObject(req *request) error {
	if err := deletePolicy.check(req.r.Header); err != nil {
		return err
	}
	vid, err := versionParam(req.r)
	if err != nil {
		return err
	}
	cond, err := deleteCondition(req.r.Header)
	if err != nil {
		return err
	}
	ctx, err := bypassCtx(req)
	if err != nil {
		return err
	}
	out, err := s.store.DeleteVersion(ctx, sealstore.DeleteInput{Bucket: req.bucket, Key: req.key, VersionID: vid, Cond: cond})
	if err != nil {
		return versionErr(s.lockedDeleteErr(req, vid, err))
	}
	if err := s.forgetObjectACL(req, req.key, vid); err != nil {
		return err
	}
	setVersionID(req.w.Header(), out.VersionID)
	if out.DeleteMarker {
		req.w.Header().Set("x-amz-delete-marker", "true")
	}
	req.w.WriteHeader(http.StatusNoContent)
	return nil
}

// listVersionsResult is the answer of ListObjectVersions. Versions and
// delete markers are one sequence in S3's order, so each entry names its
// own element.
type listVersionsResult struct {
	XMLName             xml.Name       `xml:"ListVersionsResult"`
	Xmlns               string         `xml:"xmlns,attr"`
	Name                string         `xml:"Name"`
	Prefix              string         `xml:"Prefix"`
	KeyMarker           string         `xml:"KeyMarker"`
	VersionIDMarker     string         `xml:"VersionIdMarker"`
	NextKeyMarker       string         `xml:"NextKeyMarker,omitempty"`
	NextVersionIDMarker string         `xml:"NextVersionIdMarker,omitempty"`
	MaxKeys             int32          `xml:"MaxKeys"`
	Delimiter           string         `xml:"Delimiter,omitempty"`
	EncodingType        string         `xml:"EncodingType,omitempty"`
	IsTruncated         bool           `xml:"IsTruncated"`
	Entries             []versionEntry `xml:",any"`
	CommonPrefixes      []commonPrefix `xml:"CommonPrefixes"`
}

type versionEntry struct {
	XMLName      xml.Name // Version or DeleteMarker
	Key          string   `xml:"Key"`
	VersionID    string   `xml:"VersionId"`
	IsLatest     bool     `xml:"IsLatest"`
	LastModified string   `xml:"LastModified"`
	ETag         string   `xml:"ETag,omitempty"`
	Size         *int64   `xml:"Size,omitempty"`
	StorageClass string   `xml:"StorageClass,omitempty"`
	Owner        owner    `xml:"Owner"`
	// The algorithms of the version's kept checksums and their type, as
	// S3 lists them (none kept: neither element).
	ChecksumAlgorithm []string `xml:"ChecksumAlgorithm,omitempty"`
	ChecksumType      string   `xml:"ChecksumType,omitempty"`
}

func (s *Server) listObjectVersions(req *request) error {
	if err := bucketPolicy.check(req.r.Header); err != nil {
		return err
	}
	q := req.r.URL.Query()
	if n, err := strconv.Atoi(q.Get("max-keys")); err == nil && n < 0 {
		// S3's words here, unlike the object listings'.
		return s3err.New(s3err.InvalidArgument, "max-keys cannot be negative")
	}
	li, encode, err := listParams(q)
	if err != nil {
		return err
	}
	in := sealstore.ListVersionsInput{Bucket: req.bucket, Prefix: li.Prefix, Delimiter: li.Delimiter, MaxKeys: li.MaxKeys,
		KeyMarker: q.Get("key-marker"), VersionIDMarker: q.Get("version-id-marker")}
	if q.Has("version-id-marker") && in.VersionIDMarker == "" {
		return s3err.New(s3err.InvalidArgument, "A version-id marker cannot be empty.")
	}
	if in.VersionIDMarker != "" && in.KeyMarker == "" {
		return s3err.New(s3err.InvalidArgument, "A version-id marker cannot be specified without a key marker.")
	}
	enc := encoder(encode)
	out := listVersionsResult{Xmlns: s3ns, Name: req.bucket, Prefix: enc(in.Prefix), KeyMarker: enc(in.KeyMarker),
		VersionIDMarker: in.VersionIDMarker, MaxKeys: in.MaxKeys, Delimiter: enc(in.Delimiter)}
	if encode {
		out.EncodingType = "url"
	}
	var page sealstore.VersionsPage
	if in.MaxKeys == 0 {
		err = s.store.HeadBucket(req.r.Context(), req.bucket)
	} else {
		page, err = s.store.ListVersions(req.r.Context(), in)
	}
	if err != nil {
		return bucketErr(versionErr(err))
	}
	out.IsTruncated = page.IsTruncated
	out.NextKeyMarker, out.NextVersionIDMarker = enc(page.NextKeyMarker), page.NextVersionIDMarker
	owners := s.objectOwners(req)
	for _, e := range page.Entries {
		ve := versionEntry{XMLName: xml.Name{Local: "Version"}, Key: enc(e.Key), VersionID: e.VersionID, IsLatest: e.IsLatest,
			LastModified: s3Time(e.LastModified), Owner: owners(e.Key)}
		if ve.VersionID == "" {
			ve.VersionID = "null"
		}
		if e.DeleteMarker {
			ve.XMLName.Local = "DeleteMarker"
		} else {
			size := e.Size
			ve.ETag, ve.Size, ve.StorageClass = quote(e.ETag), &size, e.StorageClass
			if ve.StorageClass == "" {
				ve.StorageClass = "STANDARD"
			}
			ve.ChecksumAlgorithm, ve.ChecksumType = listedChecksums(e.Checksums)
		}
		out.Entries = append(out.Entries, ve)
	}
	for _, p := range page.CommonPrefixes {
		out.CommonPrefixes = append(out.CommonPrefixes, commonPrefix{Prefix: enc(p)})
	}
	writeXML(req.w, http.StatusOK, out)
	return nil
}

// hasAny matches requests with any of the query parameters.
func hasAny(params ...string) mux.MatcherFunc {
	return func(r *http.Request, _ *mux.RouteMatch) bool {
		q := r.URL.Query()
		for _, p := range params {
			if q.Has(p) {
				return true
			}
		}
		return false
	}
}

func methodNotAllowed(*request) error { return s3err.New(s3err.MethodNotAllowed, "") }

// plainWithVersion matches a request whose only sub-resource parameter is
// versionId (a PutObject or copy naming a version; sub-resources such as
// ?tagging take a versionId of their own).
func plainWithVersion(r *http.Request, _ *mux.RouteMatch) bool {
	q := r.URL.Query()
	if !q.Has("versionId") {
		return false
	}
	for k := range q {
		if lk := strings.ToLower(k); lk != "versionid" && !plainParams[lk] {
			return false
		}
	}
	return true
}

// versionOnWrite refuses a versionId on a write: a write makes a new
// version, it cannot name one.
func versionOnWrite(*request) error {
	return s3err.New(s3err.InvalidArgument, "This operation does not accept a version-id.")
}
