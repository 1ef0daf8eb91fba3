package policy

import (
	"encoding/json"
	"path"
	"regexp"
	"slices"
	"strings"
)

// What S3 judges of a policy when it is put, besides its grammar: the
// version, the principals' names, the actions (S3's, on resources they
// apply to) and the resources (in the bucket). Check applies it; a kept
// policy is evaluated without it (Parse).

// judge is Check's judgment of one document, for the bucket it is put on.
type judge struct {
	bucket string
	known  func(string) bool // one of s3seal's access keys
}

// document judges the whole document: its statements' effects are
// strings (S3 reads them before anything else), its version is one of
// IAM's, then each statement in turn.
func (j *judge) document(version *string, stmts []map[string]json.RawMessage) error {
	for _, rs := range stmts {
		if v, ok := rs["Effect"]; ok {
			var effect *string
			if json.Unmarshal(v, &effect) != nil {
				return malformed("This policy contains invalid Json")
			}
		}
	}
	if version != nil && *version != "2008-10-17" && *version != "2012-10-17" {
		return malformed("The policy must contain a valid version string")
	}
	for _, rs := range stmts {
		if err := j.statement(rs); err != nil {
			return err
		}
	}
	return nil
}

// statement judges what one statement names, in S3's order: effect,
// principal, action, resource.
func (j *judge) statement(rs map[string]json.RawMessage) error {
	var effect *string
	if v, ok := rs["Effect"]; ok {
		_ = json.Unmarshal(v, &effect) // a string or null: document checked it
	}
	if effect == nil {
		return malformed("Missing required field Effect")
	}
	if *effect != "Allow" && *effect != "Deny" {
		return malformed("Invalid effect: %s", *effect)
	}
	for _, name := range []string{"Resource", "NotResource", "Condition"} {
		if hasVariable(rs[name]) {
			// Evaluated literally, a Deny naming ${aws:username} would
			// deny nothing: refused rather than kept to mislead.
			return malformed("s3seal does not expand policy variables (${...}) in %s: write the values out", name)
		}
	}
	pr, hasP := rs["Principal"]
	npr, hasNP := rs["NotPrincipal"]
	if !hasP && !hasNP {
		return malformed("Missing required field Principal")
	}
	if hasP && !j.validPrincipal(pr) {
		return malformed("Invalid principal in policy")
	}
	// S3 refuses NotPrincipal in an Allow: it would grant to everyone
	// but the names it lists, anonymous callers included.
	if hasNP && (*effect == "Allow" || !j.validPrincipal(npr)) {
		return malformed("Invalid principal in policy")
	}
	act, hasA := rs["Action"]
	_, hasNA := rs["NotAction"]
	if !hasA && !hasNA {
		return malformed("Missing required field Action")
	}
	var actions []string
	if hasA {
		var ok bool
		if actions, ok = stringOrList(act); !ok || len(actions) == 0 {
			return malformed("Policy has invalid action")
		}
		for _, a := range actions {
			if !validAction(a) {
				return malformed("Policy has invalid action")
			}
		}
	}
	res, hasR := rs["Resource"]
	_, hasNR := rs["NotResource"]
	if !hasR && !hasNR {
		return malformed("Missing required field Resource")
	}
	if !hasR {
		return nil
	}
	resources, ok := stringOrList(res)
	if !ok || len(resources) == 0 {
		return malformed("Policy has invalid resource")
	}
	onBucket, onObjects := false, false
	for _, r := range resources {
		rest, found := strings.CutPrefix(r, "arn:aws:s3:::")
		if !found || rest == "" || strings.HasPrefix(rest, "/") {
			return malformed("Policy has invalid resource")
		}
		name, _, hasKey := strings.Cut(rest, "/")
		if m, _ := path.Match(name, j.bucket); !m {
			return malformed("Policy has invalid resource")
		}
		onBucket = onBucket || !hasKey || rest == "*"
		onObjects = onObjects || hasKey || strings.HasSuffix(name, "*")
	}
	for _, a := range actions {
		if a == "*" || strings.EqualFold(a, "s3:*") {
			continue
		}
		if isObjectAction(a) && !onObjects || !isObjectAction(a) && !onBucket {
			return malformed("Action does not apply to any resource(s) in statement")
		}
	}
	return nil
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
// canonical user ID.
func (j *judge) validPrincipal(raw json.RawMessage) bool {
	names := func(typ string, list []string) bool {
		for _, n := range list {
			switch {
			case n == "*":
				if len(list) > 1 {
					return false
				}
			case typ == "Service" || typ == "Federated":
			case typ == "CanonicalUser" && canonicalIDRE.MatchString(n):
			case typ == "AWS" && (accountIDRE.MatchString(n) || strings.HasPrefix(n, "arn:aws:") || j.known(n)):
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

// IsAction reports whether action ("s3:GetObject") is one of the S3
// actions a bucket policy may name, spelled as S3 spells it.
func IsAction(action string) bool {
	name, ok := strings.CutPrefix(action, "s3:")
	return ok && slices.Contains(s3Actions, name)
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

// hasVariable reports whether any string in raw (a statement's element,
// decoded) holds a policy variable, "${".
func hasVariable(raw json.RawMessage) bool {
	if len(raw) == 0 {
		return false
	}
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return false // the grammar refuses it
	}
	var walk func(any) bool
	walk = func(v any) bool {
		switch v := v.(type) {
		case string:
			return strings.Contains(v, "${")
		case []any:
			return slices.ContainsFunc(v, walk)
		case map[string]any:
			for k, e := range v {
				if strings.Contains(k, "${") || walk(e) {
					return true
				}
			}
		}
		return false
	}
	return walk(v)
}
