package s3api

import (
	"encoding/xml"
	"net/http"
	"strings"

	"github.com/s3seal/s3seal/s3api/s3err"
)

// Request payment (?requestPayment): every s3seal bucket is paid by its
// owner, and s3seal bills no requester. GetBucketRequestPayment answers
// BucketOwner (s3cmd info and SDK tools ask); PutBucketRequestPayment
// takes BucketOwner, which changes nothing, and answers Requester with
// 501 NotImplemented rather than keep a setting whose meaning (requests
// without x-amz-request-payer refused, the requester billed) s3seal does
// not carry out (docs/DESIGN.md, "Request payment").

type requestPaymentDoc struct {
	XMLName xml.Name `xml:"RequestPaymentConfiguration"`
	docNS
	Payer *string `xml:"Payer"`
}

func (s *Server) getBucketRequestPayment(req *request) error {
	if _, err := s.store.BucketDocs(req.r.Context(), req.bucket); err != nil {
		return err // NoSuchBucket
	}
	owner := "BucketOwner"
	out, err := encodeDoc(&requestPaymentDoc{Payer: &owner})
	if err != nil {
		return err
	}
	req.w.Header().Set("Content-Type", "application/xml")
	req.w.WriteHeader(http.StatusOK)
	_, _ = req.w.Write(out)
	return nil
}

func (s *Server) putBucketRequestPayment(req *request) error {
	body, err := readXMLBody(req, maxXMLBody)
	if err != nil {
		return err
	}
	doc := &requestPaymentDoc{}
	if err := decodeXML(body, doc); err != nil {
		return err
	}
	if doc.Payer == nil {
		return s3err.New(s3err.MalformedXML, "")
	}
	switch strings.TrimSpace(*doc.Payer) {
	case "BucketOwner":
	case "Requester":
		return s3err.New(s3err.NotImplemented, "s3seal does not bill requesters: every bucket is paid by its owner (Payer BucketOwner).")
	default:
		return s3err.New(s3err.MalformedXML, "")
	}
	if _, err := s.store.BucketDocs(req.r.Context(), req.bucket); err != nil {
		return err
	}
	req.w.WriteHeader(http.StatusOK)
	return nil
}
