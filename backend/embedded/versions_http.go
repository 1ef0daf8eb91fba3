package embedded

import (
	"bytes"
	"encoding/hex"
	"encoding/xml"
	"errors"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/johannesboyne/gofakes3"
)

// serveVersions answers the requests of versioned buckets that gofakes3
// routes wrongly or not at all (it reads ?versionId=null as the current
// object, ignores versionId on HEAD and in copy sources, and keeps no
// versions on disk): Get/PutBucketVersioning, ListObjectVersions,
// DeleteObjects, DELETE with a versionId or in a bucket with versioning,
// and copies from or into such a bucket. GET and HEAD go through
// serveRead. It reports whether it answered.
func (b *fixedBackend) serveVersions(w http.ResponseWriter, r *http.Request, bucket, key string) bool {
	q := r.URL.Query()
	q.Del("x-id") // the Go SDK names its operation so
	var err error
	switch {
	case key == "" && q.Has("versioning") && (r.Method == http.MethodGet || r.Method == http.MethodPut):
		err = b.serveVersioning(w, r, bucket)
	case key == "" && q.Has("versions") && r.Method == http.MethodGet:
		err = b.serveListVersions(w, bucket, q)
	case key == "" && q.Has("delete") && r.Method == http.MethodPost:
		var done bool
		done, err = b.serveDeleteObjects(w, r, bucket)
		if !done {
			return false
		}
	// queryError (query.go) let through only the parameters an
	// object's DELETE or PUT takes; uploads and sub-resources are taken
	// before this.
	case key != "" && r.Method == http.MethodDelete && !q.Has("uploadId") && !q.Has("tagging") &&
		(q.Has("versionId") || b.versioning(bucket) != ""):
		var res gofakes3.ObjectDeleteResult
		res, err = b.versionedDelete(bucket, key, q.Get("versionId"), r.Header.Get("If-Match"))
		if err == nil {
			if res.IsDeleteMarker {
				w.Header().Set("x-amz-delete-marker", "true")
			}
			if res.VersionID != "" {
				w.Header().Set("x-amz-version-id", string(res.VersionID))
			}
			w.WriteHeader(http.StatusNoContent)
		}
	case key != "" && r.Method == http.MethodPut && r.Header.Get("X-Amz-Copy-Source") != "" && !q.Has("uploadId") && !q.Has("partNumber"):
		var done bool
		done, err = b.serveCopy(w, r, bucket, key)
		if !done {
			return false
		}
	default:
		return false
	}
	if err != nil {
		writeMPError(w, r, err)
	}
	return true
}

// serveRead answers GET and HEAD of a version by id, and of a key whose
// latest version is a delete marker (404 with x-amz-delete-marker, as S3);
// anything else goes to next (gofakes3).
func (b *fixedBackend) serveRead(w http.ResponseWriter, r *http.Request, bucket, key string, next http.Handler) {
	q := r.URL.Query()
	if !plainRead(q) {
		next.ServeHTTP(w, r) // a sub-resource (tagging, acl...) of a version
		return
	}
	if !q.Has("versionId") {
		if b.versioning(bucket) != "" {
			if m := b.latestMarker(bucket, key); m != nil {
				w.Header().Set("x-amz-delete-marker", "true")
				w.Header().Set("x-amz-version-id", m.VersionID)
				writeMPError(w, r, gofakes3.KeyNotFound(key))
				return
			}
		}
		next.ServeHTTP(w, r)
		return
	}
	var rng *gofakes3.ObjectRangeRequest
	if h := r.Header.Get("Range"); h != "" {
		var ok bool
		if rng, ok = parseRange(h); !ok {
			rng = nil // S3 ignores a Range it cannot parse
		}
	}
	obj, err := b.getVersion(bucket, key, q.Get("versionId"), rng)
	var em *errMarker
	if errors.As(err, &em) {
		w.Header().Set("x-amz-delete-marker", "true")
		w.Header().Set("x-amz-version-id", em.e.VersionID)
		w.Header().Set("Last-Modified", em.e.ModTime.UTC().Format(http.TimeFormat))
		writeMPError(w, r, &mpError{http.StatusMethodNotAllowed, "MethodNotAllowed", "The specified method is not allowed against this resource."})
		return
	}
	if err != nil {
		writeMPError(w, r, err)
		return
	}
	defer obj.Contents.Close()
	h := w.Header()
	for k, v := range obj.Metadata {
		if k != etagMetaKey {
			h.Set(k, v)
		}
	}
	etag := obj.Metadata[etagMetaKey]
	if etag == "" {
		etag = hex.EncodeToString(obj.Hash)
	}
	h.Set("ETag", `"`+etag+`"`)
	h.Set("x-amz-version-id", string(obj.VersionID))
	h.Set("Accept-Ranges", "bytes")
	status := http.StatusOK
	length := obj.Size
	if obj.Range != nil {
		status, length = http.StatusPartialContent, obj.Range.Length
		h.Set("Content-Range", "bytes "+strconv.FormatInt(obj.Range.Start, 10)+"-"+
			strconv.FormatInt(obj.Range.Start+obj.Range.Length-1, 10)+"/"+strconv.FormatInt(obj.Size, 10))
	}
	h.Set("Content-Length", strconv.FormatInt(length, 10))
	w.WriteHeader(status)
	if r.Method == http.MethodGet {
		io.Copy(w, obj.Contents)
	}
}

