package access

import "encoding/xml"

// ACLs are S3's AccessControlPolicy documents, as s3seal keeps them (a
// bucket's as a bucket document, an object's in its object record) and
// shows them: grants to canonical ids and to groups (a grant by e-mail
// address is kept as one to the canonical id it names). What they allow
// is aclDecision's; reading one from a request (canned ACLs, grant
// headers, documents) and showing it with display names are the S3
// front's.

// The groups whose grants decide: everyone (anonymous callers included,
// when s3seal serves them), and every principal that signs.
const (
	AllUsers           = "http://acs.amazonaws.com/groups/global/AllUsers"
	AuthenticatedUsers = "http://acs.amazonaws.com/groups/global/AuthenticatedUsers"
)

// ACL is an AccessControlPolicy document.
type ACL struct {
	XMLName xml.Name  `xml:"AccessControlPolicy"`
	Xmlns   string    `xml:"xmlns,attr,omitempty"`
	Owner   *ACLOwner `xml:"Owner,omitempty"`
	Grants  []Grant   `xml:"AccessControlList>Grant"`
}

// ACLOwner is an ACL's Owner: the owner of the bucket or object.
type ACLOwner struct {
	ID          string `xml:"ID,omitempty"`
	DisplayName string `xml:"DisplayName,omitempty"`
}

// Grant is one grant of an ACL: FULL_CONTROL, READ, WRITE, READ_ACP or
// WRITE_ACP to a grantee.
type Grant struct {
	Grantee    Grantee `xml:"Grantee"`
	Permission string  `xml:"Permission"`
}

// Grantee is whom a grant names: a CanonicalUser by ID, a Group by URI
// (AmazonCustomerByEmail by EmailAddress only as a request sends it).
// Its xsi:type is written with the "xsi" prefix S3 uses, which clients
// look for by name.
type Grantee struct {
	Type         string `xml:"type,attr"`
	ID           string `xml:"ID,omitempty"`
	DisplayName  string `xml:"DisplayName,omitempty"`
	URI          string `xml:"URI,omitempty"`
	EmailAddress string `xml:"EmailAddress,omitempty"`
}

const xsiNS = "http://www.w3.org/2001/XMLSchema-instance"

// MarshalXML writes g with S3's xsi prefix.
func (g Grantee) MarshalXML(e *xml.Encoder, start xml.StartElement) error {
	start.Attr = []xml.Attr{{Name: xml.Name{Local: "xmlns:xsi"}, Value: xsiNS}, {Name: xml.Name{Local: "xsi:type"}, Value: g.Type}}
	type plain struct {
		ID           string `xml:"ID,omitempty"`
		DisplayName  string `xml:"DisplayName,omitempty"`
		URI          string `xml:"URI,omitempty"`
		EmailAddress string `xml:"EmailAddress,omitempty"`
	}
	return e.EncodeElement(plain{g.ID, g.DisplayName, g.URI, g.EmailAddress}, start)
}

// DecodeACL reads an ACL s3seal kept; false when it does not parse or
// names no owner: it was s3seal's own, and it grants nothing.
func DecodeACL(doc []byte) (ACL, bool) {
	var a ACL
	if xml.Unmarshal(doc, &a) != nil || a.Owner == nil {
		return ACL{}, false
	}
	return a, true
}

// Gives reports whether a gives who perm (or FULL_CONTROL). With
// ignorePublic (a public access block's IgnorePublicAcls), grants to
// AllUsers and AuthenticatedUsers count for nothing.
func (a ACL) Gives(who Principal, perm string, ignorePublic bool) bool {
	for _, g := range a.Grants {
		if g.Permission != perm && g.Permission != "FULL_CONTROL" {
			continue
		}
		switch gr := g.Grantee; {
		case gr.Type == "CanonicalUser" && !who.Anonymous() && gr.ID == who.CanonicalID:
			return true
		case gr.Type == "Group" && gr.URI == AllUsers && !ignorePublic:
			return true
		case gr.Type == "Group" && gr.URI == AuthenticatedUsers && !ignorePublic && !who.Anonymous():
			return true
		}
	}
	return false
}

// Public reports whether a grants anything to everyone or to every
// principal that signs: what a public access block calls public
// (BlockPublicAcls refuses such an ACL, IgnorePublicAcls ignores its
// public grants).
func (a ACL) Public() bool {
	for _, g := range a.Grants {
		if g.Grantee.public() {
			return true
		}
	}
	return false
}

func (g Grantee) public() bool {
	return g.Type == "Group" && (g.URI == AllUsers || g.URI == AuthenticatedUsers)
}

// What ACL permissions allow, as S3 maps them to operations: the
// bucket's ACL gives READ (list the bucket), WRITE (write and delete its
// objects, multipart uploads; never a version's deletion, notByACL),
// READ_ACP and WRITE_ACP (read and change the bucket's ACL); an object's
// ACL gives READ (read the object), READ_ACP and WRITE_ACP (its ACL), and
// its owner all three. FULL_CONTROL is all of them.

// bucketOpPermission is the permission an operation needs of the bucket's
// ACL.
var bucketOpPermission = map[string]string{
	"ListObjects": "READ", "ListObjectsV2": "READ", "ListObjectVersions": "READ", "HeadBucket": "READ",
	"ListMultipartUploads": "READ",
	"GetBucketAcl":         "READ_ACP", "PutBucketAcl": "WRITE_ACP",
	"PutObject": "WRITE", "CopyObject": "WRITE", "DeleteObject": "WRITE", "DeleteObjects": "WRITE",
	"CreateMultipartUpload": "WRITE", "UploadPart": "WRITE", "UploadPartCopy": "WRITE",
	"CompleteMultipartUpload": "WRITE", "AbortMultipartUpload": "WRITE", "ListParts": "WRITE",
}

// objectOpPermission is the permission an operation needs of the
// object's ACL.
var objectOpPermission = map[string]string{
	"GetObject": "READ", "HeadObject": "READ", "GetObjectAttributes": "READ",
	"GetObjectAcl": "READ_ACP", "PutObjectAcl": "WRITE_ACP",
}

// notByACL are the actions no ACL grant gives, whatever its permission:
// S3 lets the bucket owner do them, or whom a bucket policy allows. A
// delete naming a version (s3:DeleteObjectVersion) destroys history, so a
// WRITE grant (a drop-box writer, everyone's public-read-write) may add
// delete markers but never remove a version, its own included.
var notByACL = map[string]bool{"s3:DeleteObjectVersion": true}
