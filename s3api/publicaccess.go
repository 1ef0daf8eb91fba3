package s3api

import (
	"encoding/xml"
	"net/http"

	"github.com/s3seal/s3seal/access"
	"github.com/s3seal/s3seal/s3api/s3err"
)

// The bucket's public access block (document docPublicAccessBlock),
// served by s3seal: the store never sees it.

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
