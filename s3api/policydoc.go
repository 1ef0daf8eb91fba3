package s3api

import (
	"encoding/xml"
	"net/http"

	s3policy "github.com/s3seal/s3seal/access/policy"
	"github.com/s3seal/s3seal/s3api/s3err"
)

// A bucket policy is s3seal's, not the store's: PUT ?policy keeps the
// document, once judged (bucketpolicy.go), as the bucket's document
// "policy" (sealstore.BucketDocs), GET ?policy gives it back as it was
// put, DELETE ?policy removes it, and GET ?policyStatus says whether it
// is public. authorize has package access evaluate it. Changing it is for
// credentials marked admin, as before: the operator's ceiling.

func (s *Server) getBucketPolicy(req *request) error {
	doc, ok, err := s.store.BucketDoc(req.r.Context(), req.bucket, docPolicy)
	if err != nil {
		return bucketErr(err)
	}
	if !ok {
		return s3err.New(s3err.NoSuchBucketPolicy, "")
	}
	req.w.Header().Set("Content-Type", "application/json")
	req.w.WriteHeader(http.StatusOK)
	_, _ = req.w.Write(doc)
	return nil
}

func (s *Server) putBucketPolicy(req *request) error {
	if !req.cred.Admin {
		return s3err.New(s3err.AccessDenied, "Only credentials marked \"admin\": true may change ?policy.")
	}
	body, err := readXMLBody(req, maxPolicyBody)
	if err != nil && toAPIError(err).Code == s3err.MaxMessageLengthExceeded {
		return malformedPolicy("Policy exceeds the maximum allowed document size.")
	}
	if err != nil {
		return err
	}
	p, err := s.judgePolicy(req, body)
	if err != nil {
		return err
	}
	docs, err := s.store.BucketDocs(req.r.Context(), req.bucket)
	if err != nil {
		return bucketErr(err)
	}
	if publicAccessBlockOf(docs).BlockPublicPolicy && p.IsPublic() {
		// S3's words when BlockPublicPolicy refuses a policy.
		return s3err.New(s3err.AccessDenied, "User is not authorized to perform: s3:PutBucketPolicy on resource: \"arn:aws:s3:::"+
			req.bucket+"\" because public policies are blocked by the BlockPublicPolicy block public access setting.")
	}
	if err := s.store.PutBucketDoc(req.r.Context(), req.bucket, docPolicy, body); err != nil {
		return bucketErr(err)
	}
	req.w.WriteHeader(http.StatusNoContent)
	return nil
}

func (s *Server) deleteBucketPolicy(req *request) error {
	if !req.cred.Admin {
		return s3err.New(s3err.AccessDenied, "Only credentials marked \"admin\": true may change ?policy.")
	}
	if err := s.store.HeadBucket(req.r.Context(), req.bucket); err != nil {
		return bucketErr(err)
	}
	if err := s.store.DeleteBucketDoc(req.r.Context(), req.bucket, docPolicy); err != nil {
		return bucketErr(err)
	}
	req.w.WriteHeader(http.StatusNoContent)
	return nil
}

// policyStatusDoc is GetBucketPolicyStatus's answer.
type policyStatusDoc struct {
	XMLName  xml.Name `xml:"http://s3.amazonaws.com/doc/2006-03-01/ PolicyStatus"`
	IsPublic bool     `xml:"IsPublic"`
}

// getBucketPolicyStatus says whether the bucket's policy is public (as
// package policy judges it); a bucket without a policy has no status, as
// on S3.
func (s *Server) getBucketPolicyStatus(req *request) error {
	doc, ok, err := s.store.BucketDoc(req.r.Context(), req.bucket, docPolicy)
	if err != nil {
		return bucketErr(err)
	}
	if !ok {
		return s3err.New(s3err.NoSuchBucketPolicy, "")
	}
	// A document that no longer parses is reported public: s3seal
	// cannot tell that it is not.
	p, err := s3policy.Cached(doc)
	writeXML(req.w, http.StatusOK, policyStatusDoc{IsPublic: err != nil || p.IsPublic()})
	return nil
}
