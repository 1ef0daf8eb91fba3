package s3api

import (
	"net/http"
	"strings"

	"github.com/s3seal/s3seal/access"
	"github.com/s3seal/s3seal/s3api/s3err"
)

// The bucket's ACL (document docACL), served by s3seal: the store never
// sees it.

// getBucketACL answers GetBucketAcl from the kept ACL, else the default:
// the owner with FULL_CONTROL.
func (s *Server) getBucketACL(req *request) error {
	docs, err := s.store.BucketDocs(req.r.Context(), req.bucket)
	if err != nil {
		return bucketErr(err)
	}
	bo, err := s.bucketOwner(req)
	if err != nil {
		return err
	}
	a, ok := access.ACL{}, false
	if d, there := docs[docACL]; there {
		a, ok = access.DecodeACL(d)
	}
	if !ok {
		a = newACL(bo.ID, userGrant(bo.ID, "FULL_CONTROL"))
	}
	return writeACL(req, s.shownACL(a, bo))
}

// putBucketACL answers PutBucketAcl: one of x-amz-acl, x-amz-grant-* or
// a document (MissingSecurityHeader for none), not on a bucket whose
// ownership controls disable ACLs, nor public under BlockPublicAcls.
func (s *Server) putBucketACL(req *request) error {
	body, err := readXMLBody(req, maxXMLBody)
	if err != nil {
		return err
	}
	docs, err := s.store.BucketDocs(req.r.Context(), req.bucket)
	if err != nil {
		return bucketErr(err)
	}
	enforced := ownershipEnforcedIn(docs)
	if canned := strings.TrimSpace(req.r.Header.Get("X-Amz-Acl")); enforced && (hasGrantHeader(req.r.Header) ||
		canned != "" && canned != "private" && canned != "bucket-owner-full-control") {
		return s3err.New(s3err.AccessControlListNotSupported, "")
	}
	bo, err := s.bucketOwner(req)
	if err != nil {
		return err
	}
	a, set, err := s.aclOfRequest(req.r.Header, body, bo.ID, bo.ID, append(bucketCannedACLs, "bucket-owner-full-control"))
	if err != nil {
		return err
	}
	if !set {
		return s3err.New(s3err.MissingSecurityHeader, "")
	}
	if enforced && !ownerOnlyGrants(a) {
		return s3err.New(s3err.AccessControlListNotSupported, "")
	}
	if a.Public() && publicAccessBlockOf(docs).BlockPublicAcls {
		return refusedBy("the bucket's public access block blocks public ACLs")
	}
	if err := s.keepBucketACL(req, a); err != nil {
		return err
	}
	req.w.WriteHeader(http.StatusOK)
	return nil
}

// keepBucketACL keeps a as the bucket's ACL; the default one (the owner's
// FULL_CONTROL alone) is kept as no document.
func (s *Server) keepBucketACL(req *request, a access.ACL) error {
	if ownerOnlyGrants(a) {
		return s.store.DeleteBucketDoc(req.r.Context(), req.bucket, docACL)
	}
	b, err := encodeACL(a)
	if err != nil {
		return err
	}
	return s.store.PutBucketDoc(req.r.Context(), req.bucket, docACL, b)
}
