package s3api

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/xml"
	"net/http"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/s3seal/s3seal/s3api/s3err"
	"github.com/s3seal/s3seal/sealstore"
)

// Lifecycle configurations: the store keeps and applies them; s3seal
// judges a PUT's rules as S3 does before forwarding (checkLifecycle), and
// reads them back (lifecycleCache, lifecycle_cache.go) to answer
// x-amz-expiration on PUT, GET and HEAD, as S3 does.

// maxLifecycleRuleID is S3's limit on a rule's ID, in characters.
const maxLifecycleRuleID = 255

// lcRule is what s3seal reads of a lifecycle rule: its name, whether it
// applies, which objects it matches and when it expires them.
type lcRule struct {
	ID      string
	Enabled bool
	Prefix  string
	Tags    []tag
	// MinSize and MaxSize are ObjectSizeGreaterThan and
	// ObjectSizeLessThan; -1 when absent.
	MinSize, MaxSize int64
	Days             int       // Expiration/Days; 0 when absent
	Date             time.Time // Expiration/Date; zero when absent
	Transitions      bool      // the rule moves current versions to another storage class
}

// child returns the first child element named name.
func (n *xmlNode) child(name string) (*xmlNode, bool) {
	for i := range n.Nodes {
		if n.Nodes[i].XMLName.Local == name {
			return &n.Nodes[i], true
		}
	}
	return nil, false
}

// children returns the child elements named name.
func (n *xmlNode) children(name string) []*xmlNode {
	var out []*xmlNode
	for i := range n.Nodes {
		if n.Nodes[i].XMLName.Local == name {
			out = append(out, &n.Nodes[i])
		}
	}
	return out
}

// text is the trimmed text of the child element named name.
func (n *xmlNode) text(name string) (string, bool) {
	c, ok := n.child(name)
	if !ok {
		return "", false
	}
	return strings.TrimSpace(c.Text), true
}

// lcInvalid is S3's InvalidArgument on a lifecycle rule.
func lcInvalid(msg string) error { return s3err.New(s3err.InvalidArgument, msg) }

// parseLifecycleDate reads a rule's Date: ISO 8601, which S3 requires to
// be midnight UTC ("'Date' must be at midnight GMT").
func parseLifecycleDate(s string) (time.Time, error) {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		if t, err = time.Parse("2006-01-02", s); err != nil {
			return time.Time{}, s3err.New(s3err.MalformedXML, "")
		}
	}
	if t = t.UTC(); !t.Equal(t.Truncate(24 * time.Hour)) {
		return time.Time{}, lcInvalid("'Date' must be at midnight GMT")
	}
	return t, nil
}

// reachesReserved reports an enabled rule that would expire or
// transition current versions of s3seal's own keys (under
// sealstore.ReservedPrefix), which carry no tags: the store would drop
// the bucket's owner (opening the bucket to every credential whose lists
// reach it), its policy and ACLs, and the manifests multipart objects
// are read by. Removing expired delete markers and noncurrent versions
// leaves them be.
func (r lcRule) reachesReserved() bool {
	acts := r.Days > 0 || !r.Date.IsZero() || r.Transitions
	matches := len(r.Tags) == 0 && (strings.HasPrefix(sealstore.ReservedPrefix, r.Prefix) || strings.HasPrefix(r.Prefix, sealstore.ReservedPrefix))
	return r.Enabled && acts && matches
}

// repeatsElement reports an element of a rule given twice where S3 takes
// one, at the rule's level or in its Filter, And, Expiration and
// transitions (Tag in And, Transition and NoncurrentVersionTransition
// repeat by design).
func repeatsElement(n *xmlNode) bool {
	seen := map[string]bool{}
	for i := range n.Nodes {
		c := &n.Nodes[i]
		name := c.XMLName.Local
		many := name == "Transition" || name == "NoncurrentVersionTransition" || (name == "Tag" && n.XMLName.Local == "And")
		if seen[name] && !many {
			return true
		}
		seen[name] = true
		if len(c.Nodes) > 0 && repeatsElement(c) {
			return true
		}
	}
	return false
}

