package embedded

import (
	"encoding/xml"
	"errors"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/johannesboyne/gofakes3"

	"github.com/s3seal/s3seal/backend"
)

const s3XMLNS = "http://s3.amazonaws.com/doc/2006-03-01/"

// maxCompleteBody bounds a CompleteMultipartUpload request body (10000
// parts of about 100 bytes each, with room to spare).
const maxCompleteBody = 4 << 20

// serveMultipart answers the multipart requests (query "uploads" or
// "uploadId") itself, on disk, instead of gofakes3. It reports false for
// any other request. bucket and key come from the path-style URL.
func (m *mpStore) serveMultipart(w http.ResponseWriter, r *http.Request, bucket, key string) bool {
	q := r.URL.Query()
	var err error
	switch {
	case q.Has("uploads") && key == "" && r.Method == http.MethodGet:
		err = m.serveListUploads(w, bucket, q)
	case q.Has("uploads") && key != "" && r.Method == http.MethodPost:
		err = m.serveCreate(w, r, bucket, key)
	case q.Has("uploadId") && key != "":
		id := q.Get("uploadId")
		switch r.Method {
		case http.MethodPut:
			err = m.servePart(w, r, bucket, key, id, q)
		case http.MethodPost:
			err = m.serveComplete(w, r, bucket, key, id)
		case http.MethodDelete:
			if err = m.abort(bucket, key, id); err == nil {
				w.WriteHeader(http.StatusNoContent)
			}
		case http.MethodGet:
			err = m.serveListParts(w, bucket, key, id, q)
		default:
			err = &mpError{http.StatusMethodNotAllowed, "MethodNotAllowed", "The specified method is not allowed against this resource."}
		}
	default:
		return false
	}
	if err != nil {
		writeMPError(w, r, err)
	}
	return true
}

func (m *mpStore) serveCreate(w http.ResponseWriter, r *http.Request, bucket, key string) error {
	meta := map[string]string{}
	for k, v := range r.Header {
		if keptMeta(k) && k != etagMetaKey && k != "Last-Modified" && len(v) > 0 {
			meta[k] = v[0]
		}
	}
	id, err := m.create(bucket, key, meta)
	if err != nil {
		return err
	}
	return writeXML(w, struct {
		XMLName  xml.Name `xml:"InitiateMultipartUploadResult"`
		NS       string   `xml:"xmlns,attr"`
		Bucket   string
		Key      string
		UploadID string `xml:"UploadId"`
	}{NS: s3XMLNS, Bucket: bucket, Key: key, UploadID: id})
}

func (m *mpStore) servePart(w http.ResponseWriter, r *http.Request, bucket, key, id string, q url.Values) error {
	if strings.HasPrefix(r.Header.Get("X-Amz-Content-Sha256"), "STREAMING-") {
		return &mpError{http.StatusNotImplemented, "NotImplemented", "aws-chunked part bodies are not supported by the embedded store."}
	}
	n, err := strconv.Atoi(q.Get("partNumber"))
	if err != nil || n < 1 || n > maxPartNumber {
		return &mpError{http.StatusBadRequest, "InvalidArgument", "Part number must be an integer between 1 and 10000, inclusive"}
	}
	if r.Header.Get("X-Amz-Copy-Source") != "" {
		return m.servePartCopy(w, r, bucket, key, id, n)
	}
	if r.ContentLength < 0 {
		return &mpError{http.StatusLengthRequired, "MissingContentLength", "You must provide the Content-Length HTTP header."}
	}
	etag, err := m.uploadPart(bucket, key, id, int32(n), r.Body, r.ContentLength, r.Header.Get("Content-Md5"))
	if err != nil {
		return err
	}
	w.Header().Set("ETag", `"`+etag+`"`)
	w.WriteHeader(http.StatusOK)
	return nil
}

