package s3api

import (
	"encoding/xml"
	"net/http"
	"strings"

	"github.com/gorilla/mux"

	"github.com/s3seal/s3seal/access"
	"github.com/s3seal/s3seal/s3api/s3err"
)

// The bucket's ACL (document docACL), its public access block (document
// docPublicAccessBlock), served by s3seal: the store never sees them.

// addACLRoutes registers GET and PUT ?acl (bucket or object), and on
// buckets ?publicAccessBlock and ?ownershipControls, before the router's
// catch-all.
func (s *Server) addACLRoutes(rt *mux.Router, object bool) {
	if object {
		rt.Methods(http.MethodGet).MatcherFunc(onlySub("acl", true)).HandlerFunc(s.serve("GetObjectAcl", accRead, s.getObjectACL))
		rt.Methods(http.MethodPut).MatcherFunc(onlySub("acl", true)).HandlerFunc(s.serve("PutObjectAcl", accWrite, s.putObjectACL))
		return
	}
	rt.Methods(http.MethodGet).MatcherFunc(onlySub("acl", false)).HandlerFunc(s.serve("GetBucketAcl", accRead, s.getBucketACL))
	rt.Methods(http.MethodPut).MatcherFunc(onlySub("acl", false)).HandlerFunc(s.serve("PutBucketAcl", accWrite, s.putBucketACL))
	pab := onlySub("publicAccessBlock", false)
	rt.Methods(http.MethodGet).MatcherFunc(pab).HandlerFunc(s.serve("GetPublicAccessBlock", accRead, s.getPublicAccessBlock))
	rt.Methods(http.MethodPut).MatcherFunc(pab).HandlerFunc(s.serve("PutPublicAccessBlock", accWrite, s.putPublicAccessBlock))
	rt.Methods(http.MethodDelete).MatcherFunc(pab).HandlerFunc(s.serve("DeletePublicAccessBlock", accWrite, s.deletePublicAccessBlock))
	oc := onlySub("ownershipControls", false)
	rt.Methods(http.MethodGet).MatcherFunc(oc).HandlerFunc(s.serve("GetBucketOwnershipControls", accRead, s.getOwnershipControls))
	rt.Methods(http.MethodPut).MatcherFunc(oc).HandlerFunc(s.serve("PutBucketOwnershipControls", accWrite, s.putOwnershipControls))
	rt.Methods(http.MethodDelete).MatcherFunc(oc).HandlerFunc(s.serve("DeleteBucketOwnershipControls", accWrite, s.deleteOwnershipControls))
}

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

// ownershipEnforcedIn reports whether the bucket's ownership controls
// (document docOwnership) are BucketOwnerEnforced.
func ownershipEnforcedIn(docs map[string][]byte) bool {
	return ownershipOf(docs) == "BucketOwnerEnforced"
}

// ownershipOf is the bucket's object ownership setting, "" without
// ownership controls; a document that does not parse (it was s3seal's
// own) is BucketOwnerEnforced, which grants least.
func ownershipOf(docs map[string][]byte) string {
	d, ok := docs[docOwnership]
	if !ok {
		return ""
	}
	var doc ownershipDoc
	if xml.Unmarshal(d, &doc) != nil || len(doc.Rules) == 0 {
		return "BucketOwnerEnforced"
	}
	return strings.TrimSpace(doc.Rules[0].ObjectOwnership)
}

// publicAccessBlockDoc is the document PutPublicAccessBlock takes.
type publicAccessBlockDoc struct {
	XMLName xml.Name `xml:"PublicAccessBlockConfiguration"`
	docNS
	access.PublicAccessBlock
}

func (s *Server) getPublicAccessBlock(req *request) error {
	docs, err := s.store.BucketDocs(req.r.Context(), req.bucket)
	if err != nil {
		return bucketErr(err)
	}
	if _, ok := docs[docPublicAccessBlock]; !ok {
		return s3err.New(s3err.NoSuchPublicAccessBlockConfiguration, "The public access block configuration was not found")
	}
	doc := publicAccessBlockDoc{PublicAccessBlock: publicAccessBlockOf(docs)}
	doc.setNS()
	b, err := xml.Marshal(doc)
	if err != nil {
		return err
	}
	req.w.Header().Set("Content-Type", "application/xml")
	req.w.WriteHeader(http.StatusOK)
	_, _ = req.w.Write(append([]byte(xml.Header), b...))
	return nil
}

