package sigv4

import (
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
)

// canonicalRequest builds the SigV4 canonical request for an S3 request, the
// way S3 does it: the URI path is taken from the path as the client sent it,
// each segment decoded once and re-encoded with the AWS rules (no double
// encoding, no path normalisation); the query is decoded, re-encoded and
// sorted, with skipQuery (if non-empty) left out; the signed headers are
// lower-cased, their values trimmed with inner runs of spaces collapsed and
// repeated headers joined with commas.
func canonicalRequest(r *http.Request, signedHeaders []string, payloadHash, skipQuery string) (string, error) {
	uri, err := canonicalURI(r.URL)
	if err != nil {
		return "", err
	}
	query, err := canonicalQuery(r.URL.RawQuery, skipQuery)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	b.Grow(256 + len(uri) + len(query))
	b.WriteString(r.Method)
	b.WriteByte('\n')
	b.WriteString(uri)
	b.WriteByte('\n')
	b.WriteString(query)
	b.WriteByte('\n')
	for _, name := range signedHeaders {
		b.WriteString(name)
		b.WriteByte(':')
		b.WriteString(canonicalHeaderValue(r, name))
		b.WriteByte('\n')
	}
	b.WriteByte('\n')
	b.WriteString(strings.Join(signedHeaders, ";"))
	b.WriteByte('\n')
	b.WriteString(payloadHash)
	return b.String(), nil
}

// canonicalURI re-encodes the escaped request path segment by segment, so an
// encoded slash (%2F) stays inside its segment.
func canonicalURI(u *url.URL) (string, error) {
	p := u.EscapedPath()
	if p == "" {
		return "/", nil
	}
	segs := strings.Split(p, "/")
	var b strings.Builder
	b.Grow(len(p) + 16)
	for i, s := range segs {
		if i > 0 {
			b.WriteByte('/')
		}
		d, err := url.PathUnescape(s)
		if err != nil {
			return "", newErr(CodeInvalidURI, http.StatusBadRequest, "Couldn't parse the specified URI.")
		}
		awsEscape(&b, d)
	}
	return b.String(), nil
}

// canonicalQuery decodes each key=value pair of the raw query ('+' is a
// space, as in HTML forms), re-encodes both with the AWS rules and sorts
// them by key, then value.
func canonicalQuery(raw, skip string) (string, error) {
	if raw == "" {
		return "", nil
	}
	type kv struct{ k, v string }
	var pairs []kv
	for part := range strings.SplitSeq(raw, "&") {
		if part == "" {
			continue
		}
		k, v, _ := strings.Cut(part, "=")
		dk, err := url.QueryUnescape(k)
		if err != nil {
			return "", newErr(CodeInvalidArgument, http.StatusBadRequest, "Invalid query string encoding.")
		}
		if skip != "" && dk == skip {
			continue
		}
		dv, err := url.QueryUnescape(v)
		if err != nil {
			return "", newErr(CodeInvalidArgument, http.StatusBadRequest, "Invalid query string encoding.")
		}
		var ek, ev strings.Builder
		awsEscape(&ek, dk)
		awsEscape(&ev, dv)
		pairs = append(pairs, kv{ek.String(), ev.String()})
	}
	sort.Slice(pairs, func(i, j int) bool {
		if pairs[i].k != pairs[j].k {
			return pairs[i].k < pairs[j].k
		}
		return pairs[i].v < pairs[j].v
	})
	var b strings.Builder
	for i, p := range pairs {
		if i > 0 {
			b.WriteByte('&')
		}
		b.WriteString(p.k)
		b.WriteByte('=')
		b.WriteString(p.v)
	}
	return b.String(), nil
}

// canonicalHeaderValue returns the canonical value of the signed header
// name (lower case). Go's server moves Host, Content-Length and
// Transfer-Encoding out of r.Header, so those are rebuilt from the request.
func canonicalHeaderValue(r *http.Request, name string) string {
	var vals []string
	switch name {
	case "host":
		vals = []string{r.Host}
		if r.Host == "" && r.URL != nil {
			vals = []string{r.URL.Host}
		}
	case "content-length":
		vals = r.Header.Values("Content-Length")
		if len(vals) == 0 && r.ContentLength >= 0 {
			vals = []string{strconv.FormatInt(r.ContentLength, 10)}
		}
	case "transfer-encoding":
		vals = r.Header.Values("Transfer-Encoding")
		if len(vals) == 0 {
			vals = r.TransferEncoding
		}
	default:
		vals = r.Header.Values(name)
	}
	switch len(vals) {
	case 0:
		return ""
	case 1:
		return trimAll(vals[0])
	}
	out := make([]string, len(vals))
	for i, v := range vals {
		out[i] = trimAll(v)
	}
	return strings.Join(out, ",")
}

// trimAll trims leading and trailing white space and collapses each inner
// run of spaces to a single space.
func trimAll(s string) string {
	s = strings.TrimSpace(s)
	if !strings.Contains(s, "  ") {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	prevSpace := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == ' ' {
			if prevSpace {
				continue
			}
			prevSpace = true
		} else {
			prevSpace = false
		}
		b.WriteByte(c)
	}
	return b.String()
}

const upperHex = "0123456789ABCDEF"

// awsEscape writes s URI-encoded the AWS way: unreserved characters
// (A-Z a-z 0-9 - . _ ~) as they are, every other byte as %XX (upper case).
func awsEscape(b *strings.Builder, s string) {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if 'A' <= c && c <= 'Z' || 'a' <= c && c <= 'z' || '0' <= c && c <= '9' ||
			c == '-' || c == '.' || c == '_' || c == '~' {
			b.WriteByte(c)
			continue
		}
		b.WriteByte('%')
		b.WriteByte(upperHex[c>>4])
		b.WriteByte(upperHex[c&15])
	}
}
