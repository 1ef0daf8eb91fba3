package s3api

import (
	"encoding/xml"
	"strings"
	"time"

	"github.com/s3seal/s3seal/s3api/s3err"
)

// The lock documents s3seal judges (Retention, LegalHold,
// ObjectLockConfiguration) are forwarded as s3seal re-encodes them from
// the values it judged, never as the client's bytes: stores read XML
// their own way (moto keeps the first of two elements and tells
// namespaces apart, Go's decoder keeps the last and matches local names),
// so forwarding the client's text would let a document mean one thing to
// the check and another to the store. A document s3seal cannot read in
// exactly one way (an element twice, an element in a foreign namespace,
// an element it does not know, text beside elements) is MalformedXML.

// lockNode is one element of a lock document: its children by local name.
type lockNode struct {
	text  string
	nodes map[string]*lockNode
}

// lockSchema names, for each element, the children it may have; a leaf
// has none.
type lockSchema map[string]lockSchema

var (
	retentionSchema = lockSchema{"Mode": nil, "RetainUntilDate": nil}
	legalHoldSchema = lockSchema{"Status": nil}
	lockConfSchema  = lockSchema{"ObjectLockEnabled": nil,
		"Rule": {"DefaultRetention": {"Mode": nil, "Days": nil, "Years": nil}}}
)

// parseLockDoc reads body as the root element root with the given schema,
// strictly (see above). Elements are in no namespace or in S3's.
func parseLockDoc(body []byte, root string, schema lockSchema) (*lockNode, error) {
	var x xmlNode
	if err := decodeXML(body, &x); err != nil {
		return nil, err
	}
	if x.XMLName.Local != root {
		return nil, s3err.New(s3err.MalformedXML, "")
	}
	return strictNode(x, schema)
}

func strictNode(x xmlNode, schema lockSchema) (*lockNode, error) {
	bad := s3err.New(s3err.MalformedXML, "")
	if x.XMLName.Space != "" && x.XMLName.Space != s3ns {
		return nil, bad
	}
	n := &lockNode{text: x.Text}
	if schema == nil {
		if len(x.Nodes) > 0 {
			return nil, bad
		}
		return n, nil
	}
	if strings.TrimSpace(x.Text) != "" {
		return nil, bad
	}
	n.nodes = map[string]*lockNode{}
	for _, c := range x.Nodes {
		sub, known := schema[c.XMLName.Local]
		if !known || n.nodes[c.XMLName.Local] != nil {
			return nil, bad
		}
		cn, err := strictNode(c, sub)
		if err != nil {
			return nil, err
		}
		n.nodes[c.XMLName.Local] = cn
	}
	return n, nil
}

// value is the text of the child named, and whether it is there.
func (n *lockNode) value(name string) (string, bool) {
	if n == nil || n.nodes[name] == nil {
		return "", false
	}
	return n.nodes[name].text, true
}

// encodeLockDoc encodes doc with S3's namespace and the XML header.
func encodeLockDoc(doc document) ([]byte, error) {
	doc.setNS()
	out, err := xml.Marshal(doc)
	if err != nil {
		return nil, err
	}
	return append([]byte(xml.Header), out...), nil
}

// retainUntilText is the date a retention is forwarded with: UTC, RFC
// 3339, whole seconds, rounded up (never shorter than the one judged).
func retainUntilText(t time.Time) string {
	if t.Truncate(time.Second) != t {
		t = t.Truncate(time.Second).Add(time.Second)
	}
	return t.UTC().Format(time.RFC3339)
}
