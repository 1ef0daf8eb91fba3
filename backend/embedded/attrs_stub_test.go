package embedded

import (
	"encoding/xml"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/s3seal/s3seal/backend"
	"github.com/s3seal/s3seal/backend/internal/storetest"
)

// versionStub is an inner store for the sidecar's tests that keeps
// versions as S3 does (ids, delete markers), so that the lock is tested
// on versions without the embedded store's own versioning. With
// noVersioning it refuses to enable versioning, as the embedded store
// did before it kept versions.
type versionStub struct {
	mu           sync.Mutex
	noVersioning bool
	buckets      map[string]*stubBucket
	seq          int
}

type stubBucket struct {
	versioned bool
	keys      map[string][]stubVersion // oldest first
}

type stubVersion struct {
	id     string
	data   string
	marker bool
}

// nextID is a fresh id, well-formed (WellFormedVersionID) as a store would make it.
func (s *versionStub) nextID() string { s.seq++; return fmt.Sprintf("stub-version-%020d", s.seq) }

// put adds a version (or replaces the null one) and returns its id.
func (s *versionStub) put(b *stubBucket, key string, v stubVersion) string {
	if b.versioned {
		v.id = s.nextID()
		b.keys[key] = append(b.keys[key], v)
		return v.id
	}
	v.id = "null"
	vs := b.keys[key][:0]
	for _, o := range b.keys[key] {
		if o.id != "null" {
			vs = append(vs, o)
		}
	}
	b.keys[key] = append(vs, v)
	return ""
}

func (s *versionStub) find(b *stubBucket, key, vid string) (stubVersion, bool) {
	vs := b.keys[key]
	if vid == "" {
		if len(vs) == 0 || vs[len(vs)-1].marker {
			return stubVersion{}, false
		}
		return vs[len(vs)-1], true
	}
	for _, v := range vs {
		if v.id == vid {
			return v, true
		}
	}
	return stubVersion{}, false
}

func (s *versionStub) remove(b *stubBucket, key, vid string) bool {
	for i, v := range b.keys[key] {
		if v.id == vid {
			b.keys[key] = append(b.keys[key][:i:i], b.keys[key][i+1:]...)
			return true
		}
	}
	return false
}

// del deletes as DeleteObject does: the version named, else a marker (or
// the null version in an unversioned bucket).
func (s *versionStub) del(b *stubBucket, key, vid string, named bool) (string, bool) {
	if named {
		s.remove(b, key, vid)
		return vid, false
	}
	if b.versioned {
		return s.put(b, key, stubVersion{marker: true}), true
	}
	s.remove(b, key, "null")
	return "", false
}

