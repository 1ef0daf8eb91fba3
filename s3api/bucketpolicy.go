package s3api

import (
	"bytes"
	"encoding/json"
	"net/http"
	"path"
	"regexp"
	"slices"
	"strings"

	s3policy "github.com/s3seal/s3seal/access/policy"
	"github.com/s3seal/s3seal/s3api/s3err"
)

// A bucket policy is judged by s3seal when it is put, as S3 judges it,
// and refused with S3's MalformedPolicy and words: its grammar (package
// policy: effects, principals, condition operators and their values), the
// actions and resources it names (S3's actions; resources in this
// bucket, an action on objects needing an object resource). Then s3seal
// keeps it (policydoc.go) and evaluates it (policydecide.go): the store
// never sees it.

// maxPolicyBody is S3's limit on a bucket policy: 20 KB. A longer one is
// refused after reading one byte past it, before it is parsed.
const maxPolicyBody = 20 << 10

func malformedPolicy(msg string) *s3err.Error {
	return &s3err.Error{Code: "MalformedPolicy", StatusCode: 400, Message: msg}
}

// policyStatement is one statement as far as its actions and resources
// are judged here; package policy judges the rest.
type policyStatement struct {
	Effect       *string         `json:"Effect"`
	Principal    json.RawMessage `json:"Principal"`
	NotPrincipal json.RawMessage `json:"NotPrincipal"`
	Action       json.RawMessage `json:"Action"`
	NotAction    json.RawMessage `json:"NotAction"`
	Resource     json.RawMessage `json:"Resource"`
	NotResource  json.RawMessage `json:"NotResource"`
}

// checkBucketPolicy judges a PUT ?policy body for bucket. known reports
// whether a name is one of s3seal's access keys, which a principal may
// name besides "*", an account ID and an ARN.
func checkBucketPolicy(body []byte, bucket string, known func(string) bool) error {
	trimmed := bytes.TrimSpace(body)
	if len(trimmed) == 0 || trimmed[0] != '{' {
		return malformedPolicy("Policies must be valid JSON and the first byte must be '{'")
	}
	var doc struct {
		Version   *string         `json:"Version"`
		Statement json.RawMessage `json:"Statement"`
	}
	if !json.Valid(trimmed) || json.Unmarshal(trimmed, &doc) != nil {
		return malformedPolicy("This policy contains invalid Json")
	}
	if doc.Statement == nil {
		return malformedPolicy("Missing required field Statement")
	}
	var stmts []policyStatement
	if bytes.HasPrefix(bytes.TrimSpace(doc.Statement), []byte("{")) {
		var one policyStatement
		if json.Unmarshal(doc.Statement, &one) != nil {
			return malformedPolicy("This policy contains invalid Json")
		}
		stmts = []policyStatement{one}
	} else if json.Unmarshal(doc.Statement, &stmts) != nil {
		return malformedPolicy("This policy contains invalid Json")
	}
	if len(stmts) == 0 {
		return malformedPolicy("Could not parse the policy: Statement is empty!")
	}
	if doc.Version != nil && *doc.Version != "2008-10-17" && *doc.Version != "2012-10-17" {
		return malformedPolicy("The policy must contain a valid version string")
	}
	for _, st := range stmts {
		if err := st.check(bucket, known); err != nil {
			return err
		}
	}
	if _, err := s3policy.Parse(trimmed); err != nil {
		return malformedPolicy(err.Error())
	}
	return nil
}