func (s *Server) putPublicAccessBlock(req *request) error {
	body, err := readXMLBody(req, maxXMLBody)
	if err != nil {
		return err
	}
	var doc publicAccessBlockDoc
	if err := decodeXML(body, &doc); err != nil {
		return err
	}
	if _, err := s.store.BucketDocs(req.r.Context(), req.bucket); err != nil {
		return bucketErr(err)
	}
	b, err := xml.Marshal(publicAccessBlockDoc{PublicAccessBlock: doc.PublicAccessBlock})
	if err != nil {
		return err
	}
	if err := s.store.PutBucketDoc(req.r.Context(), req.bucket, docPublicAccessBlock, b); err != nil {
		return err
	}
	req.w.WriteHeader(http.StatusOK)
	return nil
}

func (s *Server) deletePublicAccessBlock(req *request) error {
	if _, err := s.store.BucketDocs(req.r.Context(), req.bucket); err != nil {
		return bucketErr(err)
	}
	if err := s.store.DeleteBucketDoc(req.r.Context(), req.bucket, docPublicAccessBlock); err != nil {
		return err
	}
	req.w.WriteHeader(http.StatusNoContent)
	return nil
}

// Ownership controls are s3seal's too (document docOwnership): with
// BucketOwnerEnforced, ACLs are disabled as in S3 (a PUT of an ACL other
// than the owner's alone is AccessControlListNotSupported). A bucket
// without the document takes ACLs.

// keepOwnership keeps the bucket's object ownership setting.
func (s *Server) keepOwnership(req *request, setting string) error {
	b := []byte(`<OwnershipControls xmlns="` + s3ns + `"><Rule><ObjectOwnership>` + setting + `</ObjectOwnership></Rule></OwnershipControls>`)
	return s.store.PutBucketDoc(req.r.Context(), req.bucket, docOwnership, b)
}

func (s *Server) getOwnershipControls(req *request) error {
	docs, err := s.store.BucketDocs(req.r.Context(), req.bucket)
	if err != nil {
		return bucketErr(err)
	}
	d, ok := docs[docOwnership]
	if !ok {
		return s3err.New(s3err.OwnershipControlsNotFoundError, "")
	}
	req.w.Header().Set("Content-Type", "application/xml")
	req.w.WriteHeader(http.StatusOK)
	_, _ = req.w.Write(append([]byte(xml.Header), d...))
	return nil
}

func (s *Server) putOwnershipControls(req *request) error {
	body, err := readXMLBody(req, maxXMLBody)
	if err != nil {
		return err
	}
	if _, err := checkOwnershipControls(body); err != nil {
		return err
	}
	var doc ownershipDoc
	_ = decodeXML(body, &doc)
	docs, err := s.store.BucketDocs(req.r.Context(), req.bucket)
	if err != nil {
		return bucketErr(err)
	}
	setting := strings.TrimSpace(doc.Rules[0].ObjectOwnership)
	if a, ok := access.DecodeACL(docs[docACL]); setting == "BucketOwnerEnforced" && ok && !ownerOnlyGrants(a) {
		return errACLWithEnforced()
	}
	if err := s.keepOwnership(req, setting); err != nil {
		return err
	}
	req.w.WriteHeader(http.StatusOK)
	return nil
}

func (s *Server) deleteOwnershipControls(req *request) error {
	if _, err := s.store.BucketDocs(req.r.Context(), req.bucket); err != nil {
		return bucketErr(err)
	}
	if err := s.store.DeleteBucketDoc(req.r.Context(), req.bucket, docOwnership); err != nil {
		return err
	}
	req.w.WriteHeader(http.StatusNoContent)
	return nil
}
