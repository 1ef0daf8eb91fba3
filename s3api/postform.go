package s3api

import (
	"bytes"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"strings"

	"github.com/gorilla/mux"

	"github.com/s3seal/s3seal/s3api/s3err"
	"github.com/s3seal/s3seal/s3api/sigv4"
)

// maxPostPreData is S3's limit on a POST form before its file: the fields
// with their part headers and boundaries (20 KB).
const maxPostPreData = 20 << 10

// postForm holds the fields of a browser POST upload that came before the
// file, by lower-case name (the names are case-insensitive); a name sent
// twice has its values joined with ",", as S3 does.
type postForm struct {
	fields map[string]string
	names  map[string]string // lower-case name -> the name as first sent
	order  []string          // lower-case names in the order sent
}

func (f *postForm) add(name, value string) {
	ln := strings.ToLower(name)
	if old, ok := f.fields[ln]; ok {
		f.fields[ln] = old + "," + value
		return
	}
	f.fields[ln] = value
	f.names[ln] = name
	f.order = append(f.order, ln)
}

// Value, Names and Spelled are the form as its policy sees it
// (postpolicy.Form).
func (f *postForm) Value(name string) (string, bool) {
	v, ok := f.fields[name]
	return v, ok
}

func (f *postForm) Names() []string { return f.order }

func (f *postForm) Spelled(name string) string { return f.names[name] }

func (f *postForm) get(name string) string { return f.fields[name] }

// auth is the form's authentication fields for sigv4.
func (f *postForm) auth() sigv4.PostFields {
	return sigv4.PostFields{
		Algorithm: f.get("x-amz-algorithm"), Credential: f.get("x-amz-credential"),
		Date: f.get("x-amz-date"), Signature: f.get("x-amz-signature"), Policy: f.get("policy"),
		AWSAccessKeyID: f.get("awsaccesskeyid"), SignatureV2: f.get("signature"),
		Sent: func(name string) bool { _, ok := f.fields[name]; return ok },
	}
}