// parseRange parses a single "bytes=" range.
func parseRange(v string) (*gofakes3.ObjectRangeRequest, bool) {
	spec, ok := strings.CutPrefix(v, "bytes=")
	if !ok || strings.Contains(spec, ",") {
		return nil, false
	}
	a, c, ok := strings.Cut(spec, "-")
	if !ok {
		return nil, false
	}
	if a == "" {
		n, err := strconv.ParseInt(c, 10, 64)
		return &gofakes3.ObjectRangeRequest{End: n, FromEnd: true}, err == nil && n >= 0
	}
	first, err := strconv.ParseInt(a, 10, 64)
	if err != nil || first < 0 {
		return nil, false
	}
	if c == "" {
		return &gofakes3.ObjectRangeRequest{Start: first, End: gofakes3.RangeNoEnd}, true
	}
	last, err := strconv.ParseInt(c, 10, 64)
	return &gofakes3.ObjectRangeRequest{Start: first, End: last}, err == nil && last >= first
}

type versioningDoc struct {
	XMLName   xml.Name `xml:"VersioningConfiguration"`
	NS        string   `xml:"xmlns,attr,omitempty"`
	Status    string   `xml:"Status,omitempty"`
	MFADelete string   `xml:"MfaDelete,omitempty"`
}

func (b *fixedBackend) serveVersioning(w http.ResponseWriter, r *http.Request, bucket string) error {
	if ok, err := b.BucketExists(bucket); err != nil || !ok {
		return gofakes3.BucketNotFound(bucket)
	}
	if r.Method == http.MethodGet {
		return writeXML(w, versioningDoc{NS: s3XMLNS, Status: b.versioning(bucket)})
	}
	var in versioningDoc
	if err := xml.NewDecoder(io.LimitReader(r.Body, 64<<10)).Decode(&in); err != nil ||
		(in.Status != string(gofakes3.VersioningEnabled) && in.Status != string(gofakes3.VersioningSuspended)) {
		return &mpError{http.StatusBadRequest, "MalformedXML", "The XML you provided was not well-formed or did not validate against our published schema."}
	}
	if in.MFADelete == "Enabled" {
		return &mpError{http.StatusNotImplemented, "NotImplemented", "The embedded store does not implement MFA delete."}
	}
	if err := b.setVersioning(bucket, in.Status); err != nil {
		return err
	}
	w.WriteHeader(http.StatusOK)
	return nil
}

type xmlVersion struct {
	XMLName      xml.Name
	Key          string
	VersionID    string `xml:"VersionId"`
	IsLatest     bool
	LastModified string
	ETag         string `xml:",omitempty"`
	Size         *int64 `xml:",omitempty"`
	StorageClass string `xml:",omitempty"`
}

func (b *fixedBackend) serveListVersions(w http.ResponseWriter, bucket string, q url.Values) error {
	if ok, err := b.BucketExists(bucket); err != nil || !ok {
		return gofakes3.BucketNotFound(bucket)
	}
	maxKeys := 1000
	if v := q.Get("max-keys"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			return &mpError{http.StatusBadRequest, "InvalidArgument", "Provided max-keys not an integer or within integer range"}
		}
		maxKeys = min(n, 1000)
	}
	vm := q.Get("version-id-marker")
	if vm != "" && q.Get("key-marker") == "" {
		return &mpError{http.StatusBadRequest, "InvalidArgument", "A version-id marker cannot be specified without a key marker."}
	}
	prefix := q.Get("prefix")
	rows, err := b.allVersions(bucket, prefix)
	if err != nil {
		return err
	}
	p := pageVersions(rows, prefix, q.Get("delimiter"), q.Get("key-marker"), vm, maxKeys)
	out := struct {
		XMLName             xml.Name `xml:"ListVersionsResult"`
		NS                  string   `xml:"xmlns,attr"`
		Name                string
		Prefix              string
		KeyMarker           string
		VersionIDMarker     string `xml:"VersionIdMarker"`
		NextKeyMarker       string `xml:",omitempty"`
		NextVersionIDMarker string `xml:"NextVersionIdMarker,omitempty"`
		MaxKeys             int
		Delimiter           string `xml:",omitempty"`
		IsTruncated         bool
		Items               []xmlVersion
		CommonPrefixes      []struct{ Prefix string }
	}{NS: s3XMLNS, Name: bucket, Prefix: prefix, KeyMarker: q.Get("key-marker"), VersionIDMarker: vm,
		MaxKeys: maxKeys, Delimiter: q.Get("delimiter"), IsTruncated: p.Truncated}
	if p.Truncated {
		out.NextKeyMarker, out.NextVersionIDMarker = p.NextKeyMarker, p.NextVersionMarker
	}
	for _, r := range p.Rows {
		x := xmlVersion{XMLName: xml.Name{Local: "Version"}, Key: r.Key, VersionID: r.VersionID, IsLatest: r.IsLatest,
			LastModified: r.LastModified.UTC().Format("2006-01-02T15:04:05.000Z")}
		if r.DeleteMarker {
			x.XMLName.Local = "DeleteMarker"
		} else {
			size := r.Size
			x.ETag, x.Size, x.StorageClass = `"`+r.ETag+`"`, &size, r.StorageClass
			if x.StorageClass == "" {
				x.StorageClass = "STANDARD"
			}
		}
		out.Items = append(out.Items, x)
	}
	for _, cp := range p.Prefixes {
		out.CommonPrefixes = append(out.CommonPrefixes, struct{ Prefix string }{cp})
	}
	return writeXML(w, out)
}

