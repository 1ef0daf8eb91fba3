package embedded

import (
	"bytes"
	"crypto/md5"
	"encoding/base64"
	"encoding/xml"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// Writes, uploads and deletes: base does them, the sidecar follows.

const bypassGovernance = "X-Amz-Bypass-Governance-Retention"

func bypass(r *http.Request) bool {
	return strings.EqualFold(strings.TrimSpace(r.Header.Get(bypassGovernance)), "true")
}

var errLocked = &mpError{http.StatusForbidden, "AccessDenied", "Access Denied because object protected by object lock."}

// writeAttrs reads the tags, lock and ACL a write asks for, and checks the
// lock against the bucket's configuration; a write without lock headers in
// a bucket with a default retention gets it (applyDefault, at the write).
func (h *attrsHandler) writeAttrs(r *http.Request, bucket, key string) (objAttrs, bucketAttrs, error) {
	o := objAttrs{Key: key}
	b, err := h.a.bucket(bucket)
	if err != nil {
		return o, b, err
	}
	if err := parseLockHeaders(r.Header, &o); err != nil {
		return o, b, err
	}
	if (o.Mode != "" || o.LegalHold != "") && !b.LockEnabled {
		return o, b, errNoLockConfig()
	}
	if v := r.Header.Get("X-Amz-Tagging"); strings.TrimSpace(v) != "" {
		if o.Tags, err = parseTagQuery(v); err != nil {
			return o, b, err
		}
	}
	if o.ACL, err = aclFromHeaders(r.Header); err != nil {
		return o, b, err
	}
	return o, b, nil
}

// lockIn holds the stripes of keys in a bucket with Object Lock, where a
// lock check must not be overtaken by a change of the lock (only there can
// a version be locked); elsewhere writes of different keys never wait on
// each other.
func (h *attrsHandler) lockIn(b bucketAttrs, bucket string, keys ...string) func() {
	if !b.LockEnabled {
		return func() {}
	}
	return h.lockKeys(bucket, keys...)
}

// applyDefault gives o the bucket's default retention when it asks for
// none.
func applyDefault(o *objAttrs, b bucketAttrs, now time.Time) {
	if o.Mode != "" || b.Lock == nil || !b.LockEnabled {
		return
	}
	o.Mode = b.Lock.Mode
	o.RetainUntil = now.AddDate(b.Lock.Years, 0, b.Lock.Days).UTC()
}

// guardNull refuses a write or an unversioned delete that would destroy
// key's "null" version while it is locked: in a bucket whose versioning
// is not enabled, the store replaces that version instead of keeping it.
func (h *attrsHandler) guardNull(r *http.Request, bucket, key string) error {
	o, err := h.a.object(bucket, key, "null")
	if err != nil {
		return err
	}
	if !o.locked(time.Now(), bypass(r)) || h.versioningEnabled(r, bucket) {
		return nil
	}
	return errLocked
}

// serveWrite is PutObject and CopyObject.
func (h *attrsHandler) serveWrite(w http.ResponseWriter, r *http.Request, bucket, key string) error {
	o, b, err := h.writeAttrs(r, bucket, key)
	if err != nil {
		return err
	}
	if src := r.Header.Get("X-Amz-Copy-Source"); src != "" {
		switch r.Header.Get("X-Amz-Tagging-Directive") {
		case "REPLACE":
		case "", "COPY":
			if o.Tags, err = h.sourceTags(r, src); err != nil {
				return err
			}
		default:
			return &mpError{http.StatusBadRequest, "InvalidArgument", "Unknown tagging directive."}
		}
	}
	defer h.lockIn(b, bucket, key)()
	if err := h.guardNull(r, bucket, key); err != nil {
		return err
	}
	applyDefault(&o, b, time.Now())
	rec, filed, err := h.recordFirst(r, bucket, o)
	if err != nil {
		return err
	}
	if rec.ok() && rec.versionID() != filed {
		o.VersionID = rec.versionID()
		if err := h.a.putObject(bucket, o); err != nil {
			slog.Error("embedded store: a written object's tags and lock could not be kept", "bucket", bucket, "err", err)
			return &mpError{http.StatusInternalServerError, "InternalError", "The object was written but its tags and lock could not be kept; write it again."}
		}
	}
	rec.replay(w)
	return nil
}

// recordFirst runs the write r through base, its record o kept first: in
// a bucket with versioning enabled the sidecar chooses the version id,
// files o under it and passes it down (wantVersionKey), so the version is
// never seen without its lock, even after a crash (a record of a version
// never written is harmless: no version bears its id). Elsewhere the new
// version is "null", whose record is the old version's until the write
// succeeds, and the caller files o after it; so does a caller whose write
// raced a change of the versioning status (another id answered).
// It returns base's answer and the id o was filed under ("" for none).
func (h *attrsHandler) recordFirst(r *http.Request, bucket string, o objAttrs) (*answerRecorder, string, error) {
	o.VersionID = ""
	if h.versioningEnabled(r, bucket) {
		o.VersionID = newVersionID()
		if err := h.a.putObject(bucket, o); err != nil {
			slog.Error("embedded store: a write's tags and lock could not be kept", "bucket", bucket, "err", err)
			return nil, "", &mpError{http.StatusInternalServerError, "InternalError", "The object's tags and lock could not be kept; nothing was written."}
		}
		r.Header.Set(wantVersionKey, o.VersionID)
	}
	rec := h.record(r)
	if o.VersionID != "" && (!rec.ok() || rec.versionID() != o.VersionID) {
		if err := h.a.dropObject(bucket, o.Key, o.VersionID); err != nil {
			slog.Warn("embedded store: the record of a version not written stays", "bucket", bucket, "err", err)
		}
		return rec, "", nil
	}
	return rec, o.VersionID, nil
}

// sourceTags are the tags of a copy's source version.
func (h *attrsHandler) sourceTags(r *http.Request, src string) ([]tag, error) {
	p, rawQ, _ := strings.Cut(src, "?")
	if u, err := url.PathUnescape(p); err == nil {
		p = u
	}
	sb, sk, ok := strings.Cut(strings.TrimPrefix(p, "/"), "/")
	if !ok {
		return nil, &mpError{http.StatusBadRequest, "InvalidArgument", "Copy Source must mention the source bucket and key: sourcebucket/sourcekey."}
	}
	sq, _ := url.ParseQuery(rawQ)
	hr := inner(r.Context(), r, http.MethodHead, "/"+sb+"/"+sk, url.Values{})
	if sq.Has("versionId") {
		hr.URL.RawQuery = url.Values{"versionId": {sq.Get("versionId")}}.Encode()
	}
	vid, _, err := h.headVersion(hr, sb, sk)
	if err != nil {
		return nil, err
	}
	so, err := h.a.object(sb, sk, vid)
	return so.Tags, err
}

// serveCreateUpload keeps an upload's tags and lock until it completes.
func (h *attrsHandler) serveCreateUpload(w http.ResponseWriter, r *http.Request, bucket, key string) error {
	o, _, err := h.writeAttrs(r, bucket, key)
	if err != nil {
		return err
	}
	rec := h.record(r)
	if rec.ok() {
		var res struct {
			UploadID string `xml:"UploadId"`
		}
		if xml.Unmarshal(rec.body.Bytes(), &res) != nil || res.UploadID == "" {
			return &mpError{http.StatusInternalServerError, "InternalError", "The upload was created without an id."}
		}
		if err := h.a.putUpload(bucket, res.UploadID, o); err != nil {
			return err
		}
	}
	rec.replay(w)
	return nil
}

// serveCompleteUpload gives the completed object its upload's record.
func (h *attrsHandler) serveCompleteUpload(w http.ResponseWriter, r *http.Request, bucket, key, id string) error {
	b, err := h.a.bucket(bucket)
	if err != nil {
		return err
	}
	defer h.lockIn(b, bucket, key)()
	if err := h.guardNull(r, bucket, key); err != nil {
		return err
	}
	o, _, err := h.a.upload(bucket, id, false)
	if err != nil {
		return err
	}
	o.Key = key
	applyDefault(&o, b, time.Now())
	rec, filed, err := h.recordFirst(r, bucket, o)
	if err != nil {
		return err
	}
	if rec.ok() {
		if vid := rec.versionID(); vid != filed {
			o.VersionID = vid
			if err := h.a.putObject(bucket, o); err != nil {
				return err
			}
		}
		if err := h.a.dropUpload(bucket, id); err != nil {
			slog.Warn("embedded store: a completed upload's record stays", "bucket", bucket, "err", err)
		}
	}
	rec.replay(w)
	return nil
}

// serveDelete is DeleteObject: a version under a lock is not deleted.
func (h *attrsHandler) serveDelete(w http.ResponseWriter, r *http.Request, bucket, key string) error {
	q := r.URL.Query()
	b, err := h.a.bucket(bucket)
	if err != nil {
		return err
	}
	defer h.lockIn(b, bucket, key)()
	if q.Has("versionId") {
		o, err := h.a.object(bucket, key, q.Get("versionId"))
		if err != nil {
			return err
		}
		if o.locked(time.Now(), bypass(r)) {
			return errLocked
		}
	} else if err := h.guardNull(r, bucket, key); err != nil {
		return err
	}
	rec := h.record(r)
	if rec.ok() {
		h.dropDeleted(bucket, key, q.Get("versionId"), q.Has("versionId"),
			rec.header.Get("X-Amz-Delete-Marker") == "true", rec.header.Get("X-Amz-Version-Id"))
	}
	rec.replay(w)
	return nil
}

// dropDeleted removes the record of the version a successful delete
// removed: the one named, or without a name the "null" version, unless
// the delete only made a (non-null) delete marker.
func (h *attrsHandler) dropDeleted(bucket, key, vid string, named, marker bool, markerVID string) {
	if !named {
		if marker && markerVID != "" && markerVID != "null" {
			return
		}
		vid = "null"
	}
	if err := h.a.dropObject(bucket, key, vid); err != nil {
		slog.Warn("embedded store: a deleted version's record stays", "bucket", bucket, "err", err)
	}
}

// maxDeleteBody bounds a DeleteObjects request (1000 keys of 1 KiB).
const maxDeleteBody = 2 << 20

type deleteReq struct {
	XMLName xml.Name `xml:"Delete"`
	Quiet   bool     `xml:"Quiet"`
	Objects []struct {
		Key       string `xml:"Key"`
		VersionID string `xml:"VersionId,omitempty"`
		ETag      string `xml:"ETag,omitempty"` // a condition base checks
	} `xml:"Object"`
}

type deleteResult struct {
	XMLName xml.Name `xml:"DeleteResult"`
	NS      string   `xml:"xmlns,attr"`
	Deleted []struct {
		Key                   string `xml:"Key"`
		VersionID             string `xml:"VersionId,omitempty"`
		DeleteMarker          bool   `xml:"DeleteMarker,omitempty"`
		DeleteMarkerVersionID string `xml:"DeleteMarkerVersionId,omitempty"`
	} `xml:"Deleted"`
	Errors []deleteError `xml:"Error"`
}

type deleteError struct {
	Key       string `xml:"Key"`
	VersionID string `xml:"VersionId,omitempty"`
	Code      string `xml:"Code"`
	Message   string `xml:"Message"`
}

// serveDeleteObjects is DeleteObjects: entries whose version is locked
// get an AccessDenied error and are not passed to base.
func (h *attrsHandler) serveDeleteObjects(w http.ResponseWriter, r *http.Request, bucket string) error {
	body, err := io.ReadAll(io.LimitReader(r.Body, maxDeleteBody+1))
	if err != nil {
		return err
	}
	var in deleteReq
	if len(body) > maxDeleteBody || xml.Unmarshal(body, &in) != nil {
		return &mpError{http.StatusBadRequest, "MalformedXML", "The XML you provided was not well-formed or did not validate against our published schema."}
	}
	keys := make([]string, len(in.Objects))
	for i, o := range in.Objects {
		keys[i] = o.Key
	}
	b, err := h.a.bucket(bucket)
	if err != nil {
		return err
	}
	defer h.lockIn(b, bucket, keys...)()
	var denied []deleteError
	pass := in
	pass.Objects = pass.Objects[:0:0]
	pass.Quiet = false // the sidecar needs to know what was deleted
	versioned := -1
	for _, o := range in.Objects {
		vid := o.VersionID
		if vid == "" {
			vid = "null"
		}
		rec, err := h.a.object(bucket, o.Key, vid)
		if err != nil {
			return err
		}
		locked := rec.locked(time.Now(), bypass(r))
		if locked && o.VersionID == "" {
			if versioned < 0 {
				versioned = map[bool]int{false: 0, true: 1}[h.versioningEnabled(r, bucket)]
			}
			locked = versioned == 0
		}
		if locked {
			denied = append(denied, deleteError{Key: o.Key, VersionID: o.VersionID, Code: "AccessDenied", Message: errLocked.msg})
			continue
		}
		pass.Objects = append(pass.Objects, o)
	}
	var out deleteResult
	if len(pass.Objects) > 0 {
		nb, _ := xml.Marshal(pass)
		r2 := r.Clone(r.Context())
		r2.Body = io.NopCloser(bytes.NewReader(nb))
		r2.ContentLength = int64(len(nb))
		r2.Header.Set("Content-Length", strconv.Itoa(len(nb)))
		sum := md5.Sum(nb)
		r2.Header.Set("Content-Md5", base64.StdEncoding.EncodeToString(sum[:]))
		rec := h.record(r2)
		if !rec.ok() {
			rec.replay(w)
			return nil
		}
		if err := xml.Unmarshal(rec.body.Bytes(), &out); err != nil {
			return &mpError{http.StatusInternalServerError, "InternalError", "The store's delete result could not be read."}
		}
		for _, d := range out.Deleted {
			// S3 echoes a requested version id in VersionId; an
			// unnamed delete in a versioned bucket names its marker.
			h.dropDeleted(bucket, d.Key, d.VersionID, d.VersionID != "", d.DeleteMarker, d.DeleteMarkerVersionID)
		}
	}
	out.NS = s3XMLNS
	out.Errors = append(out.Errors, denied...)
	if in.Quiet {
		out.Deleted = nil
	}
	return writeXML(w, out)
}
