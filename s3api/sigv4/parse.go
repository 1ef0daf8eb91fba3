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
func parseAuthHeader(auth string) (*signed, error) {
	rest := strings.TrimSpace(strings.TrimPrefix(auth, algorithm))
	var cred, sh, sig string
	var haveCred, haveSH, haveSig bool
	for part := range strings.SplitSeq(rest, ",") {
		k, val, ok := strings.Cut(strings.TrimSpace(part), "=")
		if !ok {
			return nil, errMalformed("The authorization header is malformed; the authorization component %q is malformed.", truncate(part))
		}
		switch k {
		case "Credential":
			cred, haveCred = val, true
		case "SignedHeaders":
			sh, haveSH = val, true
		case "Signature":
			sig, haveSig = val, true
		default:
			return nil, errMalformed("The authorization header is malformed; unknown authorization component %q.", truncate(k))
		}
	}
	if !haveCred || !haveSH || !haveSig {
		return nil, errMalformed("The authorization header is malformed; it must contain Credential, SignedHeaders and Signature.")
	}
	s, err := parseCredential(cred, errMalformed, headerCredPrefix)
	if err != nil {
		return nil, err
	}
	if s.signedHeaders, err = parseSignedHeaders(sh, errMalformed); err != nil {
		return nil, err
	}
	s.signature = sig
	return s, nil
}

// How S3 begins the message of a malformed credential scope: in the
// Authorization header, and in the X-Amz-Credential of a presigned URL.
const (
	headerCredPrefix = "The authorization header is malformed; "
	queryCredPrefix  = "Error parsing the X-Amz-Credential parameter; "
)

// parseCredential parses "AK/YYYYMMDD/REGION/SERVICE/aws4_request"; its
// errors begin with prefix, as S3's do.
func parseCredential(cred string, mk func(string, ...any) *Error, prefix string) (*signed, error) {
	parts := strings.Split(cred, "/")
	if len(parts) != 5 || parts[0] == "" || parts[2] == "" {
		return nil, mk(prefix + "the Credential is mal-formed; expecting \"<YOUR-AKID>/YYYYMMDD/REGION/SERVICE/aws4_request\".")
	}
	if _, err := time.Parse("20060102", parts[1]); err != nil {
		return nil, mk(prefix+"incorrect date format %q. This date in the credential must be in the format \"yyyyMMdd\".", truncate(parts[1]))
	}
	if parts[3] != serviceS3 {
		return nil, mk(prefix+"incorrect service %q. This endpoint belongs to \"s3\".", truncate(parts[3]))
	}
	if parts[4] != scopeTerminal {
		return nil, mk(prefix+"incorrect terminal %q. This endpoint uses \"aws4_request\".", truncate(parts[4]))
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
	if get("X-Amz-Algorithm") != algorithm {
		return nil, 0, errQueryMalformed("X-Amz-Algorithm only supports \"AWS4-HMAC-SHA256\"")
	}
	for _, k := range []string{"X-Amz-Credential", "X-Amz-Signature", "X-Amz-Date", "X-Amz-SignedHeaders", "X-Amz-Expires"} {
		if get(k) == "" {
			return nil, 0, errQueryMalformed("Query-string authentication version 4 requires the X-Amz-Algorithm, X-Amz-Credential, X-Amz-Signature, X-Amz-Date, X-Amz-SignedHeaders, and X-Amz-Expires parameters.")
		}
	}
	exp, err := strconv.ParseInt(get("X-Amz-Expires"), 10, 64)
	if err != nil || exp < 1 {
		return nil, 0, errQueryMalformed("X-Amz-Expires must be a positive integer number of seconds.")
	}
	if exp > maxPresignSecs {
		return nil, 0, errQueryMalformed("X-Amz-Expires must be less than a week (in seconds) that is 604800.")
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
