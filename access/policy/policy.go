// Package policy is the language of S3 bucket policies: it reads one, as
// S3 judges it when it is put (Check, in S3's MalformedPolicy words) and
// as it is kept (Parse), with one parser for both, and says whether a
// policy allows, denies or says nothing of one request (its principal,
// action, resource and condition values), as S3's policy evaluation does.
// It knows nothing of HTTP: the caller names the action and resource and
// answers the condition keys. Package access combines what it says with
// the bucket's owner and ACLs.
package policy

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
)

// Policy is a parsed bucket policy.
type Policy struct {
	Statements []Statement
}

// Statement is one statement of a policy.
type Statement struct {
	Sid          string
	Deny         bool        // Effect: Deny, else Allow
	Principal    *Principals // nil when the statement has NotPrincipal
	NotPrincipal *Principals
	Actions      []string // patterns, lower case ("s3:get*"); nil with NotActions
	NotActions   []string
	Resources    []string // ARN patterns; nil with NotResources
	NotResources []string
	Conditions   []Condition
}

// Principals are the names a Principal or NotPrincipal element gives, by
// type. Everyone is set by "*" or {"AWS": "*"}.
type Principals struct {
	Everyone  bool
	AWS       []string // account ids, ARNs, access keys
	Canonical []string // canonical user ids
	Service   []string
	Federated []string
}

// Condition is one test of a Condition block: an operator on one key.
type Condition struct {
	Operator string   // as written, e.g. "ForAnyValue:StringLikeIfExists"
	op       operator // the base operator
	set      setQual  // ForAnyValue:, ForAllValues: or neither
	ifExists bool
	Key      string   // the key, its prefix before "/" in lower case
	Values   []string // the policy's values, as strings
}

type setQual int

const (
	single setQual = iota
	forAnyValue
	forAllValues
)

// Error is a policy S3 would refuse as MalformedPolicy; its message says
// why.
type Error struct{ Msg string }

func (e *Error) Error() string { return e.Msg }

func malformed(format string, args ...any) error { return &Error{fmt.Sprintf(format, args...)} }

// Parse reads a policy document kept for a bucket, to evaluate it. It
// checks the policy's grammar (effects, principals, actions, resources,
// condition operators and values), not what it names: that was judged
// when the policy was put (Check), against the names of that day, and a
// principal that names no one today is no reason to refuse the rest.
func Parse(doc []byte) (*Policy, error) { return parse(doc, nil) }

// Check reads a policy put on bucket as S3 judges one, in S3's words
// (MalformedPolicy): Parse's grammar, and before it the document as JSON,
// its version and what each statement names (principal names, S3's
// actions, resources in bucket, an action on objects needing an object
// resource). known reports whether a name is one of s3seal's access keys,
// which an "AWS" principal may name besides "*", an account id and an
// ARN.
func Check(doc []byte, bucket string, known func(string) bool) (*Policy, error) {
	return parse(doc, &judge{bucket: bucket, known: known})
}

// parse is the one reader of policy documents: Parse's, and Check's with
// j, whose judgment comes first for every statement, then the grammar.
func parse(doc []byte, j *judge) (*Policy, error) {
	if j != nil {
		doc = bytes.TrimSpace(doc)
		if len(doc) == 0 || doc[0] != '{' {
			return nil, malformed("Policies must be valid JSON and the first byte must be '{'")
		}
		if !json.Valid(doc) {
			return nil, malformed("This policy contains invalid Json")
		}
	}
	var raw struct {
		Version   *string         `json:"Version"`
		Statement json.RawMessage `json:"Statement"`
	}
	d := json.NewDecoder(bytes.NewReader(doc))
	if err := d.Decode(&raw); err != nil {
		return nil, malformed("This policy contains invalid Json")
	}
	if raw.Statement == nil {
		return nil, malformed("Missing required field Statement")
	}
	var rawStmts []map[string]json.RawMessage
	if s := bytes.TrimSpace(raw.Statement); len(s) > 0 && s[0] == '{' {
		var one map[string]json.RawMessage
		if json.Unmarshal(s, &one) != nil {
			return nil, malformed("This policy contains invalid Json")
		}
		rawStmts = append(rawStmts, one)
	} else if json.Unmarshal(raw.Statement, &rawStmts) != nil {
		return nil, malformed("This policy contains invalid Json")
	}
	if len(rawStmts) == 0 {
		return nil, malformed("Could not parse the policy: Statement is empty!")
	}
	if j != nil {
		if err := j.document(raw.Version, rawStmts); err != nil {
			return nil, err
		}
	}
	p := &Policy{}
	for _, rs := range rawStmts {
		st, err := parseStatement(rs)
		if err != nil {
			return nil, err
		}
		p.Statements = append(p.Statements, st)
	}
	return p, nil
}

