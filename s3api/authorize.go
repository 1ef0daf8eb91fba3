package s3api

import (
	"sync"

	"github.com/s3seal/s3seal/access"
	s3policy "github.com/s3seal/s3seal/access/policy"
	"github.com/s3seal/s3seal/sealstore"
)

// Who may do what to a bucket is decided in two layers. The credential's
// read and write lists (access.go) are the ceiling the operator set: no
// document a client writes reaches past them. Within them, package access
// decides as S3 does, by what s3seal keeps for the bucket
// (sealstore.BucketDocs): its owner, its bucket policy, its ACL grants and
// its public access block, and an object's record. authorize gathers
// those, parsed, and what the request asks (its principal, operation,
// bucket, key, version, condition values), and renders a refusal. The
// store's own policy and ACLs never decide for s3seal's clients: the
// store sees one account, s3seal's.

// authorize decides req, which its credential's lists allow, by the
// bucket's documents. op is the operation's name as routes give it.
// A bucket that does not exist is left to the operation, which answers
// NoSuchBucket in its own words. An allow that an object's record gave
// binds req to the content the record was kept for (request.boundTo).
func (s *Server) authorize(req *request, op string) error {
	if req.bucket == "" || op == "CreateBucket" {
		return s.audit(req.r, req.who, op, req.bucket, req.key, true, ruleCredential, "")
	}
	if _, busy := s.creating.Load(req.bucket); busy {
		return s.auditRefusal(req.r, req.who, op, req.bucket, req.key, ruleBeingCreated,
			refusedBy("the bucket is being created and has no owner yet"))
	}
	docs, err := s.store.BucketDocs(req.r.Context(), req.bucket)
	if sealstore.StoreCode(err) == "NoSuchBucket" {
		if req.who.Anonymous() {
			// The operation is not run: a store that says so here and
			// serves the bucket to the operation would let an anonymous
			// request, which no lists bound, past every document.
			return s.auditRefusal(req.r, req.who, op, req.bucket, req.key, ruleNoSuchBucket, err)
		}
		return s.audit(req.r, req.who, op, req.bucket, req.key, true, ruleNoSuchBucket, "")
	}
	if err != nil {
		return err
	}
	d := access.Decide(bucketState(docs), s.accessRequest(req, op))
	if err := s.audit(req.r, req.who, op, req.bucket, req.key, d.Effect == access.Allow, d.Rule, d.Reason); err != nil {
		return err
	}
	if d.Effect != access.Allow {
		return refusedBy(d.Reason)
	}
	if d.BoundTo != "" {
		req.boundTo = d.BoundTo
	}
	return nil
}

// bucketState is what the bucket's documents say, parsed.
func bucketState(docs map[string][]byte) access.Bucket {
	var b access.Bucket
	if o, ok := bucketOwnerOf(docs); ok {
		b.Owner = &o
	}
	if d, ok := docs[docACL]; ok {
		if a, ok := access.DecodeACL(d); ok {
			b.ACL = &a
		}
	}
	if d, ok := docs[docPolicy]; ok {
		p, err := s3policy.Cached(d)
		b.Policy, b.PolicyUnreadable = p, err != nil
	}
	b.Block = publicAccessBlockOf(docs)
	_, b.ObjectRecords = docs[sealstore.ObjectRecordsDoc]
	return b
}

// accessRequest is what req asks, as package access takes it: the object
// record is read only when an object's ACL decides, and once however
// often it does (GetObjectAttributes is decided as two actions), and the
// condition values only as the policy asks for them (policyValues).
func (s *Server) accessRequest(req *request, op string) access.Request {
	q := req.r.URL.Query()
	var (
		once sync.Once
		rec  access.Record
		kept bool
	)
	return access.Request{
		Who:     req.who,
		Lists:   req.cred.lists(req.bucket),
		Op:      op,
		Bucket:  req.bucket,
		Key:     req.key,
		Version: q.Has("versionId"),
		Values:  s.policyValues(req),
		Record: func() (access.Record, bool) {
			once.Do(func() {
				a, forContent, ok, err := s.objectACL(req, req.bucket, req.key, q.Get("versionId"))
				if err == nil && !ok && q.Get("versionId") != "" {
					// A write keeps its record under the key: it
					// decides a read by version id too, bound to the
					// content it was written for (the operations an
					// object's ACL allows all read that content only).
					a, forContent, ok, err = s.objectACL(req, req.bucket, req.key, "")
				}
				if err == nil && ok {
					rec, kept = access.Record{ACL: a, For: forContent}, true
				}
			})
			return rec, kept
		},
	}
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

// publicAccessBlockOf reads the bucket's public access block from its
// documents (access.DecodePublicAccessBlock), all false without one.
func publicAccessBlockOf(docs map[string][]byte) access.PublicAccessBlock {
	d, ok := docs[docPublicAccessBlock]
	if !ok {
		return access.PublicAccessBlock{}
	}
	return access.DecodePublicAccessBlock(d)
}
