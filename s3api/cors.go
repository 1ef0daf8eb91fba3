package s3api

import (
	"encoding/xml"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/s3seal/s3seal/s3api/s3err"
)

// CORS: s3seal checks a bucket's CORS configuration as S3 does before
// forwarding it (moto and others word their refusals otherwise), and
// evaluates the rules itself, in front of any backend: a preflight
// OPTIONS request is answered from them (corsrules.go fetches and caches
// them), and an actual request with an Origin header gets the
// Access-Control-* headers of the rule that allows it.

var corsMethods = []string{"GET", "PUT", "POST", "DELETE", "HEAD"}

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

func corsInvalid(msg string) *s3err.Error {
	return &s3err.Error{Code: "InvalidRequest", StatusCode: http.StatusBadRequest, Message: msg}
}

// S3's limits on a CORS configuration: 100 rules, 64 KB.
const (
	maxCORSRules = 100
	maxCORSBody  = 64 << 10
)

// checkCORS judges a CORSConfiguration as S3 does.
func checkCORS(body []byte) error {
	doc := &corsDoc{}
	if err := decodeXML(body, doc); err != nil {
		return err
	}
	malformed := s3err.New("MalformedXML", "")
	if len(doc.Rules) == 0 || len(doc.Rules) > maxCORSRules {
		return malformed
	}
	for _, rule := range doc.Rules {
		if len(rule.AllowedOrigins) == 0 {
			return malformed
		}
		for _, o := range rule.AllowedOrigins {
			if strings.Count(o, "*") > 1 {
				return corsInvalid(fmt.Sprintf("AllowedOrigin \"%s\" can not have more than one wildcard.", o))
			}
		}
		if len(rule.AllowedMethods) == 0 {
			return malformed
		}
		for _, m := range rule.AllowedMethods {
			if !slices.Contains(corsMethods, m) {
				return corsInvalid("Found unsupported HTTP method in CORS config. Unsupported method is " + m)
			}
		}
		for _, h := range append(slices.Clone(rule.AllowedHeaders), rule.ExposeHeaders...) {
			if !validHeaderName(h) {
				return corsInvalid(fmt.Sprintf("AllowedHeader \"%s\" contains invalid character.", h))
			}
		}
	}
	return nil
}

// corsVary is the Vary header of every CORS answer.
const corsVary = "Origin, Access-Control-Request-Headers, Access-Control-Request-Method"

// corsMatch is what the rule that allows a request grants.
type corsMatch struct {
	origin, methods, expose, credentials, maxAge string
}

