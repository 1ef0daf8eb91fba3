package s3api

import (
	"encoding/xml"
	"sort"

	"github.com/s3seal/s3seal/s3api/cors"
)

// The documents of the store's settings (settings.go), as s3seal understands them. A
// GET's answer is decoded into its operation's document and encoded anew
// (answerDoc): what the client gets is what s3seal read, never the
// backend's bytes, so nothing else the backend says (an extra element, a
// DOCTYPE, a comment) reaches the client. Values are kept as the text the
// backend gave.

// docNS puts S3's namespace on a re-encoded document's root.
type docNS struct {
	Xmlns string `xml:"xmlns,attr,omitempty"`
}

func (d *docNS) setNS() { d.Xmlns = s3ns }

type retentionDoc struct {
	XMLName xml.Name `xml:"Retention"`
	docNS
	Mode            string `xml:"Mode,omitempty"`
	RetainUntilDate string `xml:"RetainUntilDate,omitempty"`
}

type legalHoldDoc struct {
	XMLName xml.Name `xml:"LegalHold"`
	docNS
	Status string `xml:"Status,omitempty"`
}

type tagDoc struct {
	XMLName xml.Name `xml:"Tagging"`
	docNS
	TagSet struct {
		Tags []tag `xml:"Tag"`
	} `xml:"TagSet"`
}

type lockConfigDoc struct {
	XMLName xml.Name `xml:"ObjectLockConfiguration"`
	docNS
	ObjectLockEnabled string    `xml:"ObjectLockEnabled,omitempty"`
	Rule              *lockRule `xml:"Rule,omitempty"`
}

type lockRule struct {
	DefaultRetention *lockDefault `xml:"DefaultRetention,omitempty"`
}

type lockDefault struct {
	Mode  string `xml:"Mode,omitempty"`
	Days  string `xml:"Days,omitempty"`
	Years string `xml:"Years,omitempty"`
}

type ownershipDoc struct {
	XMLName xml.Name `xml:"OwnershipControls"`
	docNS
	Rules []struct {
		ObjectOwnership string `xml:"ObjectOwnership"`
	} `xml:"Rule"`
}

type corsDoc struct {
	XMLName xml.Name `xml:"CORSConfiguration"`
	docNS
	Rules []cors.Rule `xml:"CORSRule"`
}

// xmlNode is an element tree: a lifecycle configuration, whose schema S3
// keeps extending (filters, size bounds, newer-version counts), is
// re-encoded as elements and text only, not against a schema of s3seal's,
// so that an admin reading it and putting it back loses nothing.
type xmlNode struct {
	XMLName xml.Name
	Text    string    `xml:",chardata"`
	Nodes   []xmlNode `xml:",any"`
}

// bare drops namespaces (the root gets S3's) and the white space between
// child elements.
func (n *xmlNode) bare() {
	n.XMLName.Space = ""
	if len(n.Nodes) > 0 {
		n.Text = ""
	}
	for i := range n.Nodes {
		n.Nodes[i].bare()
	}
}

// lifecycleDoc is a lifecycle configuration as an element tree.
type lifecycleDoc struct {
	XMLName xml.Name `xml:"LifecycleConfiguration"`
	docNS
	Nodes []xmlNode `xml:",any"`
}

// answerDoc decodes a store's GET answer into the setting's document
// and returns it encoded anew, false when it is no such document.
func answerDoc(doc document, body []byte) ([]byte, bool) {
	if decodeXML(body, doc) != nil {
		return nil, false
	}
	if l, ok := doc.(*lifecycleDoc); ok {
		for i := range l.Nodes {
			l.Nodes[i].bare()
		}
	}
	if c, ok := doc.(*lockConfigDoc); ok {
		c.dropZeroPeriods()
	}
	if t, ok := doc.(*tagDoc); ok {
		t.sortTags()
	}
	doc.setNS()
	out, err := xml.Marshal(doc)
	if err != nil {
		return nil, false
	}
	return append([]byte(xml.Header), out...), true
}

// document is what answerDoc decodes into.
type document interface{ setNS() }

// sortTags orders a tag set by key. A tag set has no order in S3, and
// stores differ (moto keeps the order written, Ceph RGW sorts by key):
// s3seal answers by key whatever the store, as RGW does.
func (t *tagDoc) sortTags() {
	sort.SliceStable(t.TagSet.Tags, func(i, j int) bool { return t.TagSet.Tags[i].Key < t.TagSet.Tags[j].Key })
}