func parseStatement(rs map[string]json.RawMessage) (Statement, error) {
	var st Statement
	if v, ok := rs["Sid"]; ok {
		if json.Unmarshal(v, &st.Sid) != nil {
			return st, malformed("Statement IDs (SID) must be strings")
		}
	}
	var effect string
	if v, ok := rs["Effect"]; !ok {
		return st, malformed("Missing required field Effect")
	} else if json.Unmarshal(v, &effect) != nil || effect != "Allow" && effect != "Deny" {
		return st, malformed("Invalid effect: %s", bytes.Trim(v, `"`))
	}
	st.Deny = effect == "Deny"
	pr, hasP := rs["Principal"]
	npr, hasNP := rs["NotPrincipal"]
	switch {
	case hasP == hasNP:
		return st, malformed("Missing required field Principal")
	case hasP:
		p, err := parsePrincipals(pr)
		if err != nil {
			return st, err
		}
		st.Principal = p
	default:
		p, err := parsePrincipals(npr)
		if err != nil {
			return st, err
		}
		st.NotPrincipal = p
	}
	var err error
	if st.Actions, st.NotActions, err = pair(rs, "Action", "NotAction", "Policy has invalid action"); err != nil {
		return st, err
	}
	for _, l := range [][]string{st.Actions, st.NotActions} {
		for i, a := range l {
			if a != "*" && !strings.HasPrefix(strings.ToLower(a), "s3:") {
				return st, malformed("Policy has invalid action")
			}
			l[i] = strings.ToLower(a)
		}
	}
	if st.Resources, st.NotResources, err = pair(rs, "Resource", "NotResource", "Policy has invalid resource"); err != nil {
		return st, err
	}
	if c, ok := rs["Condition"]; ok {
		if st.Conditions, err = parseConditions(c); err != nil {
			return st, err
		}
	}
	for _, k := range slices.Sorted(maps.Keys(rs)) {
		switch k {
		case "Sid", "Effect", "Principal", "NotPrincipal", "Action", "NotAction", "Resource", "NotResource", "Condition":
		default:
			return st, malformed("Unknown field %s", k)
		}
	}
	return st, nil
}

// pair reads an element that comes as name or notName, one of them.
func pair(rs map[string]json.RawMessage, name, notName, invalid string) (yes, no []string, err error) {
	v, has := rs[name]
	nv, hasNot := rs[notName]
	if !has && !hasNot {
		return nil, nil, malformed("Missing required field %s", name)
	}
	if has && hasNot {
		return nil, nil, malformed("%s", invalid)
	}
	raw := v
	if hasNot {
		raw = nv
	}
	list, ok := stringOrList(raw)
	if !ok || len(list) == 0 {
		return nil, nil, malformed("%s", invalid)
	}
	if hasNot {
		return nil, list, nil
	}
	return list, nil, nil
}