// serveDeleteObjects answers DeleteObjects when the bucket has versioning
// or an entry names a version; otherwise it reports false and leaves the
// request (its body restored) to gofakes3.
func (b *fixedBackend) serveDeleteObjects(w http.ResponseWriter, r *http.Request, bucket string) (bool, error) {
	body, err := io.ReadAll(io.LimitReader(r.Body, 4<<20))
	if err != nil {
		return true, err
	}
	var in struct {
		Quiet   bool
		Objects []struct {
			Key       string
			VersionID *string `xml:"VersionId"`
			ETag      string
		} `xml:"Object"`
	}
	xerr := xml.Unmarshal(body, &in)
	named := false
	for _, o := range in.Objects {
		named = named || o.VersionID != nil || o.ETag != ""
	}
	if xerr == nil && !named && b.versioning(bucket) == "" {
		r.Body = io.NopCloser(bytes.NewReader(body))
		return false, nil
	}
	if xerr != nil || len(in.Objects) > 1000 {
		return true, &mpError{http.StatusBadRequest, "MalformedXML", "The XML you provided was not well-formed or did not validate against our published schema."}
	}
	if ok, err := b.BucketExists(bucket); err != nil || !ok {
		return true, gofakes3.BucketNotFound(bucket)
	}
	type deleted struct {
		Key                   string
		VersionID             string `xml:"VersionId,omitempty"`
		DeleteMarker          bool   `xml:",omitempty"`
		DeleteMarkerVersionID string `xml:"DeleteMarkerVersionId,omitempty"`
	}
	type failed struct {
		Key       string
		VersionID string `xml:"VersionId,omitempty"`
		Code      string
		Message   string
	}
	out := struct {
		XMLName xml.Name `xml:"DeleteResult"`
		NS      string   `xml:"xmlns,attr"`
		Deleted []deleted
		Error   []failed
	}{NS: s3XMLNS}
	for _, o := range in.Objects {
		vid := ""
		if o.VersionID != nil {
			vid = *o.VersionID
		}
		var res gofakes3.ObjectDeleteResult
		var err error
		if vid == "" && o.VersionID != nil {
			err = errNoSuchVersion()
		} else if vid == "" && b.versioning(bucket) == "" {
			_, err = b.DeleteObject(bucket, o.Key)
		} else {
			res, err = b.versionedDelete(bucket, o.Key, vid, o.ETag)
		}
		if err != nil {
			me := &mpError{http.StatusInternalServerError, "InternalError", "We encountered an internal error. Please try again."}
			var ge gofakes3.Error
			if !errors.As(err, &me) && errors.As(err, &ge) {
				me = &mpError{ge.ErrorCode().Status(), string(ge.ErrorCode()), ge.Error()}
			}
			out.Error = append(out.Error, failed{Key: o.Key, VersionID: vid, Code: me.code, Message: me.msg})
			continue
		}
		if in.Quiet {
			continue
		}
		d := deleted{Key: o.Key, VersionID: vid, DeleteMarker: res.IsDeleteMarker}
		if res.IsDeleteMarker {
			d.DeleteMarkerVersionID = string(res.VersionID)
		}
		out.Deleted = append(out.Deleted, d)
	}
	return true, writeXML(w, out)
}

