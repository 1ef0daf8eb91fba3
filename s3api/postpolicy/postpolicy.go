// Package postpolicy is the policy of a browser POST upload: it parses
// the base64 JSON document (an expiration and conditions on the form's
// fields) and checks a form and its bucket against the conditions, with
// S3's answers when they do not hold.
package postpolicy

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/s3seal/s3seal/s3api/s3err"
)

// A POST policy (browser uploads): a base64 JSON document with an
// expiration and conditions on the form's fields, signed by the uploader's
// credential. Its grammar and S3's answers are in docs/DESIGN.md
// ("Browser POST uploads").

// Policy is a parsed POST policy.
type Policy struct {
	Expiration time.Time
	conds      []cond
}

// Form is a POST form's fields as a policy sees them: by lower-case name
// (the names are case-insensitive), in the order sent.
type Form interface {
	// Value is the value of the field of that lower-case name.
	Value(name string) (string, bool)
	// Names are the fields' lower-case names in the order sent.
	Names() []string
	// Spelled is the field's name as first sent.
	Spelled(name string) string
}

// cond is one condition. For eq and starts-with, field is the
// lower-case field name without "$" ("" when the policy wrote no "$",
// which no field matches); for content-length-range, min and max.
type cond struct {
	op       string // "eq", "starts-with", "content-length-range"
	field    string
	value    string
	min, max int64
	text     string // as S3 quotes it in "Policy Condition failed: ..."
}

// SizeRange is what content-length-range allows of the file; max < 0 is
// no limit.
type SizeRange struct{ Min, Max int64 }

func invalid(msg string) *s3err.Error {
	return s3err.New(s3err.InvalidPolicyDocument, "Invalid Policy: "+msg)
}

// Denied is S3's refusal of a form its policy does not allow.
func Denied(msg string) *s3err.Error {
	return s3err.New(s3err.AccessDenied, "Invalid according to Policy: "+msg)
}

// Parse decodes the base64 policy field. Its member names are
// case-sensitive ("expiration", "conditions"); operators and field names
// are not.
func Parse(b64 string) (*Policy, error) {
	if b64 == "" {
		return nil, invalid("Expecting '{' but found End-of-Input")
	}
	raw, err := base64.StdEncoding.DecodeString(b64)
	if err != nil {
		return nil, invalid("invalid Base64 encoding.")
	}
	var doc map[string]json.RawMessage
	if err := strictJSON(raw, &doc); err != nil || doc == nil {
		return nil, invalid("Invalid JSON.")
	}
	for k := range doc {
		if k != "expiration" && k != "conditions" {
			return nil, invalid("Unexpected: " + strconv.Quote(strings.ToLower(k)))
		}
	}
	var p Policy
	exp, ok := doc["expiration"]
	if !ok {
		return nil, invalid("Policy missing expiration.")
	}
	var es string
	if err := json.Unmarshal(exp, &es); err != nil {
		return nil, invalid("Invalid JSON.")
	}
	// The layout takes an optional fraction of a second (".000Z").
	if p.Expiration, err = time.Parse("2006-01-02T15:04:05Z", es); err != nil {
		return nil, invalid("Invalid 'expiration' value: '" + truncateText(es) + "'")
	}
	cs, ok := doc["conditions"]
	if !ok {
		return nil, invalid("Policy missing conditions.")
	}
	var list []json.RawMessage
	if err := json.Unmarshal(cs, &list); err != nil || list == nil {
		return nil, invalid("Invalid 'conditions' value: must be a List.")
	}
	for _, c := range list {
		pc, err := parseCondition(c)
		if err != nil {
			return nil, err
		}
		p.conds = append(p.conds, pc)
	}
	return &p, nil
}

// strictJSON decodes one JSON document, numbers kept as json.Number.
func strictJSON(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return errors.New("data after the JSON document")
	}
	return nil
}

func parseCondition(c json.RawMessage) (cond, error) {
	switch t := bytes.TrimSpace(c); {
	case len(t) > 0 && t[0] == '{':
		var m map[string]any
		if err := strictJSON(t, &m); err != nil {
			return cond{}, invalid("Invalid JSON.")
		}
		if len(m) != 1 {
			return cond{}, invalid("Invalid Simple-Condition: Simple-Conditions must have exactly one property specified.")
		}
		for name, v := range m {
			s, ok := v.(string)
			if !ok {
				return cond{}, invalid("Invalid Simple-Condition: value must be a string.")
			}
			return cond{op: "eq", field: strings.ToLower(name), value: s, text: condText("eq", "$"+name, s)}, nil
		}
	case len(t) > 0 && t[0] == '[':
		var a []any
		if err := strictJSON(t, &a); err != nil {
			return cond{}, invalid("Invalid JSON.")
		}
		// S3 quotes a list condition as the policy wrote it.
		return parseListCondition(a, string(t))
	}
	return cond{}, invalid("Invalid condition test: must be a List or Object.")
}

