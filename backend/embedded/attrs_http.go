package embedded

import (
	"bytes"
	"context"
	"hash/fnv"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"sync"

	"github.com/s3seal/s3seal/backend"
)

// The embedded store's sidecar (attrStore) is served here, in front of the
// rest of the embedded handler (base): the sub-resources gofakes3 lacks are
// answered from the sidecar; writes, deletes, reads and multipart uploads
// go to base and the sidecar follows what base answered (the version id
// it names, "null" when none). Object Lock is enforced here, for every
// request, s3seal's own included: s3seal's backend credential is the only
// one that reaches the store.

// attrsHandler serves the sidecar's part of the embedded store.
type attrsHandler struct {
	a     *attrStore
	base  http.Handler
	locks [256]sync.Mutex // striped by bucket and key: a lock check and the change it guards
}

func newAttrsHandler(a *attrStore, base http.Handler) *attrsHandler {
	return &attrsHandler{a: a, base: base}
}

func (h *attrsHandler) stripe(bucket, key string) int {
	f := fnv.New32a()
	f.Write([]byte(bucket + "\x00" + key))
	return int(f.Sum32() % uint32(len(h.locks)))
}

// lockKeys holds the stripes of keys (in order, so that two callers never
// wait on each other) and returns their release.
func (h *attrsHandler) lockKeys(bucket string, keys ...string) func() {
	idx := map[int]bool{}
	for _, k := range keys {
		idx[h.stripe(bucket, k)] = true
	}
	order := make([]int, 0, len(idx))
	for i := range idx {
		order = append(order, i)
	}
	sort.Ints(order)
	for _, i := range order {
		h.locks[i].Lock()
	}
	return func() {
		for j := len(order) - 1; j >= 0; j-- {
			h.locks[order[j]].Unlock()
		}
	}
}

func (h *attrsHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	bucket, key, isObject := strings.Cut(strings.TrimPrefix(r.URL.Path, "/"), "/")
	var err error
	if !isObject || key == "" {
		err = h.serveBucket(w, r, bucket)
	} else {
		err = h.serveObject(w, r, bucket, key)
	}
	if err != nil {
		writeMPError(w, r, err)
	}
}

func (h *attrsHandler) serveObject(w http.ResponseWriter, r *http.Request, bucket, key string) error {
	q := r.URL.Query()
	switch {
	case q.Has("tagging"):
		return h.serveObjectTagging(w, r, bucket, key)
	case q.Has("retention"):
		return h.serveRetention(w, r, bucket, key)
	case q.Has("legal-hold"):
		return h.serveLegalHold(w, r, bucket, key)
	case q.Has("acl"):
		return h.serveObjectACL(w, r, bucket, key)
	}
	switch {
	case r.Method == http.MethodPut && !q.Has("uploadId"):
		return h.serveWrite(w, r, bucket, key)
	case r.Method == http.MethodPost && q.Has("uploads"):
		return h.serveCreateUpload(w, r, bucket, key)
	case r.Method == http.MethodPost && q.Has("uploadId"):
		return h.serveCompleteUpload(w, r, bucket, key, q.Get("uploadId"))
	case r.Method == http.MethodDelete && q.Has("uploadId"):
		rec := h.record(r)
		if rec.ok() {
			if err := h.a.dropUpload(bucket, q.Get("uploadId")); err != nil {
				slog.Warn("embedded store: an aborted upload's record stays", "bucket", bucket, "err", err)
			}
		}
		rec.replay(w)
		return nil
	case r.Method == http.MethodDelete:
		return h.serveDelete(w, r, bucket, key)
	case r.Method == http.MethodGet || r.Method == http.MethodHead:
		aw := &attrHeaderWriter{ResponseWriter: w, h: h, bucket: bucket, key: key, vid: q.Get("versionId")}
		h.base.ServeHTTP(aw, r)
		aw.fix(http.StatusOK) // a HEAD that wrote nothing: the status goes out after
		return nil
	}
	h.base.ServeHTTP(w, r)
	return nil
}

// answerRecorder keeps an answer of base to replay it, or to read it.
type answerRecorder struct {
	header http.Header
	status int
	body   bytes.Buffer
}

// maxRecorded bounds what a answerRecorder keeps of a body: the answers
// recorded are documents (copy results, upload ids, delete results).
const maxRecorded = 8 << 20

func (rc *answerRecorder) Header() http.Header { return rc.header }
func (rc *answerRecorder) WriteHeader(code int) {
	if rc.status == 0 {
		rc.status = code
	}
}
func (rc *answerRecorder) Write(p []byte) (int, error) {
	if rc.status == 0 {
		rc.status = http.StatusOK
	}
	if rc.body.Len()+len(p) > maxRecorded {
		return 0, io.ErrShortWrite
	}
	return rc.body.Write(p)
}

// ok reports a 2xx answer that is no <Error> document.
func (rc *answerRecorder) ok() bool {
	if rc.status == 0 {
		rc.status = http.StatusOK
	}
	if rc.status/100 != 2 {
		return false
	}
	_, _, isErr := backend.ErrorDocument(rc.body.Bytes())
	return !isErr
}