// match finds the first rule allowing origin, method and the requested
// headers (lower case).
func (c *corsDoc) match(origin, method string, headers []string) (corsMatch, bool) {
	for _, rule := range c.Rules {
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
		m := corsMatch{origin: origin, credentials: "true", methods: strings.Join(rule.AllowedMethods, ", "),
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
	return corsMatch{}, false
}

// set writes the grant's headers; allowHeaders is what the preflight asked.
func (m corsMatch) set(h http.Header, allowHeaders string) {
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
	h.Set("Vary", corsVary)
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

// requestHeaders parses Access-Control-Request-Headers into lower-case
// names, refusing one that is not a header name.
func requestHeaders(v string) ([]string, error) {
	if v == "" {
		return nil, nil
	}
	var out []string
	for _, part := range strings.Split(v, ",") {
		h := strings.TrimSpace(part)
		if !validHeaderName(h) {
			return nil, &s3err.Error{Code: "BadRequest", StatusCode: http.StatusBadRequest,
				Message: fmt.Sprintf("Access-Control-Request-Headers \"%s\" contains invalid character.", part)}
		}
		out = append(out, strings.ToLower(h))
	}
	return out, nil
}

// forbiddenBody is S3's AccessForbidden error, which names the method and
// the kind of resource refused.
type forbiddenBody struct {
	XMLName      xml.Name `xml:"Error"`
	Code         string   `xml:"Code"`
	Message      string   `xml:"Message"`
	Method       string   `xml:"Method"`
	ResourceType string   `xml:"ResourceType"`
	RequestID    string   `xml:"RequestId"`
}

const (
	corsNotEnabled = "CORSResponse: CORS is not enabled for this bucket."
	corsForbidden  = "CORSResponse: This CORS request is not allowed. This is usually because the evalution of Origin, " +
		"request method / Access-Control-Request-Method or Access-Control-Request-Headers are not whitelisted by the resource's CORS spec."
)

// preflight answers an OPTIONS request from the bucket's CORS rules. It
// needs no signature: browsers send it without credentials.
func (s *Server) preflight(w http.ResponseWriter, r *http.Request) {
	if ri := infoFrom(r.Context()); ri != nil {
		ri.op = "PreflightOPTIONS"
	}
	bucket, key := s.target(r)
	origin := r.Header.Get("Origin")
	if origin == "" {
		writeError(w, r, &s3err.Error{Code: "BadRequest", StatusCode: http.StatusBadRequest,
			Message: "Insufficient information. Origin request header needed."})
		return
	}
	method := r.Header.Get("Access-Control-Request-Method")
	if !slices.Contains(corsMethods, method) {
		writeError(w, r, &s3err.Error{Code: "BadRequest", StatusCode: http.StatusBadRequest,
			Message: "Invalid Access-Control-Request-Method: " + method})
		return
	}
	headers, err := requestHeaders(r.Header.Get("Access-Control-Request-Headers"))
	if err != nil {
		writeError(w, r, err)
		return
	}
	var rules *corsDoc
	if s.corsBucket(bucket) {
		if rules, err = s.cors.rules(r.Context(), s.cfg.Forwarder, bucket, s.cfg.MaxInFlight); err != nil {
			writeError(w, r, err)
			return
		}
	}
	forbid := func(msg, resource string) {
		writeXML(w, http.StatusForbidden, forbiddenBody{Code: "AccessForbidden", Message: msg, Method: http.MethodOptions,
			ResourceType: resource, RequestID: w.Header().Get("x-amz-request-id")})
	}
	if rules == nil {
		forbid(corsNotEnabled, "BUCKET") // S3 names the bucket here whatever was asked
		return
	}
	m, ok := rules.match(origin, method, headers)
	if !ok {
		resource := "BUCKET"
		if key != "" {
			resource = "OBJECT"
		}
		forbid(corsForbidden, resource)
		return
	}
	m.set(w.Header(), strings.Join(headers, ", "))
	w.WriteHeader(http.StatusOK)
}

// actualCORS adds the Access-Control-* headers to a request with an
// Origin header that the bucket's rules allow; the method matched is
// Access-Control-Request-Method when given, else the request's. Anything
// else (no rules, no match, the rules unreadable) adds nothing: the
// request itself is served as ever.
func (s *Server) actualCORS(w http.ResponseWriter, r *http.Request) {
	origin := r.Header.Get("Origin")
	if origin == "" || r.Method == http.MethodOptions {
		return
	}
	if r.Header.Get("Authorization") == "" && !r.URL.Query().Has("X-Amz-Signature") {
		return // s3seal serves no anonymous request: its refusal needs no CORS
	}
	bucket, _ := s.target(r)
	if !s.corsBucket(bucket) {
		return
	}
	rules, err := s.cors.rules(r.Context(), s.cfg.Forwarder, bucket, s.cfg.MaxInFlight)
	if err != nil || rules == nil {
		return
	}
	method := r.Header.Get("Access-Control-Request-Method")
	if method == "" {
		method = r.Method
	}
	headers, err := requestHeaders(r.Header.Get("Access-Control-Request-Headers"))
	if err != nil {
		return
	}
	if m, ok := rules.match(origin, method, headers); ok {
		m.set(w.Header(), strings.Join(headers, ", "))
	}
}

// corsBucket reports whether a bucket's CORS rules may be looked up for
// a request not yet authenticated: a valid bucket name that some
// credential may read or write. Any other name (a typo, /healthz, another
// tenant's bucket in the same store) is answered as a bucket without
// CORS, so an unsigned request learns nothing of it and costs the store
// nothing.
func (s *Server) corsBucket(bucket string) bool {
	if bucket == "" || checkBucketName(bucket) != nil {
		return false
	}
	for _, c := range s.cfg.Credentials {
		if c.canRead(bucket) {
			return true
		}
	}
	return false
}
