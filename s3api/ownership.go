package s3api

import (
	"encoding/xml"
	"net/http"
	"strings"

	"github.com/s3seal/s3seal/access"
	"github.com/s3seal/s3seal/s3api/s3err"
)

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