func (st policyStatement) check(bucket string, known func(string) bool) error {
	if st.Effect == nil {
		return malformedPolicy("Missing required field Effect")
	}
	if *st.Effect != "Allow" && *st.Effect != "Deny" {
		return malformedPolicy("Invalid effect: " + *st.Effect)
	}
	if st.Principal == nil && st.NotPrincipal == nil {
		return malformedPolicy("Missing required field Principal")
	}
	if st.Principal != nil && !validPrincipal(st.Principal, known) {
		return malformedPolicy("Invalid principal in policy")
	}
	// S3 refuses NotPrincipal in an Allow: it would grant to everyone
	// but the names it lists, anonymous callers included.
	if st.NotPrincipal != nil && (*st.Effect == "Allow" || !validPrincipal(st.NotPrincipal, known)) {
		return malformedPolicy("Invalid principal in policy")
	}
	if st.Action == nil && st.NotAction == nil {
		return malformedPolicy("Missing required field Action")
	}
	var actions []string
	if st.Action != nil {
		var ok bool
		if actions, ok = stringOrList(st.Action); !ok || len(actions) == 0 {
			return malformedPolicy("Policy has invalid action")
		}
		for _, a := range actions {
			if !validAction(a) {
				return malformedPolicy("Policy has invalid action")
			}
		}
	}
	if st.Resource == nil && st.NotResource == nil {
		return malformedPolicy("Missing required field Resource")
	}
	if st.Resource == nil {
		return nil
	}
	resources, ok := stringOrList(st.Resource)
	if !ok || len(resources) == 0 {
		return malformedPolicy("Policy has invalid resource")
	}
	onBucket, onObjects := false, false
	for _, r := range resources {
		rest, found := strings.CutPrefix(r, "arn:aws:s3:::")
		if !found || rest == "" || strings.HasPrefix(rest, "/") {
			return malformedPolicy("Policy has invalid resource")
		}
		name, _, hasKey := strings.Cut(rest, "/")
		if m, _ := path.Match(name, bucket); !m {
			return malformedPolicy("Policy has invalid resource")
		}
		onBucket = onBucket || !hasKey || rest == "*"
		onObjects = onObjects || hasKey || strings.HasSuffix(name, "*")
	}
	for _, a := range actions {
		if a == "*" || strings.EqualFold(a, "s3:*") {
			continue
		}
		if isObjectAction(a) && !onObjects || !isObjectAction(a) && !onBucket {
			return malformedPolicy("Action does not apply to any resource(s) in statement")
		}
	}
	return nil
}

// stringOrList reads a policy element that is a string or a list of them.
func stringOrList(raw json.RawMessage) ([]string, bool) {
	var one string
	if json.Unmarshal(raw, &one) == nil {
		if one == "" {
			return nil, false
		}
		return []string{one}, true
	}
	var list []string
	if json.Unmarshal(raw, &list) != nil {
		return nil, false
	}
	for _, s := range list {
		if s == "" {
			return nil, false
		}
	}
	return list, true
}

var (
	accountIDRE     = regexp.MustCompile(`^[0-9]{12}$`)
	canonicalIDRE   = regexp.MustCompile(`^[0-9a-f]{64}$`)
	principalTypes  = []string{"AWS", "CanonicalUser", "Service", "Federated"}
	actionPatternRE = regexp.MustCompile(`^(?i:s3):[A-Za-z*?]+$`)
)

// validPrincipal: "*", a list of names, or an object of principal types
// ("AWS", "CanonicalUser", "Service", "Federated") each naming one or
// more. An "AWS" name is "*" (alone, everyone, anonymous callers
// included), an account ID, an ARN (a credential's user ARN
// arn:aws:iam::ACCOUNT:user/ACCESS_KEY, its account's root
// arn:aws:iam::ACCOUNT:root, or any other, which names none of s3seal's
// principals) or one of s3seal's access keys; a "CanonicalUser" name is a
// canonical user ID (principal.go).
func validPrincipal(raw json.RawMessage, known func(string) bool) bool {
	names := func(typ string, list []string) bool {
		for _, n := range list {
			switch {
			case n == "*":
				if len(list) > 1 {
					return false
				}
			case typ == "Service" || typ == "Federated":
			case typ == "CanonicalUser" && canonicalIDRE.MatchString(n):
			case typ == "AWS" && (accountIDRE.MatchString(n) || strings.HasPrefix(n, "arn:aws:") || known(n)):
			default:
				return false
			}
		}
		return true
	}
	if list, ok := stringOrList(raw); ok {
		return len(list) > 0 && names("AWS", list)
	}
	var byType map[string]json.RawMessage
	if json.Unmarshal(raw, &byType) != nil || len(byType) == 0 {
		return false
	}
	for typ, v := range byType {
		list, ok := stringOrList(v)
		if !ok || len(list) == 0 || !slices.Contains(principalTypes, typ) || !names(typ, list) {
			return false
		}
	}
	return true
}