func parseListCondition(a []any, text string) (cond, error) {
	if len(a) == 0 {
		return cond{}, invalid("Invalid Condition: missing operation identifier.")
	}
	op, ok := a[0].(string)
	if !ok {
		return cond{}, invalid("Invalid Condition: missing operation identifier.")
	}
	pc := cond{op: strings.ToLower(op), text: text}
	switch pc.op {
	case "eq", "starts-with":
		if len(a) != 3 {
			return cond{}, invalid("Invalid " + op + ": wrong number of arguments.")
		}
		name, ok1 := a[1].(string)
		val, ok2 := a[2].(string)
		if !ok1 || !ok2 {
			return cond{}, invalid("Invalid JSON.")
		}
		if f, ok := strings.CutPrefix(name, "$"); ok {
			pc.field = strings.ToLower(f)
		}
		pc.value = val
	case "content-length-range":
		if len(a) != 3 {
			return cond{}, invalid("Invalid " + op + ": wrong number of arguments.")
		}
		var err error
		if pc.min, err = rangeBound(a[1]); err == nil {
			pc.max, err = rangeBound(a[2])
		}
		if err != nil {
			return cond{}, err
		}
	default:
		return cond{}, invalid("Invalid Condition: unknown operation '" + truncateText(op) + "'.")
	}
	return pc, nil
}

// rangeBound reads a content-length-range bound: an integer, or a string
// holding one. A fraction, or a string that is no number, is not JSON S3
// takes.
func rangeBound(v any) (int64, error) {
	var n int64
	var err error
	switch b := v.(type) {
	case json.Number:
		if n, err = b.Int64(); err != nil {
			return 0, invalid("Invalid JSON.")
		}
	case string:
		if n, err = strconv.ParseInt(b, 10, 64); err != nil {
			return 0, invalid("Invalid JSON.")
		}
	default:
		return 0, invalid("Invalid JSON.")
	}
	if n < 0 {
		return 0, invalid("Invalid content-length-range: the bounds must not be negative.")
	}
	return n, nil
}

// condText writes a simple condition as S3 quotes it: the eq list it
// stands for, with ", " between its items, the name spelled as the policy
// spelled it.
func condText(items ...any) string {
	parts := make([]string, len(items))
	for i, it := range items {
		var b bytes.Buffer
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(false)
		_ = enc.Encode(it)
		parts[i] = strings.TrimSuffix(b.String(), "\n")
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

// postExempt are the fields no condition needs to cover (AWS's list for
// SigV4, and for Signature Version 2 its awsaccesskeyid and signature).
func postExempt(name string) bool {
	switch name {
	case "x-amz-signature", "file", "policy", "awsaccesskeyid", "signature":
		return true
	}
	// A flexible checksum of the file only narrows what is accepted (the
	// file must match it), so it needs no condition of its own.
	return strings.HasPrefix(name, "x-ignore-") || strings.HasPrefix(name, "x-amz-checksum-")
}

// Check evaluates every condition against the form (whose ${filename} is
// already expanded) and the bucket of the URL, then requires each field
// to be covered by a condition. The bucket counts as a field: a policy
// that does not name it does not hold for any bucket. It returns the size
// range the file must fall in, checked as the file streams.
func (p *Policy) Check(f Form, bucket string) (SizeRange, error) {
	rng := SizeRange{Min: 0, Max: -1}
	covered := map[string]bool{}
	for _, c := range p.conds {
		if c.op == "content-length-range" {
			rng.Min = max(rng.Min, c.min)
			if rng.Max < 0 || c.max < rng.Max {
				rng.Max = c.max
			}
			continue
		}
		covered[c.field] = true
		v, ok := f.Value(c.field)
		if c.field == "bucket" {
			v, ok = bucket, true
		}
		if !ok && c.op == "starts-with" && c.value == "" {
			// starts-with "" allows any value, none included: a form
			// may leave such a field out (s3-tests' default-encryption
			// forms name x-amz-server-side-encryption so).
			v, ok = "", true
		}
		if !ok || c.field == "" || !c.holds(v) {
			// The log names the field, never the condition's value: a
			// policy may hold a customer key (SSE-C) in an eq condition.
			e := Denied("Policy Condition failed: " + c.text)
			e.Why = fmt.Sprintf("the policy's %s condition on field %q does not hold", c.op, c.field)
			return rng, e
		}
	}
	var extra []string
	if !covered["bucket"] {
		extra = append(extra, "bucket")
	}
	for _, name := range f.Names() {
		if name == "bucket" && !covered["bucket"] {
			continue // named once, above
		}
		if !postExempt(name) && !covered[name] {
			extra = append(extra, f.Spelled(name))
		}
	}
	if len(extra) > 0 {
		return rng, Denied("Extra input fields: " + strings.Join(extra, ", "))
	}
	return rng, nil
}

// holds applies an eq or starts-with condition to a value. Values are
// case-sensitive. A Content-Type with commas is a list, each item of
// which must start with the prefix.
func (c cond) holds(v string) bool {
	if c.op == "eq" {
		return v == c.value
	}
	if c.field != "content-type" {
		return strings.HasPrefix(v, c.value)
	}
	for _, item := range strings.Split(v, ",") {
		if !strings.HasPrefix(strings.TrimSpace(item), c.value) {
			return false
		}
	}
	return true
}

// truncateText bounds client text echoed in an error.
func truncateText(s string) string {
	if len(s) > 64 {
		return fmt.Sprintf("%s...", s[:64])
	}
	return s
}