// parseLifecycleRule reads one Rule element and judges it as S3 does.
func parseLifecycleRule(n *xmlNode) (lcRule, error) {
	r := lcRule{MinSize: -1, MaxSize: -1}
	if repeatsElement(n) {
		// S3 takes each element of a rule once. A second copy would be
		// read by s3seal one way and by a store another (the first or the
		// last), and the body goes to the store as sent.
		return r, s3err.New(s3err.MalformedXML, "")
	}
	r.ID, _ = n.text("ID")
	if utf8.RuneCountInString(r.ID) > maxLifecycleRuleID {
		return r, lcInvalid("ID length should not exceed allowed limit of " + strconv.Itoa(maxLifecycleRuleID))
	}
	switch st, _ := n.text("Status"); st {
	case "Enabled":
		r.Enabled = true
	case "Disabled":
	default:
		return r, s3err.New(s3err.MalformedXML, "")
	}
	r.Prefix, _ = n.text("Prefix")
	if f, ok := n.child("Filter"); ok {
		scope := f
		if and, ok := f.child("And"); ok {
			scope = and
		}
		r.Prefix, _ = scope.text("Prefix")
		for _, t := range scope.children("Tag") {
			k, _ := t.text("Key")
			v, _ := t.text("Value")
			r.Tags = append(r.Tags, tag{Key: k, Value: v})
		}
		for name, dst := range map[string]*int64{"ObjectSizeGreaterThan": &r.MinSize, "ObjectSizeLessThan": &r.MaxSize} {
			if s, ok := scope.text(name); ok {
				v, err := strconv.ParseInt(s, 10, 64)
				if err != nil || v < 0 {
					return r, s3err.New(s3err.MalformedXML, "")
				}
				*dst = v
			}
		}
	}
	if e, ok := n.child("Expiration"); ok {
		if s, ok := e.text("Days"); ok {
			d, err := strconv.Atoi(s)
			if err != nil {
				return r, s3err.New(s3err.MalformedXML, "")
			}
			if d <= 0 {
				return r, lcInvalid("'Days' for Expiration action must be a positive integer")
			}
			r.Days = d
		}
		if s, ok := e.text("Date"); ok {
			t, err := parseLifecycleDate(s)
			if err != nil {
				return r, err
			}
			r.Date = t
		}
	}
	for _, t := range n.children("Transition") {
		r.Transitions = true
		if s, ok := t.text("Date"); ok {
			if _, err := parseLifecycleDate(s); err != nil {
				return r, err
			}
		}
	}
	return r, nil
}

// parseLifecycle reads a lifecycle configuration's rules, judged as S3
// judges them: 1 to maxLifecycleRules rules (else MalformedXML), each
// Status Enabled or Disabled (MalformedXML), IDs of at most 255
// characters and never twice, a positive Expiration Days and dates at
// midnight UTC (InvalidArgument).
func parseLifecycle(body []byte) (*lifecycleDoc, []lcRule, error) {
	doc := &lifecycleDoc{}
	if err := decodeXML(body, doc); err != nil {
		return nil, nil, err
	}
	var rules []lcRule
	seen := map[string]bool{}
	for i := range doc.Nodes {
		n := &doc.Nodes[i]
		if n.XMLName.Local != "Rule" {
			continue
		}
		r, err := parseLifecycleRule(n)
		if err != nil {
			return nil, nil, err
		}
		if r.ID != "" && seen[r.ID] {
			return nil, nil, lcInvalid("Rule ID must be unique. Found same ID for more than one rule")
		}
		seen[r.ID] = true
		rules = append(rules, r)
	}
	if len(rules) == 0 || len(rules) > maxLifecycleRules {
		return nil, nil, s3err.New(s3err.MalformedXML, "")
	}
	return doc, rules, nil
}