func (s *versionStub) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	bucket, key, _ := strings.Cut(strings.TrimPrefix(r.URL.Path, "/"), "/")
	q := r.URL.Query()
	b := s.buckets[bucket]
	if b == nil && !(r.Method == http.MethodPut && key == "" && len(q) == 0) {
		writeS3Error(w, r, http.StatusNotFound, "NoSuchBucket", "no bucket")
		return
	}
	body, _ := io.ReadAll(r.Body)
	switch {
	case key == "" && r.Method == http.MethodPut && len(q) == 0:
		if b != nil {
			writeS3Error(w, r, http.StatusConflict, "BucketAlreadyExists", "exists")
			return
		}
		s.buckets[bucket] = &stubBucket{keys: map[string][]stubVersion{}}
	case key == "" && q.Has("versioning") && r.Method == http.MethodPut:
		if s.noVersioning {
			writeS3Error(w, r, http.StatusNotImplemented, "NotImplemented", "no versions")
			return
		}
		b.versioned = strings.Contains(string(body), "<Status>Enabled</Status>")
	case key == "" && q.Has("versioning"):
		st := ""
		if b.versioned {
			st = "<Status>Enabled</Status>"
		}
		w.Write([]byte("<VersioningConfiguration>" + st + "</VersioningConfiguration>"))
	case key == "" && q.Has("delete"):
		var in deleteReq
		xml.Unmarshal(body, &in)
		var out deleteResult
		for _, o := range in.Objects {
			id, marker := s.del(b, o.Key, o.VersionID, o.VersionID != "")
			d := out.Deleted
			d = append(d, struct {
				Key                   string `xml:"Key"`
				VersionID             string `xml:"VersionId,omitempty"`
				DeleteMarker          bool   `xml:"DeleteMarker,omitempty"`
				DeleteMarkerVersionID string `xml:"DeleteMarkerVersionId,omitempty"`
			}{Key: o.Key, VersionID: o.VersionID, DeleteMarker: marker})
			if marker {
				d[len(d)-1].DeleteMarkerVersionID = id
			}
			out.Deleted = d
		}
		writeXML(w, out)
	case key == "":
		if r.Method == http.MethodDelete {
			delete(s.buckets, bucket)
			w.WriteHeader(http.StatusNoContent)
		}
	case r.Method == http.MethodPut:
		data := string(body)
		if src := r.Header.Get("X-Amz-Copy-Source"); src != "" {
			sb, sk, _ := strings.Cut(strings.TrimPrefix(src, "/"), "/")
			v, ok := s.find(s.buckets[sb], sk, "")
			if !ok {
				writeS3Error(w, r, http.StatusNotFound, "NoSuchKey", "no key")
				return
			}
			data = v.data
		}
		if id := s.put(b, key, stubVersion{data: data}); id != "" {
			w.Header().Set("X-Amz-Version-Id", id)
		}
		w.Header().Set("ETag", `"e"`)
		if r.Header.Get("X-Amz-Copy-Source") != "" {
			w.Write([]byte(`<CopyObjectResult><ETag>"e"</ETag></CopyObjectResult>`))
		}
	case r.Method == http.MethodPost && q.Has("uploads"):
		writeXML(w, struct {
			XMLName  xml.Name `xml:"InitiateMultipartUploadResult"`
			UploadID string   `xml:"UploadId"`
		}{UploadID: "up-" + s.nextID()})
	case r.Method == http.MethodPost && q.Has("uploadId"):
		if id := s.put(b, key, stubVersion{data: "mp"}); id != "" {
			w.Header().Set("X-Amz-Version-Id", id)
		}
		writeXML(w, struct {
			XMLName xml.Name `xml:"CompleteMultipartUploadResult"`
			ETag    string
		}{ETag: `"e-1"`})
	case r.Method == http.MethodGet || r.Method == http.MethodHead:
		v, ok := s.find(b, key, q.Get("versionId"))
		if !ok {
			writeS3Error(w, r, http.StatusNotFound, "NoSuchKey", "no key")
			return
		}
		if v.id != "null" {
			w.Header().Set("X-Amz-Version-Id", v.id)
		}
		w.Header().Set("ETag", `"e"`)
		w.Header().Set("Content-Length", fmt.Sprint(len(v.data)))
		if r.Method == http.MethodGet {
			w.Write([]byte(v.data))
		}
	case r.Method == http.MethodDelete:
		id, marker := s.del(b, key, q.Get("versionId"), q.Has("versionId"))
		if id != "" {
			w.Header().Set("X-Amz-Version-Id", id)
		}
		if marker {
			w.Header().Set("X-Amz-Delete-Marker", "true")
		}
		w.WriteHeader(http.StatusNoContent)
	default:
		writeS3Error(w, r, http.StatusNotImplemented, "NotImplemented", "stub")
	}
}

// startAttrs serves a sidecar in dir in front of a versionStub, and
// returns a client of it (versions on) and the stub.
func startAttrs(t *testing.T, dir string, noVersioning bool) (*backend.S3, *versionStub) {
	t.Helper()
	a, err := newAttrStore(dir)
	storetest.Must(t, err)
	stub := &versionStub{buckets: map[string]*stubBucket{}, noVersioning: noVersioning}
	srv := httptest.NewServer(newAttrsHandler(a, stub))
	t.Cleanup(srv.Close)
	st, err := backend.NewS3(backend.S3Config{Endpoint: srv.URL, AccessKey: "a", SecretKey: "s", PathStyle: true, MaxAttempts: 1})
	storetest.Must(t, err)
	return st, stub
}
