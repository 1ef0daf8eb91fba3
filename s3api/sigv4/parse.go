package sigv4

import (
	"crypto/sha256"
	"encoding/hex"
	"strconv"
	"strings"
	"time"
)

// parseAuthHeader parses
// "AWS4-HMAC-SHA256 Credential=AK/DATE/REGION/s3/aws4_request, SignedHeaders=a;b, Signature=hex".
// Its checks come in S3's order: three components, each name=value, none
// missing (Credential, then SignedHeaders, then Signature), then the
// credential scope.
func parseAuthHeader(auth string) (*signed, error) {
	rest := strings.TrimSpace(strings.TrimPrefix(auth, algorithm))
	parts := strings.Split(rest, ",")
	if len(parts) != 3 {
		return nil, errMalformed(headerCredPrefix + "the authorization header requires three components: Credential, SignedHeaders, and Signature.")
	}
	vals := map[string]string{}
	for _, part := range parts {
		part = strings.TrimSpace(part)
		k, val, ok := strings.Cut(part, "=")
		if !ok {
			return nil, errMalformed(headerCredPrefix+"the authorization component %q is malformed.", truncate(part))
		}
		if _, dup := vals[k]; !dup {
			vals[k] = val
		}
	}
	for _, k := range []string{"Credential", "SignedHeaders", "Signature"} {
		if _, ok := vals[k]; !ok {
			return nil, errMalformed(headerCredPrefix+"missing %s.", k)
		}
	}
	s, err := parseCredential(vals["Credential"], errMalformed, headerCredPrefix)
	if err != nil {
		return nil, err
	}
	if s.signedHeaders, err = parseSignedHeaders(vals["SignedHeaders"], errMalformed); err != nil {
		return nil, err
	}
	s.signature = vals["Signature"]
	return s, nil
}

// How S3 begins the message of a malformed credential scope: in the
// Authorization header, and in the X-Amz-Credential of a presigned URL.
const (
	headerCredPrefix = "The authorization header is malformed; "
	queryCredPrefix  = "Error parsing the X-Amz-Credential parameter; "
)

// parseCredential parses "AK/YYYYMMDD/REGION/SERVICE/aws4_request"; its
// errors begin with prefix, as S3's do, and come in S3's order: the shape,
// the service, the terminal, then the date.
func parseCredential(cred string, mk func(string, ...any) *Error, prefix string) (*signed, error) {
	parts := strings.Split(cred, "/")
	if len(parts) != 5 || parts[0] == "" || parts[2] == "" {
		return nil, mk(prefix + "the Credential is mal-formed; expecting \"<YOUR-AKID>/YYYYMMDD/REGION/SERVICE/aws4_request\".")
	}
	if parts[3] != serviceS3 {
		return nil, mk(prefix+"incorrect service %q. This endpoint belongs to \"s3\".", truncate(parts[3]))
	}
	if parts[4] != scopeTerminal {
		return nil, mk(prefix+"incorrect terminal %q. This endpoint uses \"aws4_request\".", truncate(parts[4]))
	}
	if _, err := time.Parse("20060102", parts[1]); err != nil {
		return nil, mk(prefix+"incorrect date format %q. This date in the credential must be in the format \"yyyyMMdd\".", truncate(parts[1]))
	}
	return &signed{accessKey: parts[0], date: parts[1], region: parts[2]}, nil
}

func parseSignedHeaders(sh string, mk func(string, ...any) *Error) ([]string, error) {
	if sh == "" {
		return nil, mk("The authorization header is malformed; SignedHeaders is empty.")
	}
	names := strings.Split(sh, ";")
	for _, n := range names {
		if n == "" || n != strings.ToLower(n) {
			return nil, mk("The authorization header is malformed; SignedHeaders must be lower-case names separated by ';'.")
		}
	}
	return names, nil
}

// parsePresign reads the X-Amz-* query parameters of a presigned URL.
func parsePresign(get func(string) string) (*signed, time.Duration, error) {
	switch get("X-Amz-Algorithm") {
	case algorithm:
	case "AWS4-ECDSA-P256-SHA256":
		// SigV4a: S3 takes it, s3seal does not.
		return nil, 0, errQueryMalformed("X-Amz-Algorithm only supports \"AWS4-HMAC-SHA256\"")
	default:
		return nil, 0, errQueryMalformed("X-Amz-Algorithm only supports \"AWS4-HMAC-SHA256 and AWS4-ECDSA-P256-SHA256\"")
	}
	for _, k := range []string{"X-Amz-Credential", "X-Amz-Signature", "X-Amz-Date", "X-Amz-SignedHeaders", "X-Amz-Expires"} {
		if get(k) == "" {
			return nil, 0, errQueryMalformed("Query-string authentication version 4 requires the X-Amz-Algorithm, X-Amz-Credential, X-Amz-Signature, X-Amz-Date, X-Amz-SignedHeaders, and X-Amz-Expires parameters.")
		}
	}
	if get("X-Amz-Security-Token") != "" {
		// s3seal's credentials are static: it issues no session tokens.
		return nil, 0, errQueryMalformed("Authorization with X-Amz-Security-Token is not supported")
	}
	exp, err := strconv.ParseInt(get("X-Amz-Expires"), 10, 64)
	switch {
	case err != nil && !isSigned(get("X-Amz-Expires")):
		return nil, 0, errQueryMalformed("X-Amz-Expires should be a number")
	case err != nil && strings.HasPrefix(get("X-Amz-Expires"), "-") || exp < 0:
		return nil, 0, errExpiresRange("X-Amz-Expires must be non-negative")
	case err != nil || exp > maxPresignSecs:
		return nil, 0, errExpiresRange("X-Amz-Expires must be less than a week (in seconds); that is, the given X-Amz-Expires must be less than 604800 seconds")
	}
	s, err := parseCredential(get("X-Amz-Credential"), errQueryMalformed, queryCredPrefix)
	if err != nil {
		return nil, 0, err
	}
	if s.signedHeaders, err = parseSignedHeaders(get("X-Amz-SignedHeaders"), errQueryMalformed); err != nil {
		return nil, 0, err
	}
	s.amzDate = get("X-Amz-Date")
	if len(s.amzDate) != len(iso8601) {
		return nil, 0, errQueryMalformed("X-Amz-Date must be in the ISO8601 Long Format \"yyyyMMdd'T'HHmmss'Z'\"")
	}
	s.signature = get("X-Amz-Signature")
	return s, time.Duration(exp) * time.Second, nil
}

// isSigned reports whether s is an optionally signed run of decimal digits
// (a number, perhaps too large for int64).
func isSigned(s string) bool {
	s = strings.TrimPrefix(strings.TrimPrefix(s, "-"), "+")
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// truncate bounds client-supplied text echoed in error messages.
func truncate(s string) string {
	if len(s) > 64 {
		return s[:64] + "..."
	}
	return s
}

func hexSHA256(b []byte) string {
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}