func (m *mpStore) serveComplete(w http.ResponseWriter, r *http.Request, bucket, key, id string) error {
	var in struct {
		Parts []struct {
			PartNumber int32
			ETag       string
		} `xml:"Part"`
	}
	if err := xml.NewDecoder(io.LimitReader(r.Body, maxCompleteBody)).Decode(&in); err != nil {
		return &mpError{http.StatusBadRequest, "MalformedXML", "The XML you provided was not well-formed or did not validate against our published schema."}
	}
	named := make([]backend.CompletedPart, len(in.Parts))
	for i, p := range in.Parts {
		named[i] = backend.CompletedPart{PartNumber: p.PartNumber, ETag: p.ETag}
	}
	etag, vid, err := m.complete(bucket, key, id, named, r.Header.Get("If-Match"), r.Header.Get("If-None-Match"), r.Header.Get(wantVersionKey))
	if err != nil {
		return err
	}
	if vid != "" {
		w.Header().Set("x-amz-version-id", vid)
	}
	return writeXML(w, struct {
		XMLName  xml.Name `xml:"CompleteMultipartUploadResult"`
		NS       string   `xml:"xmlns,attr"`
		Location string
		Bucket   string
		Key      string
		ETag     string
	}{NS: s3XMLNS, Location: "http://" + r.Host + "/" + bucket + "/" + key, Bucket: bucket, Key: key, ETag: `"` + etag + `"`})
}

type xmlPart struct {
	PartNumber   int32
	LastModified string
	ETag         string
	Size         int64
}

func (m *mpStore) serveListParts(w http.ResponseWriter, bucket, key, id string, q url.Values) error {
	if _, err := m.load(bucket, key, id); err != nil {
		return err
	}
	marker, err := queryInt(q, "part-number-marker", 0)
	if err != nil {
		return err
	}
	maxParts, err := queryInt(q, "max-parts", 1000)
	if err != nil {
		return err
	}
	maxParts = min(maxParts, 1000)
	parts, err := m.parts(id)
	if err != nil {
		return err
	}
	res := struct {
		XMLName              xml.Name `xml:"ListPartsResult"`
		NS                   string   `xml:"xmlns,attr"`
		Bucket               string
		Key                  string
		UploadID             string `xml:"UploadId"`
		PartNumberMarker     int
		NextPartNumberMarker int
		MaxParts             int
		IsTruncated          bool
		StorageClass         string
		Parts                []xmlPart `xml:"Part"`
	}{NS: s3XMLNS, Bucket: bucket, Key: key, UploadID: id, PartNumberMarker: marker, MaxParts: maxParts, StorageClass: "STANDARD"}
	for _, p := range parts {
		if int(p.Number) <= marker {
			continue
		}
		if len(res.Parts) >= maxParts {
			res.IsTruncated = true
			break
		}
		res.Parts = append(res.Parts, xmlPart{p.Number, p.ModTime.UTC().Format(time.RFC3339Nano), `"` + p.MD5 + `"`, p.Size})
		res.NextPartNumberMarker = int(p.Number)
	}
	return writeXML(w, res)
}

type xmlUpload struct {
	Key          string
	UploadID     string `xml:"UploadId"`
	Initiated    string
	StorageClass string
}

type xmlPrefix struct{ Prefix string }