// serveCopy answers CopyObject when the source names a version, either
// bucket has versioning or the metadata directive is REPLACE; otherwise
// it reports false (gofakes3 copies). The destination's metadata is the
// request's, with the source's entries it lacks (as gofakes3 merges
// them) but for user metadata under REPLACE, which replaces the source's
// as on S3; x-amz-copy-source-if-match is decided against the source
// version read.
func (b *fixedBackend) serveCopy(w http.ResponseWriter, r *http.Request, bucket, key string) (bool, error) {
	src := r.Header.Get("X-Amz-Copy-Source")
	srcBucket, srcKey, ok := parseCopySource(src)
	_, rawQ, hasQ := strings.Cut(src, "?")
	sq, _ := url.ParseQuery(rawQ)
	vid := sq.Get("versionId")
	if !ok || (hasQ && sq.Has("versionId") && vid == "") {
		return true, &mpError{http.StatusBadRequest, "InvalidArgument", "Copy Source must mention the source bucket and key: sourcebucket/sourcekey."}
	}
	replace := strings.EqualFold(r.Header.Get("X-Amz-Metadata-Directive"), "REPLACE")
	if vid == "" && b.versioning(bucket) == "" && b.versioning(srcBucket) == "" && !replace {
		return false, nil
	}
	obj, err := b.getVersion(srcBucket, srcKey, vid, nil)
	if errors.As(err, new(*errMarker)) {
		return true, &mpError{http.StatusBadRequest, "InvalidRequest", "The source of a copy request may not specifically refer to a delete marker by version id."}
	}
	if err != nil {
		return true, err
	}
	defer obj.Contents.Close()
	etag := obj.Metadata[etagMetaKey]
	if etag == "" {
		etag = hex.EncodeToString(obj.Hash)
	}
	if im := r.Header.Get("X-Amz-Copy-Source-If-Match"); im != "" && !etagMatches(im, etag) {
		return true, gofakes3.ErrPreconditionFailed
	}
	meta := map[string]string{}
	for k, vs := range r.Header {
		if strings.HasPrefix(k, "X-Amz-") || k == "Content-Type" || k == "Content-Disposition" || k == "Content-Encoding" {
			meta[k] = vs[0]
		}
	}
	for k, v := range obj.Metadata {
		for _, s := range smuggledHeaders {
			if k == s {
				k = stdHeaderPrefix + s
			}
		}
		if replace && replacedByCopy(k) {
			continue
		}
		if _, found := meta[k]; !found && k != "X-Amz-Acl" {
			meta[k] = v
		}
	}
	meta["Last-Modified"] = time.Now().UTC().Format(http.TimeFormat)
	check := func() error {
		im := r.Header.Get("X-Amz-Copy-Source-If-Match")
		if im == "" || vid != "" || srcBucket != bucket || srcKey != key {
			return nil
		}
		cur, err := b.currentOf(bucket, key)
		if err != nil {
			return err
		}
		if !cur.exists || storedETag(cur.meta) != etag {
			return gofakes3.ErrPreconditionFailed
		}
		return nil
	}
	res, err := b.putObject(bucket, key, meta, obj.Contents, obj.Size, nil, check)
	if err != nil {
		return true, err
	}
	if obj.VersionID != "" {
		w.Header().Set("x-amz-copy-source-version-id", string(obj.VersionID))
	} else if b.versioning(srcBucket) != "" {
		w.Header().Set("x-amz-copy-source-version-id", nullID)
	}
	if res.VersionID != "" {
		w.Header().Set("x-amz-version-id", string(res.VersionID))
	}
	return true, writeXML(w, struct {
		XMLName      xml.Name `xml:"CopyObjectResult"`
		NS           string   `xml:"xmlns,attr"`
		LastModified string
		ETag         string
	}{NS: s3XMLNS, LastModified: time.Now().UTC().Format("2006-01-02T15:04:05.000Z"), ETag: `"` + etag + `"`})
}

// plainRead reports whether a GET or HEAD query reads the object itself:
// nothing in it but versionId and the SDK's x-id (s3seal sends no
// response-* overrides or partNumber to its store).
func plainRead(q url.Values) bool {
	for k := range q {
		if k != "versionId" && k != "x-id" {
			return false
		}
	}
	return true
}

// replacedByCopy reports whether a stored metadata key is what a copy's
// REPLACE directive replaces: user metadata, the content headers, the
// storage class, the redirect and the encryption (a copy takes the last
// three from its request only, as on S3).
func replacedByCopy(k string) bool {
	switch k {
	case "Content-Type", "Content-Encoding", "Content-Disposition", "X-Amz-Website-Redirect-Location", "X-Amz-Storage-Class":
		return true
	}
	return strings.HasPrefix(k, "X-Amz-Meta-") || strings.HasPrefix(k, stdHeaderPrefix) || strings.HasPrefix(k, "X-Amz-Server-Side-Encryption")
}
