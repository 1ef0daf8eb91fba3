package s3api

import (
	"bytes"
	"encoding/xml"
	"net/http"
	"strings"

	"github.com/s3seal/s3seal/backend"
	"github.com/s3seal/s3seal/s3api/s3err"
)

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