// stringOrList reads an element that is a non-empty string or a list of
// them.
func stringOrList(raw json.RawMessage) ([]string, bool) {
	var one string
	if json.Unmarshal(raw, &one) == nil {
		return []string{one}, one != ""
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

func parsePrincipals(raw json.RawMessage) (*Principals, error) {
	bad := malformed("Invalid principal in policy")
	p := &Principals{}
	if list, ok := stringOrList(raw); ok {
		// "*", or names as an "AWS" principal gives them.
		p.Everyone = slices.Contains(list, "*")
		if !p.Everyone {
			p.AWS = list
		}
		return p, nil
	}
	var byType map[string]json.RawMessage
	if json.Unmarshal(raw, &byType) != nil || len(byType) == 0 {
		return nil, bad
	}
	for typ, v := range byType {
		list, ok := stringOrList(v)
		if !ok {
			return nil, bad
		}
		switch typ {
		case "AWS":
			if slices.Contains(list, "*") {
				p.Everyone = true
				continue
			}
			p.AWS = append(p.AWS, list...)
		case "CanonicalUser":
			p.Canonical = append(p.Canonical, list...)
		case "Service":
			p.Service = append(p.Service, list...)
		case "Federated":
			p.Federated = append(p.Federated, list...)
		default:
			return nil, bad
		}
	}
	return p, nil
}

func parseConditions(raw json.RawMessage) ([]Condition, error) {
	var block map[string]map[string]json.RawMessage
	if json.Unmarshal(raw, &block) != nil {
		return nil, malformed("Conditions must be an object of operators, each an object of keys")
	}
	var out []Condition
	// In the order of their names, so that a document always reads as
	// one policy (and one refusal).
	for _, opName := range slices.Sorted(maps.Keys(block)) {
		keys := block[opName]
		c := Condition{Operator: opName}
		name := opName
		if rest, ok := strings.CutPrefix(name, "ForAnyValue:"); ok {
			c.set, name = forAnyValue, rest
		} else if rest, ok := strings.CutPrefix(name, "ForAllValues:"); ok {
			c.set, name = forAllValues, rest
		}
		if rest, ok := strings.CutSuffix(name, "IfExists"); ok && name != "Null" {
			c.ifExists, name = true, rest
		}
		op, ok := operators[name]
		if !ok || (op.kind == kNull && (c.ifExists || c.set != single)) {
			return nil, malformed("Invalid Condition type : %s", opName)
		}
		c.op = op
		if len(keys) == 0 {
			return nil, malformed("Condition %s names no key", opName)
		}
		for _, key := range slices.Sorted(maps.Keys(keys)) {
			v := keys[key]
			values, ok := conditionValues(v)
			if !ok {
				return nil, malformed("Invalid value for condition key %s", key)
			}
			for _, val := range values {
				if err := op.check(val); err != nil {
					return nil, malformed("Invalid Condition value for %s on %s: %s", opName, key, err)
				}
			}
			k := c
			k.Key, k.Values = NormalizeKey(key), values
			out = append(out, k)
		}
	}
	return out, nil
}

// NormalizeKey spells a condition key as the evaluation asks for it: the
// part before any "/" in lower case (keys are case-insensitive), what
// follows it (a tag key) as written.
func NormalizeKey(key string) string {
	name, rest, ok := strings.Cut(key, "/")
	if !ok {
		return strings.ToLower(key)
	}
	return strings.ToLower(name) + "/" + rest
}

// conditionValues reads a condition's value: a string, number or boolean,
// or a non-empty list of them.
func conditionValues(raw json.RawMessage) ([]string, bool) {
	scalar := func(r json.RawMessage) (string, bool) {
		var v any
		d := json.NewDecoder(bytes.NewReader(r))
		d.UseNumber()
		if d.Decode(&v) != nil {
			return "", false
		}
		switch v := v.(type) {
		case string:
			return v, true
		case json.Number:
			return v.String(), true
		case bool:
			if v {
				return "true", true
			}
			return "false", true
		}
		return "", false
	}
	if s, ok := scalar(raw); ok {
		return []string{s}, true
	}
	var list []json.RawMessage
	if json.Unmarshal(raw, &list) != nil || len(list) == 0 {
		return nil, false
	}
	out := make([]string, 0, len(list))
	for _, r := range list {
		s, ok := scalar(r)
		if !ok {
			return nil, false
		}
		out = append(out, s)
	}
	return out, true
}

// The parsed policies, by the SHA-256 of their document: a bucket's policy
// is parsed once, not on every request.
var cache = struct {
	sync.Mutex
	m map[[32]byte]*Policy
}{m: map[[32]byte]*Policy{}}

// maxCached bounds the cache; past it, it starts again empty.
const maxCached = 4096

// Cached is Parse through a cache keyed by the document's bytes. The
// policy returned is shared and must not be changed.
func Cached(doc []byte) (*Policy, error) {
	sum := sha256.Sum256(doc)
	cache.Lock()
	p, ok := cache.m[sum]
	cache.Unlock()
	if ok {
		return p, nil
	}
	p, err := Parse(doc)
	if err != nil {
		return nil, err
	}
	cache.Lock()
	if len(cache.m) >= maxCached {
		cache.m = map[[32]byte]*Policy{}
	}
	cache.m[sum] = p
	cache.Unlock()
	return p, nil
}

// IsMalformed reports whether err is a policy S3 refuses as MalformedPolicy.
func IsMalformed(err error) bool {
	var e *Error
	return errors.As(err, &e)
}