func (rc *answerRecorder) versionID() string { return nullVID(rc.header.Get("X-Amz-Version-Id")) }

func (rc *answerRecorder) replay(w http.ResponseWriter) {
	for k, vs := range rc.header {
		w.Header()[k] = vs
	}
	if rc.status == 0 {
		rc.status = http.StatusOK
	}
	w.WriteHeader(rc.status)
	w.Write(rc.body.Bytes())
}

// record runs r through base and keeps the answer.
func (h *attrsHandler) record(r *http.Request) *answerRecorder {
	rc := &answerRecorder{header: http.Header{}}
	h.base.ServeHTTP(rc, r)
	return rc
}

// inner is a bodiless request of the store to itself (a HEAD that finds a
// version, a GET ?versioning).
func inner(ctx context.Context, r *http.Request, method, path string, q url.Values) *http.Request {
	u := &url.URL{Path: path, RawQuery: q.Encode()}
	in, _ := http.NewRequestWithContext(ctx, method, u.String(), nil)
	in.Host = r.Host
	in.Body = http.NoBody
	return in
}

// headVersion finds the version a sub-resource request is about: the one
// named by versionId, else the current one. It returns the version id the
// store names ("null" for none) and whether it named one.
func (h *attrsHandler) headVersion(r *http.Request, bucket, key string) (string, bool, error) {
	q := url.Values{}
	vid := r.URL.Query().Get("versionId")
	if r.URL.Query().Has("versionId") {
		if vid == "" {
			return "", false, &mpError{http.StatusBadRequest, "InvalidArgument", "Version id cannot be the empty string"}
		}
		if !backend.WellFormedVersionID(vid) {
			return "", false, errInvalidVersion() // a HEAD's 400 says no more
		}
		q.Set("versionId", vid)
	}
	rec := h.record(inner(r.Context(), r, http.MethodHead, "/"+bucket+"/"+key, q))
	switch {
	case rec.ok():
		named := rec.header.Get("X-Amz-Version-Id")
		if named == "" && vid != "" && vid != "null" {
			return "", false, &mpError{http.StatusNotFound, "NoSuchVersion", "The specified version does not exist."}
		}
		if named == "" {
			return nullVID(vid), vid != "", nil
		}
		return named, true, nil
	case rec.status == http.StatusNotFound && vid != "":
		return "", false, &mpError{http.StatusNotFound, "NoSuchVersion", "The specified version does not exist."}
	case rec.status == http.StatusNotFound:
		if !h.bucketExists(r, bucket) {
			return "", false, errNoSuchBucket()
		}
		return "", false, &mpError{http.StatusNotFound, "NoSuchKey", "The specified key does not exist."}
	case rec.status == http.StatusMethodNotAllowed:
		return "", false, &mpError{http.StatusMethodNotAllowed, "MethodNotAllowed", "The specified method is not allowed against this resource."}
	default:
		return "", false, &mpError{rec.status, http.StatusText(rec.status), "The store could not find the object."}
	}
}

func errNoSuchBucket() error {
	return &mpError{http.StatusNotFound, "NoSuchBucket", "The specified bucket does not exist."}
}

func (h *attrsHandler) bucketExists(r *http.Request, bucket string) bool {
	return h.record(inner(r.Context(), r, http.MethodHead, "/"+bucket, url.Values{})).ok()
}

// versioningEnabled asks base for the bucket's versioning status.
func (h *attrsHandler) versioningEnabled(r *http.Request, bucket string) bool {
	rec := h.record(inner(r.Context(), r, http.MethodGet, "/"+bucket, url.Values{"versioning": {""}}))
	return rec.ok() && bytes.Contains(rec.body.Bytes(), []byte("<Status>Enabled</Status>"))
}

// attrHeaderWriter adds a GET or HEAD answer's tag count and lock from
// the sidecar before the status line goes out.
type attrHeaderWriter struct {
	http.ResponseWriter
	h           *attrsHandler
	bucket, key string
	vid         string
	done        bool
}

func (w *attrHeaderWriter) fix(code int) {
	if w.done {
		return
	}
	w.done = true
	if code/100 != 2 {
		return
	}
	vid := w.Header().Get("X-Amz-Version-Id")
	if vid == "" {
		vid = w.vid
	}
	o, err := w.h.a.object(w.bucket, w.key, vid)
	if err != nil {
		slog.Warn("embedded store: an object's record could not be read", "bucket", w.bucket, "err", err)
		return
	}
	setAttrHeaders(w.Header(), o)
}

func (w *attrHeaderWriter) WriteHeader(code int) {
	w.fix(code)
	w.ResponseWriter.WriteHeader(code)
}

func (w *attrHeaderWriter) Write(p []byte) (int, error) {
	w.fix(http.StatusOK)
	return w.ResponseWriter.Write(p)
}
