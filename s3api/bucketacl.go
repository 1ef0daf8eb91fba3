package s3api

import (
	"bytes"
	"encoding/xml"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/s3seal/s3seal/backend"
	"github.com/s3seal/s3seal/s3api/s3err"
)

var (
	aclPermissions = []string{"FULL_CONTROL", "READ", "WRITE", "READ_ACP", "WRITE_ACP"}
	aclGranteeType = []string{"CanonicalUser", "Group", "AmazonCustomerByEmail"}
)

// judgeBucketACL checks an admin's PutBucketAcl as AWS does, before the
// store sees it (moto answers most of these with 503 or takes them): the
// bucket must exist; a bucket whose object ownership is
// BucketOwnerEnforced takes no ACL (AccessControlListNotSupported); one
// of a canned ACL, grant headers or a document, not two
// (InvalidRequest, UnexpectedContent), not none (MissingSecurityHeader);
// a document with an owner ID, known permissions and grantee types, and
// each grantee named (MalformedACLError).
func (s *Server) judgeBucketACL(req *request, body []byte) error {
	if err := s.store.Backend().HeadBucket(req.r.Context(), req.bucket); err != nil {
		return bucketErr(err)
	}
	if s.ownershipEnforced(req) {
		return s3err.New("AccessControlListNotSupported", "")
	}
	canned := strings.TrimSpace(req.r.Header.Get("X-Amz-Acl")) != ""
	grants := hasGrantHeader(req.r.Header)
	doc := len(bytes.TrimSpace(body)) > 0
	switch {
	case canned && grants:
		return s3err.New("InvalidRequest", "Specifying both Canned ACLs and Header Grants is not allowed.")
	case doc && (canned || grants):
		return s3err.New("UnexpectedContent", "")
	case !canned && !grants && !doc:
		return s3err.New("MissingSecurityHeader", "")
	case doc:
		return checkACLDoc(body)
	}
	return nil
}

// checkACLDoc checks an AccessControlPolicy document.
func checkACLDoc(body []byte) error {
	var a aclDoc
	if xml.Unmarshal(body, &a) != nil || a.Owner == nil || strings.TrimSpace(a.Owner.ID) == "" {
		return s3err.New("MalformedACLError", "")
	}
	for _, g := range a.Grants {
		gr := g.Grantee
		named := gr.Type == "CanonicalUser" && gr.ID != "" || gr.Type == "Group" && gr.URI != "" ||
			gr.Type == "AmazonCustomerByEmail" && gr.EmailAddress != ""
		if !slices.Contains(aclPermissions, g.Permission) || !slices.Contains(aclGranteeType, gr.Type) || !named {
			return s3err.New("MalformedACLError", "")
		}
	}
	return nil
}

// ownershipEnforced reports whether the bucket's object ownership is
// BucketOwnerEnforced, as the store answers GET ?ownershipControls (none
// kept: ACLs are on, as on a bucket whose controls were deleted).
func (s *Server) ownershipEnforced(req *request) bool {
	in := backend.RawRequest{Method: http.MethodGet, Bucket: req.bucket, Query: url.Values{"ownershipControls": {""}}, Header: http.Header{}}
	out, err := s.cfg.Forwarder.Forward(req.r.Context(), in)
	if err != nil {
		return false
	}
	var doc ownershipDoc
	if xml.Unmarshal(out.Body, &doc) != nil {
		return false
	}
	for _, r := range doc.Rules {
		if strings.TrimSpace(r.ObjectOwnership) == "BucketOwnerEnforced" {
			return true
		}
	}
	return false
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
		return nil, s3err.New("MalformedXML", "")
	}
	return nil, nil
}
