package s3api

import (
	"encoding/xml"

	"github.com/s3seal/s3seal/backend"
)

// Who may do what to a bucket is decided in two layers. The credential's
// read and write lists (access.go) are the ceiling the operator set: no
// document a client writes reaches past them. Within them, authorize
// decides as S3 does, by what s3seal keeps for the bucket
// (sealstore.BucketDocs): its owner, its bucket policy, its ACL grants and
// its public access block. The store's own policy and ACLs never decide
// for s3seal's clients: the store sees one account, s3seal's.
//
// The order is S3's: an explicit Deny in the bucket policy refuses; else
// an Allow in the policy, an ACL grant, or being the bucket's owner
// allows; else the request is refused. A bucket s3seal itself owns (the
// LFS API's) is its alone (serviceBucket). A bucket s3seal keeps no owner for
// (created before s3seal kept owners, or by another client of the store)
// is decided by the lists alone, as before.

// decision is what one source of rules says of a request.
type decision int

const (
	decideNone  decision = iota // the source says nothing of the request
	decideAllow                 // it allows the request
	decideDeny                  // it refuses it, whatever else allows it
)

// authorize decides req, which its credential's lists allow, by the
// bucket's documents. op is the operation's name as routes give it.
// A bucket that does not exist is left to the operation, which answers
// NoSuchBucket in its own words.
func (s *Server) authorize(req *request, op string) error {
	if req.bucket == "" || op == "CreateBucket" {
		return nil
	}
	if _, busy := s.creating.Load(req.bucket); busy {
		return refusedBy("the bucket is being created and has no owner yet")
	}
	if op == "GetObjectAttributes" {
		// S3 decides it as s3:GetObject (GetObjectVersion) and
		// s3:GetObjectAttributes both: what denies the object's reads
		// denies its attributes.
		if err := s.authorize(req, "GetObject"); err != nil {
			return err
		}
	}
	docs, err := s.store.BucketDocs(req.r.Context(), req.bucket)
	if backend.ErrorCode(err) == "NoSuchBucket" {
		if req.who.isAnonymous() {
			// The operation is not run: a store that says so here and
			// serves the bucket to the operation would let an anonymous
			// request, which no lists bound, past every document.
			return err
		}
		return nil
	}
	if err != nil {
		return err
	}
	if o, ok := bucketOwnerOf(docs); ok && o.Service != "" {
		return serviceBucket(req, op, o)
	}
	switch s.policyDecision(req, op, docs) {
	case decideDeny:
		return refusedBy("the bucket policy denies it")
	case decideAllow:
		return nil
	}
	// The owner first: an allow by an object's ACL binds the request to
	// the content its record was kept for (request.boundTo), which the
	// bucket's owner needs not.
	if s.ownerDecision(req, op, docs) == decideAllow {
		return nil
	}
	if s.aclDecision(req, op, docs) == decideAllow {
		return nil
	}
	return refusedBy("neither the bucket's owner, nor allowed by its policy or ACL")
}

// The names of the documents s3seal keeps per bucket (sealstore.BucketDocs).
const (
	docOwner             = "owner"               // who created the bucket (owner.go)
	docACL               = "acl"                 // the bucket's ACL (AccessControlPolicy XML)
	docPolicy            = "policy"              // the bucket policy (JSON, as the client sent it)
	docPublicAccessBlock = "public-access-block" // PublicAccessBlockConfiguration XML
	docOwnership         = "ownership-controls"  // OwnershipControls XML
	docEncryption        = "encryption"          // ServerSideEncryptionConfiguration XML
	docLogging           = "logging"             // BucketLoggingStatus XML
)

// publicAccessBlock is a bucket's public access block, all false when it
// has none.
type publicAccessBlock struct {
	BlockPublicAcls       bool `xml:"BlockPublicAcls"`
	IgnorePublicAcls      bool `xml:"IgnorePublicAcls"`
	BlockPublicPolicy     bool `xml:"BlockPublicPolicy"`
	RestrictPublicBuckets bool `xml:"RestrictPublicBuckets"`
}

// publicAccessBlockOf reads the bucket's public access block from its
// documents. A document that does not parse blocks everything: it was
// s3seal's own, checked when it was put.
func publicAccessBlockOf(docs map[string][]byte) publicAccessBlock {
	d, ok := docs[docPublicAccessBlock]
	if !ok {
		return publicAccessBlock{}
	}
	var pab publicAccessBlock
	if xml.Unmarshal(d, &pab) != nil {
		return publicAccessBlock{true, true, true, true}
	}
	return pab
}
