// Package cors is the CORS rules of a bucket as S3 applies them: it
// judges a configuration's rules as S3 does before they are stored, and
// finds the rule that allows a browser's request (origin, method and
// headers) and the Access-Control-* headers that rule grants.
package cors

import (
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/s3seal/s3seal/s3api/s3err"
)

// Rule is one CORSRule of a bucket's CORSConfiguration.
type Rule struct {
	ID             string   `xml:"ID,omitempty"`
	AllowedHeaders []string `xml:"AllowedHeader"`
	AllowedMethods []string `xml:"AllowedMethod"`
	AllowedOrigins []string `xml:"AllowedOrigin"`
	ExposeHeaders  []string `xml:"ExposeHeader"`
	MaxAgeSeconds  string   `xml:"MaxAgeSeconds,omitempty"`
}

// Methods are the methods a rule may allow.
var Methods = []string{"GET", "PUT", "POST", "DELETE", "HEAD"}

// validHeaderName reports whether h is an HTTP header name (an RFC 9110
// token); "*" is one.
func validHeaderName(h string) bool {
	if h == "" {
		return false
	}
	for _, c := range []byte(h) {
		switch {
		case c >= '0' && c <= '9', c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z':
		case strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0:
		default:
			return false
		}
	}
	return true
}

func invalid(msg string) *s3err.Error {
	return s3err.New(s3err.InvalidRequest, msg)
}

// S3's limits on a CORS configuration: 100 rules, 64 KB.
const (
	MaxRules = 100
	MaxBody  = 64 << 10
)

// Check judges a CORSConfiguration's rules as S3 does.
func Check(rules []Rule) error {
	malformed := s3err.New(s3err.MalformedXML, "")
	if len(rules) == 0 || len(rules) > MaxRules {
		return malformed
	}
	for _, rule := range rules {
		if len(rule.AllowedOrigins) == 0 {
			return malformed
		}
		for _, o := range rule.AllowedOrigins {
			if strings.Count(o, "*") > 1 {
				return invalid(fmt.Sprintf("AllowedOrigin \"%s\" can not have more than one wildcard.", o))
			}
		}
		if len(rule.AllowedMethods) == 0 {
			return malformed
		}
		for _, m := range rule.AllowedMethods {
			if !slices.Contains(Methods, m) {
				return invalid("Found unsupported HTTP method in CORS config. Unsupported method is " + m)
			}
		}
		for _, h := range append(slices.Clone(rule.AllowedHeaders), rule.ExposeHeaders...) {
			if !validHeaderName(h) {
				return invalid(fmt.Sprintf("AllowedHeader \"%s\" contains invalid character.", h))
			}
		}
	}
	return nil
}

// Vary is the Vary header of every CORS answer.
const Vary = "Origin, Access-Control-Request-Headers, Access-Control-Request-Method"

// Grant is what the rule that allows a request grants.
type Grant struct {
	origin, methods, expose, credentials, maxAge string
}

// Match finds the first of the rules allowing origin, method and the
// requested headers (lower case), and what it grants.
func Match(rules []Rule, origin, method string, headers []string) (Grant, bool) {
	for _, rule := range rules {
		pattern := ""
		for _, o := range rule.AllowedOrigins {
			if globMatch(o, origin) {
				pattern = o
				break
			}
		}
		if pattern == "" || !slices.Contains(rule.AllowedMethods, method) {
			continue
		}
		ok := true
		for _, h := range headers {
			if !slices.ContainsFunc(rule.AllowedHeaders, func(a string) bool { return globMatch(strings.ToLower(a), h) }) {
				ok = false
				break
			}
		}
		if !ok {
			continue
		}
		m := Grant{origin: origin, credentials: "true", methods: strings.Join(rule.AllowedMethods, ", "),
			maxAge: strings.TrimSpace(rule.MaxAgeSeconds)}
		if pattern == "*" {
			m.origin, m.credentials = "*", "false"
		}
		// ETag is always exposed: browser uploads need it to complete
		// multipart uploads.
		expose := slices.Clone(rule.ExposeHeaders)
		if !slices.ContainsFunc(expose, func(h string) bool { return strings.EqualFold(h, "ETag") }) {
			expose = append(expose, "ETag")
		}
		m.expose = strings.Join(expose, ", ")
		return m, true
	}
	return Grant{}, false
}

// Set writes the grant's headers; allowHeaders is what the preflight asked.
func (m Grant) Set(h http.Header, allowHeaders string) {
	h.Set("Access-Control-Allow-Origin", m.origin)
	h.Set("Access-Control-Allow-Methods", m.methods)
	h.Set("Access-Control-Expose-Headers", m.expose)
	h.Set("Access-Control-Allow-Credentials", m.credentials)
	if allowHeaders != "" {
		h.Set("Access-Control-Allow-Headers", allowHeaders)
	}
	if m.maxAge != "" {
		h.Set("Access-Control-Max-Age", m.maxAge)
	}
	h.Set("Vary", Vary)
}

// globMatch matches s against a pattern whose '*' stands for any run of
// characters.
func globMatch(pattern, s string) bool {
	star, at := -1, 0
	p, i := 0, 0
	for i < len(s) {
		switch {
		case p < len(pattern) && pattern[p] == '*':
			star, at = p, i
			p++
		case p < len(pattern) && pattern[p] == s[i]:
			p++
			i++
		case star >= 0:
			p = star + 1
			at++
			i = at
		default:
			return false
		}
	}
	for p < len(pattern) && pattern[p] == '*' {
		p++
	}
	return p == len(pattern)
}

// RequestHeaders parses Access-Control-Request-Headers into lower-case
// names, refusing one that is not a header name.
func RequestHeaders(v string) ([]string, error) {
	if v == "" {
		return nil, nil
	}
	var out []string
	for _, part := range strings.Split(v, ",") {
		h := strings.TrimSpace(part)
		if !validHeaderName(h) {
			return nil, s3err.New(s3err.BadRequest, fmt.Sprintf("Access-Control-Request-Headers \"%s\" contains invalid character.", part))
		}
		out = append(out, strings.ToLower(h))
	}
	return out, nil
}
