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

// ACLs, which admins alone change: an admin's PutBucketAcl and ownership
// controls judged as AWS judges them, an ACL document put back in the
// store's terms, and a non-admin's PUT ?acl that changes nothing.

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

// aclToStore turns an admin's PUT ?acl document of a bucket back into the
// store's terms: s3seal shows the caller's access key as the owner of
// every bucket (answerDoc), so a document read, changed and put
// back names it where the store has its own account. The store's owner
// ID, read from its current ACL, takes its place. Other documents go as
// sent.
func (s *Server) aclToStore(req *request, in backend.RawRequest) ([]byte, error) {
	caller := req.auth.AccessKey
	if len(bytes.TrimSpace(in.Body)) == 0 || !bytes.Contains(in.Body, []byte(caller)) {
		return in.Body, nil
	}
	var doc aclDoc
	if xml.Unmarshal(in.Body, &doc) != nil {
		return in.Body, nil
	}
	names := doc.Owner != nil && doc.Owner.ID == caller
	for _, g := range doc.Grants {
		names = names || g.Grantee.ID == caller
	}
	if !names {
		return in.Body, nil
	}
	cur := backend.RawRequest{Method: http.MethodGet, Bucket: in.Bucket, Key: in.Key, Query: in.Query, Header: http.Header{}}
	out, err := s.cfg.Forwarder.Forward(req.r.Context(), cur)
	if err != nil {
		return nil, forwardErr(err)
	}
	var now aclDoc
	if xml.Unmarshal(out.Body, &now) != nil || now.Owner == nil || now.Owner.ID == "" {
		return in.Body, nil
	}
	if doc.Owner != nil && doc.Owner.ID == caller {
		doc.Owner.ID, doc.Owner.DisplayName = now.Owner.ID, ""
	}
	for i := range doc.Grants {
		if g := &doc.Grants[i].Grantee; g.ID == caller {
			g.ID, g.DisplayName = now.Owner.ID, ""
		}
	}
	doc.setNS()
	b, err := xml.Marshal(doc)
	if err != nil {
		return nil, err
	}
	return append([]byte(xml.Header), b...), nil
}

// unchangedACL answers a non-admin's PUT ?acl on an object (in, its body
// read and verified): ACLs are changed by admins only, but an ACL that
// grants only the object's owner, put on an object whose ACL grants only
// its owner, changes nothing and is answered 200 without a write. s3cmd
// cp and mv read the source's ACL and put it on the copy, and failed for
// every non-admin before. Anything else is denied.
func (s *Server) unchangedACL(req *request, in backend.RawRequest, denied error) error {
	if !ownerOnlyACL(req.r.Header, in.Body) {
		return denied
	}
	cur := backend.RawRequest{Method: http.MethodGet, Bucket: in.Bucket, Key: in.Key, Query: in.Query, Header: http.Header{}}
	out, err := s.cfg.Forwarder.Forward(req.r.Context(), cur)
	if err != nil {
		return forwardErr(err)
	}
	var doc aclDoc
	if decodeXML(out.Body, &doc) != nil {
		return s3err.New("InternalError", "The object store answered ?acl with something other than its document; it was not passed on.")
	}
	if !grantsOwnerOnly(doc) {
		return denied
	}
	if v := out.Header.Get("X-Amz-Version-Id"); v != "" {
		req.w.Header().Set("x-amz-version-id", v)
	}
	req.w.WriteHeader(http.StatusOK)
	return nil
}

// ownerOnlyACL reports whether a PUT ?acl grants no more than the owner's
// access, which every object written through s3seal has: x-amz-acl private
// or bucket-owner-full-control without a body, or a document whose every
// grant goes to its owner.
func ownerOnlyACL(h http.Header, body []byte) bool {
	for name := range h {
		if strings.HasPrefix(strings.ToLower(name), "x-amz-grant-") {
			return false
		}
	}
	acl := strings.TrimSpace(h.Get("X-Amz-Acl"))
	if len(bytes.TrimSpace(body)) == 0 {
		return strings.EqualFold(acl, "private") || strings.EqualFold(acl, "bucket-owner-full-control")
	}
	var doc aclDoc
	return acl == "" && xml.Unmarshal(body, &doc) == nil && grantsOwnerOnly(doc)
}

// grantsOwnerOnly reports whether every grant of doc goes to its owner.
func grantsOwnerOnly(doc aclDoc) bool {
	if doc.Owner == nil || doc.Owner.ID == "" {
		return false
	}
	for _, g := range doc.Grants {
		if g.Grantee.Type != "CanonicalUser" || g.Grantee.ID != doc.Owner.ID {
			return false
		}
	}
	return true
}