// validAction: "*", "s3:*" or an S3 action name, with * and ? wildcards,
// that matches at least one of S3's actions (case-insensitively, as IAM
// matches actions).
func validAction(a string) bool {
	if a == "*" || strings.EqualFold(a, "s3:*") {
		return true
	}
	if !actionPatternRE.MatchString(a) {
		return false
	}
	for _, name := range s3Actions {
		if m, _ := path.Match(strings.ToLower(a[len("s3:"):]), strings.ToLower(name)); m {
			return true
		}
	}
	return false
}

// isObjectAction reports whether an action pattern matches one of S3's
// actions on objects (its resource is an object ARN, bucket/key).
func isObjectAction(a string) bool {
	for _, name := range s3Actions {
		if m, _ := path.Match(strings.ToLower(a[len("s3:"):]), strings.ToLower(name)); m && objectAction(name) {
			return true
		}
	}
	return false
}

func objectAction(name string) bool {
	if strings.Contains(name, "Bucket") {
		return false
	}
	return strings.Contains(name, "Object") || strings.Contains(name, "MultipartUpload") ||
		strings.HasPrefix(name, "Replicate") || name == "BypassGovernanceRetention"
}

// s3Actions are the actions of S3's authorization reference that a bucket
// policy may name (on the bucket or on its objects).
var s3Actions = strings.Fields(`
AbortMultipartUpload BypassGovernanceRetention CreateBucket DeleteBucket
DeleteBucketOwnershipControls DeleteBucketPolicy DeleteBucketWebsite
DeleteObject DeleteObjectTagging DeleteObjectVersion DeleteObjectVersionTagging
GetAccelerateConfiguration GetAnalyticsConfiguration GetBucketAcl GetBucketCORS
GetBucketLocation GetBucketLogging GetBucketNotification
GetBucketObjectLockConfiguration GetBucketOwnershipControls GetBucketPolicy
GetBucketPolicyStatus GetBucketPublicAccessBlock GetBucketRequestPayment
GetBucketTagging GetBucketVersioning GetBucketWebsite GetEncryptionConfiguration
GetIntelligentTieringConfiguration GetInventoryConfiguration
GetLifecycleConfiguration GetMetricsConfiguration GetObject GetObjectAcl
GetObjectAttributes GetObjectLegalHold GetObjectRetention GetObjectTagging
GetObjectTorrent GetObjectVersion GetObjectVersionAcl GetObjectVersionAttributes
GetObjectVersionForReplication GetObjectVersionTagging GetObjectVersionTorrent
GetReplicationConfiguration ListBucket ListBucketMultipartUploads
ListBucketVersions ListMultipartUploadParts PutAccelerateConfiguration
PutAnalyticsConfiguration PutBucketAcl PutBucketCORS PutBucketLogging
PutBucketNotification PutBucketObjectLockConfiguration PutBucketOwnershipControls
PutBucketPolicy PutBucketPublicAccessBlock PutBucketRequestPayment
PutBucketTagging PutBucketVersioning PutBucketWebsite PutEncryptionConfiguration
PutIntelligentTieringConfiguration PutInventoryConfiguration
PutLifecycleConfiguration PutMetricsConfiguration PutObject PutObjectAcl
PutObjectLegalHold PutObjectRetention PutObjectTagging PutObjectVersionAcl
PutObjectVersionTagging PutReplicationConfiguration ReplicateDelete
ReplicateObject ReplicateTags RestoreObject`)

// judgePolicy checks a PUT ?policy body once the bucket is known to
// exist (AWS answers NoSuchBucket before it reads the document).
func (s *Server) judgePolicy(req *request, body []byte) error {
	if err := s.store.Backend().HeadBucket(req.r.Context(), req.bucket); err != nil {
		return bucketErr(err)
	}
	return checkBucketPolicy(body, req.bucket, func(name string) bool {
		_, ok := s.cfg.Credentials[name]
		return ok
	})
}

// putStatus is the status of a successful PUT of a sub-resource: AWS
// answers PutBucketPolicy and PutBucketTagging with 204, the others 200.
func putStatus(sr subresource) int {
	if !sr.object && (sr.name == "policy" || sr.name == "tagging") {
		return http.StatusNoContent
	}
	return http.StatusOK
}