// expandFilename replaces ${filename} in every field with the file's name
// (after its last / or \). A file part without a filename parameter leaves
// the variable as it is, as S3 does.
func (f *postForm) expandFilename(file *multipart.Part) {
	_, params, err := mime.ParseMediaType(file.Header.Get("Content-Disposition"))
	name, ok := params["filename"]
	if err != nil || !ok {
		return
	}
	if i := strings.LastIndexAny(name, `/\`); i >= 0 {
		name = name[i+1:]
	}
	for k, v := range f.fields {
		f.fields[k] = strings.ReplaceAll(v, "${filename}", name)
	}
}

// postAuthFields are fields that authenticate the form; they are not
// object headers.
var postAuthFields = map[string]bool{"x-amz-algorithm": true, "x-amz-credential": true,
	"x-amz-date": true, "x-amz-signature": true, "x-amz-security-token": true}

// objectHeader turns the fields that stand for PutObject headers into
// those headers, so that the object is stored (and refused) exactly as a
// PUT with them would be. The tagging field is an XML document, not the
// header's query string: it is refused on its own (see servePost).
// Two fields naming one header ("acl" and "x-amz-acl") are joined with
// "," in the order sent, as a field sent twice is, unless they agree: the
// header then holds both requests, so that an ACL is refused or stored
// the same way whatever the order (a joined canned ACL is no canned ACL).
func (f *postForm) objectHeader() http.Header {
	h := http.Header{}
	set := func(name, v string) {
		if old, ok := h[http.CanonicalHeaderKey(name)]; ok && old[0] != v {
			v = old[0] + "," + v
		}
		h.Set(name, v)
	}
	for _, name := range f.order {
		v := f.fields[name]
		switch {
		case name == "content-type", name == "cache-control", name == "content-disposition",
			name == "content-encoding", name == "content-language", name == "expires", name == "content-md5":
			set(name, v)
		case name == "acl":
			set("X-Amz-Acl", v)
		case strings.HasPrefix(name, "x-amz-") && !postAuthFields[name]:
			set(name, v)
		}
	}
	return h
}

// isPostForm matches a bucket POST whose body is a form (browser upload).
func isPostForm(r *http.Request, _ *mux.RouteMatch) bool {
	ct := strings.ToLower(strings.TrimSpace(r.Header.Get("Content-Type")))
	return strings.HasPrefix(ct, "multipart/form-data")
}

// plainBucketPost matches a bucket POST without a subresource: S3 takes it
// for a browser upload whatever its Content-Type.
func plainBucketPost(r *http.Request, _ *mux.RouteMatch) bool {
	for k := range r.URL.Query() {
		if bucketSubs[strings.ToLower(k)] {
			return false
		}
	}
	return true
}

// postNotForm answers a bucket POST that is not a form as S3 does, before
// any authentication (the signature of a browser upload is in its form).
func (s *Server) postNotForm(w http.ResponseWriter, r *http.Request) {
	if ri := infoFrom(r.Context()); ri != nil {
		ri.op = "PostObject"
	}
	writeError(w, r, withExtra(s3err.New(s3err.PreconditionFailed, ""),
		"Condition", "Bucket POST must be of the enclosure-type multipart/form-data"))
}

// readPostForm reads the form up to its file part, which it returns
// unread: the fields are held in memory (at most maxPostPreData of them),
// the file is streamed by the caller. Fields after the file are never
// read, as S3 ignores them.
func readPostForm(r *http.Request) (*postForm, *multipart.Part, error) {
	mt, params, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil || mt != "multipart/form-data" || params["boundary"] == "" {
		return nil, nil, malformedPOST()
	}
	// The multipart reader reads ahead up to 4 KiB past the part it is on.
	lim := &preDataLimit{r: r.Body, left: maxPostPreData + 4<<10, closing: []byte("\r\n--" + params["boundary"] + "--"),
		tail: []byte("\r\n")} // a delimiter first in the body has no CRLF before it
	mr := multipart.NewReader(lim, params["boundary"])
	form := &postForm{fields: map[string]string{}, names: map[string]string{}}
	for {
		p, err := mr.NextRawPart()
		if lim.over {
			return nil, nil, preDataTooLarge()
		}
		// The reader also answers a bare io.EOF for a form cut inside a
		// part's headers: only one that closed is a form without a file.
		if err == io.EOF && lim.closed {
			return nil, nil, s3err.New(s3err.InvalidArgument, "POST requires exactly one file upload per request.")
		}
		if err != nil {
			return nil, nil, malformedPOST()
		}
		name := p.FormName()
		if name == "file" || strings.EqualFold(name, "file") {
			lim.left = -1
			return form, p, nil
		}
		v, err := io.ReadAll(p)
		if lim.over {
			return nil, nil, preDataTooLarge()
		}
		if err != nil {
			return nil, nil, malformedPOST()
		}
		if name != "" {
			form.add(name, string(v))
		}
	}
}

func malformedPOST() *s3err.Error {
	return s3err.New(s3err.MalformedPOSTRequest, "The body of your POST request is not well-formed multipart/form-data.")
}

func preDataTooLarge() *s3err.Error {
	return s3err.New(s3err.MaxPostPreDataLengthExceeded, "Your POST request fields preceeding the upload file was too large.")
}

// preDataLimit refuses to read more than left bytes while it is >= 0,
// and notes whether the form's close delimiter went by.
type preDataLimit struct {
	r       io.Reader
	left    int64
	over    bool
	closing []byte // "\r\n--boundary--"
	tail    []byte // the last bytes read, to find closing across reads
	closed  bool
}

func (l *preDataLimit) Read(p []byte) (int, error) {
	if l.left < 0 {
		return l.r.Read(p)
	}
	if l.left == 0 {
		l.over = true
		return 0, preDataTooLarge()
	}
	if int64(len(p)) > l.left {
		p = p[:l.left]
	}
	n, err := l.r.Read(p)
	l.left -= int64(n)
	if !l.closed && n > 0 {
		l.tail = append(l.tail, p[:n]...)
		l.closed = bytes.Contains(l.tail, l.closing)
		if keep := len(l.closing) - 1; len(l.tail) > keep {
			l.tail = append(l.tail[:0], l.tail[len(l.tail)-keep:]...)
		}
	}
	return n, err
}