// checkLifecycle judges a PutBucketLifecycleConfiguration body
// (parseLifecycle). S3 names a rule sent without an ID and answers that
// name on GET: s3seal gives such a rule a random ID before forwarding,
// so every store answers one, and returns the document with it; a body
// whose rules all have IDs is forwarded as sent.
func checkLifecycle(body []byte) ([]byte, error) {
	doc, rules, err := parseLifecycle(body)
	if err != nil {
		return nil, err
	}
	for _, r := range rules {
		if r.reachesReserved() {
			return nil, s3err.New(s3err.InvalidRequest, "s3seal keeps the bucket's owner, policies, ACLs and multipart manifests under "+sealstore.ReservedPrefix+
				" in the bucket; rule "+strconv.Quote(r.ID)+" would expire or move them, which opens the bucket and loses objects. Give the rule a prefix or a tag filter that does not match "+sealstore.ReservedPrefix+".")
		}
	}
	named := false
	for i := range doc.Nodes {
		n := &doc.Nodes[i]
		if n.XMLName.Local != "Rule" {
			continue
		}
		if id, ok := n.text("ID"); ok && id != "" {
			continue
		}
		id := xmlNode{XMLName: xml.Name{Local: "ID"}, Text: newLifecycleRuleID()}
		kept := n.Nodes[:0:0]
		for _, c := range n.Nodes {
			if c.XMLName.Local != "ID" {
				kept = append(kept, c)
			}
		}
		n.Nodes = append([]xmlNode{id}, kept...)
		named = true
	}
	if !named {
		return nil, nil
	}
	for i := range doc.Nodes {
		doc.Nodes[i].bare()
	}
	doc.setNS()
	out, err := xml.Marshal(doc)
	if err != nil {
		return nil, s3err.New(s3err.MalformedXML, "")
	}
	return append([]byte(xml.Header), out...), nil
}

// newLifecycleRuleID is a random rule ID, 48 characters of base64 like
// the IDs S3 gives.
func newLifecycleRuleID() string {
	b := make([]byte, 36)
	_, _ = rand.Read(b)
	return base64.StdEncoding.EncodeToString(b)
}

// matches says whether the rule applies to an object of that key, size
// and tags.
func (r *lcRule) matches(key string, size int64, tags []tag) bool {
	if !r.Enabled || !strings.HasPrefix(key, r.Prefix) {
		return false
	}
	if (r.MinSize >= 0 && size <= r.MinSize) || (r.MaxSize >= 0 && size >= r.MaxSize) {
		return false
	}
	for _, want := range r.Tags {
		found := false
		for _, t := range tags {
			if t == want {
				found = true
				break
			}
		}
		if !found {
			return false
		}
	}
	return true
}

// expiry is when the rule expires an object last modified at mod: its
// Date, or mod plus its Days rounded up to the next midnight UTC, as S3
// computes it; zero for a rule that expires nothing by age or date.
func (r *lcRule) expiry(mod time.Time) time.Time {
	switch {
	case !r.Date.IsZero():
		return r.Date
	case r.Days > 0:
		t := mod.UTC().Add(time.Duration(r.Days) * 24 * time.Hour)
		return t.Truncate(24 * time.Hour).Add(24 * time.Hour)
	}
	return time.Time{}
}

// expirationHeader is x-amz-expiration for an object: the earliest expiry
// among the rules that match it, `expiry-date="<HTTP date>",
// rule-id="<ID>"`, or "" when none does. tags is called only when a
// matching rule filters on tags.
func expirationHeader(rules []lcRule, key string, size int64, mod time.Time, tags func() []tag) string {
	var best time.Time
	id := ""
	var got []tag
	fetched := false
	for i := range rules {
		r := &rules[i]
		if len(r.Tags) > 0 && !fetched {
			got, fetched = tags(), true
		}
		if !r.matches(key, size, got) {
			continue
		}
		if t := r.expiry(mod); !t.IsZero() && (best.IsZero() || t.Before(best)) {
			best, id = t, r.ID
		}
	}
	if best.IsZero() {
		return ""
	}
	return `expiry-date="` + best.Format(http.TimeFormat) + `", rule-id="` + id + `"`
}