func (m *mpStore) serveListUploads(w http.ResponseWriter, bucket string, q url.Values) error {
	if ok, err := m.fb.BucketExists(bucket); err != nil {
		return err
	} else if !ok {
		return gofakes3.BucketNotFound(bucket)
	}
	maxUploads, err := queryInt(q, "max-uploads", 1000)
	if err != nil {
		return err
	}
	maxUploads = min(maxUploads, 1000)
	prefix, delim := q.Get("prefix"), q.Get("delimiter")
	keyMarker, idMarker := q.Get("key-marker"), q.Get("upload-id-marker")
	all, err := m.uploads(bucket)
	if err != nil {
		return err
	}
	res := struct {
		XMLName            xml.Name `xml:"ListMultipartUploadsResult"`
		NS                 string   `xml:"xmlns,attr"`
		Bucket             string
		KeyMarker          string
		UploadIDMarker     string `xml:"UploadIdMarker"`
		NextKeyMarker      string
		NextUploadIDMarker string `xml:"NextUploadIdMarker"`
		Delimiter          string `xml:",omitempty"`
		Prefix             string
		MaxUploads         int
		IsTruncated        bool
		Uploads            []xmlUpload `xml:"Upload"`
		CommonPrefixes     []xmlPrefix `xml:"CommonPrefixes"`
	}{NS: s3XMLNS, Bucket: bucket, KeyMarker: keyMarker, UploadIDMarker: idMarker, Delimiter: delim, Prefix: prefix, MaxUploads: maxUploads}

	// Listing resumes after key-marker or, with an upload-id-marker, after
	// that upload of key-marker (in listing order).
	pastID := false
	lastPrefix := ""
	for _, up := range all {
		if !strings.HasPrefix(up.Key, prefix) {
			continue
		}
		if up.Key < keyMarker {
			continue
		}
		if up.Key == keyMarker && !pastID {
			pastID = up.ID == idMarker // uploads of one key are adjacent
			continue
		}
		cp := ""
		if delim != "" {
			if i := strings.Index(up.Key[len(prefix):], delim); i >= 0 {
				cp = up.Key[:len(prefix)+i+len(delim)]
				if cp == lastPrefix || cp <= keyMarker {
					continue
				}
			}
		}
		if len(res.Uploads)+len(res.CommonPrefixes) >= maxUploads {
			res.IsTruncated = true
			break
		}
		if cp != "" {
			lastPrefix = cp
			res.CommonPrefixes = append(res.CommonPrefixes, xmlPrefix{cp})
			res.NextKeyMarker, res.NextUploadIDMarker = cp, ""
			continue
		}
		class := up.Meta["X-Amz-Storage-Class"]
		if class == "" {
			class = "STANDARD"
		}
		res.Uploads = append(res.Uploads, xmlUpload{up.Key, up.ID, up.Initiated.Format(time.RFC3339Nano), class})
		res.NextKeyMarker, res.NextUploadIDMarker = up.Key, up.ID
	}
	return writeXML(w, res)
}

func queryInt(q url.Values, name string, def int) (int, error) {
	if !q.Has(name) {
		return def, nil
	}
	n, err := strconv.Atoi(q.Get(name))
	if err != nil || n < 0 {
		return 0, &mpError{http.StatusBadRequest, "InvalidArgument", "Invalid value for " + name}
	}
	return n, nil
}

func writeXML(w http.ResponseWriter, v any) error {
	b, err := xml.Marshal(v)
	if err != nil {
		return err
	}
	w.Header().Set("Content-Type", "application/xml")
	w.WriteHeader(http.StatusOK)
	w.Write([]byte(xml.Header))
	w.Write(b)
	return nil
}

// writeMPError renders err as an S3 error: an *mpError or a gofakes3 error
// with its code, anything else as InternalError.
func writeMPError(w http.ResponseWriter, r *http.Request, err error) {
	e := &mpError{http.StatusInternalServerError, "InternalError", "We encountered an internal error. Please try again."}
	var me *mpError
	var ge gofakes3.Error
	switch {
	case errors.As(err, &me):
		e = me
	case errors.As(err, &ge):
		e = &mpError{ge.ErrorCode().Status(), string(ge.ErrorCode()), ge.Error()}
		var gr *gofakes3.ErrorResponse
		if errors.As(err, &gr) && gr.Message != "" {
			e.msg = gr.Message
		}
	}
	w.Header().Set("Content-Type", "application/xml")
	w.WriteHeader(e.status)
	if r.Method == http.MethodHead {
		return
	}
	b, _ := xml.Marshal(struct {
		XMLName xml.Name `xml:"Error"`
		Code    string
		Message string
	}{Code: e.code, Message: e.msg})
	w.Write([]byte(xml.Header))
	w.Write(b)
}
