package sealstore

import (
	"strings"

	"github.com/s3seal/s3seal/backend"
	"github.com/s3seal/s3seal/crypto"
)

// objectMeta is what a client wrote beside an object's bytes, as format 2
// seals it: every user metadata entry and the content headers.
func objectMeta(meta map[string]string, h backend.Headers) crypto.ObjectMeta {
	return crypto.ObjectMeta{User: meta, ContentType: h.ContentType, ContentEncoding: h.ContentEncoding,
		ContentDisposition: h.ContentDisposition, ContentLanguage: h.ContentLanguage, CacheControl: h.CacheControl,
		Expires: h.Expires, WebsiteRedirect: h.WebsiteRedirectLocation}
}

// checkObjectMeta refuses, before any byte of a body is read, what would
// not fit sealed in the store's 2 KB of user metadata.
func checkObjectMeta(om crypto.ObjectMeta) error {
	for k, v := range om.User {
		if k == "" || k != strings.ToLower(k) || !headerToken(k) {
			return errorf("InvalidArgument", "The metadata key x-amz-meta-%q cannot be stored: a metadata key must be a non-empty lower-case HTTP header name.", k)
		}
		if !headerValue(v) {
			return errorf("InvalidArgument", "The value of metadata key x-amz-meta-%s cannot be stored: it holds a control character no HTTP header can carry back.", k)
		}
	}
	for _, v := range []string{om.ContentType, om.ContentEncoding, om.ContentDisposition, om.ContentLanguage, om.CacheControl, om.Expires, om.WebsiteRedirect} {
		if !headerValue(v) {
			return errorf("InvalidArgument", "A content header's value holds a control character no HTTP header can carry back.")
		}
	}
	if n := om.EncodedSize(); n > crypto.MaxObjectMeta {
		return errorf("MetadataTooLarge", "Your metadata headers exceed the maximum allowed metadata size: s3seal seals the user metadata and content headers of an object into at most %d bytes (each entry's key and value plus 4, each header's value plus 3, plus 3); this request needs %d.", crypto.MaxObjectMeta, n)
	}
	return nil
}

// headerToken reports whether s is made of HTTP token characters only
// (RFC 9110), as a header name must be: a metadata key that is not comes
// back in no header (net/http drops the name).
func headerToken(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0) {
			return false
		}
	}
	return true
}

// headerValue reports whether s holds no control character but HTAB: a
// value with a line break comes back with spaces in its place, one with
// any other control character (NUL) breaks every client's HEAD and GET.
func headerValue(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; (c < 0x20 && c != '\t') || c == 0x7f {
			return false
		}
	}
	return true
}

// storeHeaders is what the store is told of an object's headers in
// format 2: its storage class and its own encryption, which it acts on;
// the content headers are sealed.
// storeHeadersFor is storeHeaders of a write sealed as env: an object
// sealed under a KMS key asks the store for no encryption of its own
// (s3seal terminated the client's SSE-KMS).
func storeHeadersFor(env crypto.Envelope, h backend.Headers) backend.Headers {
	if env.External() {
		h.SSE, h.SSEKMSKeyID, h.SSEContext, h.SSEBucketKey = "", "", "", false
	}
	return storeHeaders(h)
}

func storeHeaders(h backend.Headers) backend.Headers {
	return backend.Headers{StorageClass: h.StorageClass, SSE: h.SSE, SSEKMSKeyID: h.SSEKMSKeyID,
		SSEContext: h.SSEContext, SSEBucketKey: h.SSEBucketKey}
}

// withObjectMeta is h, as the store reported it, with every content
// header taken from om instead (what storeHeaders keeps stays the
// store's).
func withObjectMeta(h backend.Headers, om crypto.ObjectMeta) backend.Headers {
	h.ContentType, h.ContentEncoding, h.ContentDisposition = om.ContentType, om.ContentEncoding, om.ContentDisposition
	h.ContentLanguage, h.CacheControl, h.Expires = om.ContentLanguage, om.CacheControl, om.Expires
	h.WebsiteRedirectLocation = om.WebsiteRedirect
	return h
}

// sealedMetaValue returns the backend's crypto.MetaUser value, found
// case-insensitively (crypto.ParseMetadata refused duplicates).
func sealedMetaValue(bmeta map[string]string) (string, bool) {
	for k, v := range bmeta {
		if len(k) == len(crypto.MetaUser) && crypto.IsReservedMetaKey(k) && equalFoldASCII(k, crypto.MetaUser) {
			return v, true
		}
	}
	return "", false
}

func equalFoldASCII(a, b string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := 0; i < len(a); i++ {
		x, y := a[i], b[i]
		if 'A' <= x && x <= 'Z' {
			x += 'a' - 'A'
		}
		if 'A' <= y && y <= 'Z' {
			y += 'a' - 'A'
		}
		if x != y {
			return false
		}
	}
	return true
}

// openMeta gives info the user metadata and content headers of the
// object bi describes. In format 2 they are all sealed, and an object
// without them fails; in format 1 they are the store's, but for the
// entries sealed in crypto.MetaUser (an object written before s3seal
// sealed any has none).
func openMeta(dk *crypto.DataKey, env crypto.Envelope, bi backend.ObjectInfo, info *ObjectInfo) error {
	if env.Version != crypto.FormatV1 {
		om, err := crypto.OpenObjectMeta(dk, env.SealedMeta)
		if err != nil {
			return err
		}
		if om.User != nil {
			info.Meta = om.User
		}
		info.Headers = withObjectMeta(bi.Headers, om)
		return nil
	}
	v, ok := sealedMetaValue(bi.Meta)
	if !ok {
		return nil
	}
	m, err := crypto.OpenUserMeta(dk, v)
	if err != nil {
		return err
	}
	for k, v := range m {
		info.Meta[k] = v
	}
	return nil
}
