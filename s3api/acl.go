package s3api

import (
	"encoding/xml"
	"slices"
	"strings"

	"github.com/s3seal/s3seal/access"
	"github.com/s3seal/s3seal/s3api/s3err"
)

// What S3 takes in an ACL document and an ownership controls document.

var (
	aclPermissions = []string{"FULL_CONTROL", "READ", "WRITE", "READ_ACP", "WRITE_ACP"}
	aclGranteeType = []string{"CanonicalUser", "Group", "AmazonCustomerByEmail"}
)

// checkACLDoc checks an AccessControlPolicy document.
func checkACLDoc(body []byte) error {
	var a access.ACL
	if xml.Unmarshal(body, &a) != nil || a.Owner == nil || strings.TrimSpace(a.Owner.ID) == "" {
		return s3err.New(s3err.MalformedACLError, "")
	}
	for _, g := range a.Grants {
		gr := g.Grantee
		named := gr.Type == "CanonicalUser" && gr.ID != "" || gr.Type == "Group" && gr.URI != "" ||
			gr.Type == "AmazonCustomerByEmail" && gr.EmailAddress != ""
		if !slices.Contains(aclPermissions, g.Permission) || !slices.Contains(aclGranteeType, gr.Type) || !named {
			return s3err.New(s3err.MalformedACLError, "")
		}
	}
	return nil
}

// checkOwnershipControls checks a PutBucketOwnershipControls document as
// AWS does (moto answers a malformed one with 503 or takes it): exactly
// one rule, with one of S3's object ownership settings; else MalformedXML.
func checkOwnershipControls(body []byte) ([]byte, error) {
	var doc ownershipDoc
	if err := decodeXML(body, &doc); err != nil {
		return nil, err
	}
	if len(doc.Rules) != 1 || !slices.Contains(objectOwnerships, strings.TrimSpace(doc.Rules[0].ObjectOwnership)) {
		return nil, s3err.New(s3err.MalformedXML, "")
	}
	return nil, nil
}
