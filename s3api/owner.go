package s3api

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/s3seal/s3seal/backend"
	"github.com/s3seal/s3seal/s3api/s3err"
	"github.com/s3seal/s3seal/sealstore"
)

// A bucket's owner is the principal that created it through s3seal, kept
// as the bucket document docOwner (ownerDoc, JSON). The owner may do
// anything to its bucket and everything in it that the credential's lists
// allow (ownerDecision), and is the owner ListObjects, the ACLs and
// CreateBucket's BucketAlreadyOwnedByYou name. A bucket without the
// document (created before s3seal kept owners, or by another client of
// the store) has no owner: every credential its lists allow may do
// anything to it, as before.

// ownerDoc is the owner document: the canonical id decides; the display
// name is what the credential had when it created the bucket, shown
// while no credential has the id any more.
type ownerDoc struct {
	ID          string `json:"id"`
	DisplayName string `json:"display_name,omitempty"`
	// Account is the owner's account: every credential of the account
	// acts as the owner (S3's IAM users of the owning account, whose own
	// permissions here are their lists).
	Account string `json:"account,omitempty"`
	// Service names the part of s3seal that owns the bucket ("lfs"):
	// the bucket is its alone (serviceBucket), whatever lists, policies
	// or ACLs say. Such an owner has no account.
	Service string `json:"service,omitempty"`
}

// ownedBy reports whether who acts as the owner o: the owner itself, or
// a credential of its account.
func ownedBy(o ownerDoc, who principal) bool {
	if who.isAnonymous() {
		return false
	}
	return o.ID == who.CanonicalID || o.Account != "" && o.Account == who.Account
}

// bucketOwnerOf reads the owner from a bucket's documents; ok is false
// when the bucket has none. A document that does not parse names nobody
// (it was s3seal's own, written by recordOwner).
func bucketOwnerOf(docs map[string][]byte) (o ownerDoc, ok bool) {
	d, ok := docs[docOwner]
	if !ok {
		return ownerDoc{}, false
	}
	if json.Unmarshal(d, &o) != nil || o.ID == "" {
		return ownerDoc{ID: "unreadable-owner-document"}, true
	}
	return o, true
}

// ownerDecision allows the bucket's owner, and a credential whose lists
// name the bucket itself (namesBucket); on a bucket s3seal keeps no owner
// for, every signed request its lists allowed.
func (s *Server) ownerDecision(req *request, op string, docs map[string][]byte) decision {
	o, ok := bucketOwnerOf(docs)
	switch {
	case !ok && !req.who.isAnonymous():
		return decideAllow
	case ok && ownedBy(o, req.who):
		return decideAllow
	case ok && req.cred.namesBucket(req.bucket, readOnlyOp(req, op)):
		return decideAllow
	}
	return decideNone
}

// namesBucket reports whether c's write list, or for a read its read
// list, names bucket itself rather than through "*": the operator granted
// c that bucket, whoever owns it, and c is let in as the owner's account
// would be (a restore credential reading the buckets a backup credential
// creates needs no ACL). A bucket reached only through "*" is decided by
// its owner, ACL and policy.
func (c Credential) namesBucket(bucket string, read bool) bool {
	return slices.Contains(c.Write, bucket) || read && slices.Contains(c.Read, bucket)
}

// readOnlyOp reports whether op on req only reads: its policy action is a
// Get or a List.
func readOnlyOp(req *request, op string) bool {
	action, _ := policyActionOf(req, op)
	return strings.HasPrefix(action, "s3:Get") || strings.HasPrefix(action, "s3:List")
}

// recordOwner keeps the caller as the owner of the bucket it created.
func (s *Server) recordOwner(req *request) error {
	b, err := json.Marshal(ownerDoc{ID: req.who.CanonicalID, DisplayName: req.who.DisplayName, Account: req.who.Account})
	if err != nil {
		return err
	}
	// Only a bucket without an owner gets one: another CreateBucket that
	// found the bucket missing too (a store that answers a re-create with
	// 200, as AWS in us-east-1) made it first.
	return s.store.CreateBucketDoc(req.r.Context(), req.bucket, docOwner, b)
}

// errOwnBucket is existingBucket's answer to the owner re-creating its
// bucket with the default ACL: createBucket answers it as AWS does in the
// region (200 in us-east-1, else BucketAlreadyOwnedByYou).
var errOwnBucket = errors.New("the caller owns the bucket")

// existingBucket answers a CreateBucket of a bucket that exists and has
// an owner document: errOwnBucket to its owner asking for the
// default ACL, BucketAlreadyExists to anyone else (and to an owner asking
// for another ACL, which S3 would not apply). nil when the bucket is not
// there or has no owner (the store answers, as before).
//
// existed reports a bucket that is there without an owner: the store
// answers its CreateBucket as before, and it gets no owner (a store that
// answers 200 to a re-create must not let any credential claim a bucket
// others use).
func (s *Server) existingBucket(req *request, plain bool) (existed bool, err error) {
	// A HeadBucket first: the bucket is new in most CreateBuckets, and a
	// listing of a bucket that is not there is a failure to the metrics
	// (retry.refusalOutcome), where HeadBucket's 404 is an answer.
	err = s.store.Backend().HeadBucket(req.r.Context(), req.bucket)
	docs := map[string][]byte(nil)
	if err == nil {
		docs, err = s.store.BucketDocs(req.r.Context(), req.bucket)
	}
	switch {
	case backend.ErrorCode(err) == "NoSuchBucket" || backend.IsNotFound(err):
		return false, nil
	case backend.ErrorCode(err) == "AccessDenied" || backend.ErrorCode(err) == "Forbidden":
		return false, s3err.New("BucketAlreadyExists", "")
	case err != nil:
		return false, err
	}
	o, ok := bucketOwnerOf(docs)
	if !ok {
		return true, nil
	}
	if _, acl := docs[docACL]; plain && !acl && ownedBy(o, req.who) {
		return true, errOwnBucket
	}
	return true, s3err.New("BucketAlreadyExists", "")
}

// ownerOf is the owner as answers show it: the display name of the
// credential with the id now, else the one kept.
func (s *Server) ownerOf(o ownerDoc) owner {
	if p, ok := s.principalByID(o.ID); ok {
		return owner{ID: p.CanonicalID, DisplayName: p.DisplayName}
	}
	return owner{ID: o.ID, DisplayName: o.DisplayName}
}

// principalByID is the credential whose canonical id is id.
func (s *Server) principalByID(id string) (principal, bool) {
	for _, c := range s.cfg.Credentials {
		if p := c.principal(); p.CanonicalID == id {
			return p, true
		}
	}
	return principal{}, false
}

// principalByEmail is the credential whose e-mail address is addr (case
// does not matter, as in S3).
func (s *Server) principalByEmail(addr string) (principal, bool) {
	for _, c := range s.cfg.Credentials {
		if p := c.principal(); p.Email != "" && strings.EqualFold(p.Email, addr) {
			return p, true
		}
	}
	return principal{}, false
}

// bucketOwner is the owner of req's bucket as answers show it: the kept
// owner, else (no owner document) the caller, as s3seal showed every
// bucket's owner before it kept owners.
func (s *Server) bucketOwner(req *request) (owner, error) {
	docs, err := s.store.BucketDocs(req.r.Context(), req.bucket)
	if err != nil {
		return owner{}, bucketErr(err)
	}
	if o, ok := bucketOwnerOf(docs); ok {
		return s.ownerOf(o), nil
	}
	return owner{ID: req.who.CanonicalID, DisplayName: req.who.DisplayName}, nil
}

// objectOwners gives the owner a listing shows for each key of req's
// bucket: the bucket's owner, or the owner kept in an object's record
// (read only in a bucket where some object has one).
func (s *Server) objectOwners(req *request) func(key string) owner {
	bo, err := s.bucketOwner(req)
	if err != nil {
		bo = owner{ID: req.who.CanonicalID, DisplayName: req.who.DisplayName}
	}
	docs, err := s.store.BucketDocs(req.r.Context(), req.bucket)
	if _, flagged := docs[docObjectACLs]; err != nil || !flagged {
		return func(string) owner { return bo }
	}
	return func(key string) owner {
		// Shown, not decided by: a listing reads no object's envelope,
		// so the record is not checked against the content listed.
		a, _, kept, err := s.objectACL(req, req.bucket, key, "")
		if err != nil || !kept {
			return bo
		}
		return s.ownerOf(ownerDoc{ID: a.Owner.ID})
	}
}

// ownsListed reports whether ListBuckets shows bucket to req's caller:
// S3 lists the buckets the caller's account owns; a bucket without an owner
// document is listed to every credential whose lists reach it, as before.
func (s *Server) ownsListed(req *request, bucket string) bool {
	docs, err := s.store.BucketDocs(req.r.Context(), bucket)
	if err != nil {
		return true // listed as before; any request to it is decided then
	}
	o, ok := bucketOwnerOf(docs)
	return !ok || ownedBy(o, req.who)
}

// A service bucket belongs to a part of s3seal itself (the LFS API's
// blobs), not to any account: its owner document names the service and
// the one credential the service signs with (ClaimServiceBucket). Through
// the S3 API it is reached by that credential, and by a credential whose
// lists name the bucket itself (never through "*"): the operator's
// deliberate grant, for a retention job or a backup of the blobs, which
// may act on objects and list them but change nothing of the bucket's
// own. Each within its lists. Every other request is refused before any
// policy or ACL is looked at, and none ever decides there: no account,
// admin or anonymous caller can read, change, delete or block it (a
// policy refusing the service's credential cannot be put, and would
// decide nothing). CreateBucket of its name answers BucketAlreadyExists
// and ListBuckets shows it to no one else.

// serviceBucketOps are the operations on a service bucket itself that a
// credential naming it may do besides those on its objects: listings.
var serviceBucketOps = map[string]bool{"ListObjects": true, "ListObjectsV2": true, "ListObjectVersions": true,
	"ListMultipartUploads": true, "HeadBucket": true, "DeleteObjects": true, "GetBucketLocation": true}

// serviceBucket decides op on a service bucket, whose owner is o.
func serviceBucket(req *request, op string, o ownerDoc) error {
	switch {
	case !req.who.isAnonymous() && o.ID == req.who.CanonicalID:
		return nil
	case !req.who.isAnonymous() && req.cred.namesBucket(req.bucket, readOnlyOp(req, op)) && (req.key != "" || serviceBucketOps[op]):
		return nil
	}
	return refusedBy("the bucket is s3seal's own (" + o.Service + "); only s3seal, and credentials whose lists name it, reach it")
}

// ClaimServiceBucket makes bucket the service's: it creates the bucket on
// the store when missing and gives it an owner document naming service
// and cred, the credential the service signs with. A bucket the service
// already owns is left as it is; one without an owner (made by an older
// s3seal, which gave the service's bucket none) is claimed; one another
// owner holds, an account that created it through the S3 API, is an
// error naming it: the service never takes an account's bucket.
func ClaimServiceBucket(ctx context.Context, store *sealstore.Store, bucket, service string, cred Credential) error {
	p := cred.principal()
	want := ownerDoc{ID: p.CanonicalID, DisplayName: p.DisplayName, Service: service}
	if err := store.Backend().CreateBucket(ctx, bucket); err != nil {
		switch backend.ErrorCode(err) {
		case "BucketAlreadyOwnedByYou", "BucketAlreadyExists":
		default:
			return err
		}
	}
	doc, err := json.Marshal(want)
	if err != nil {
		return err
	}
	for range 2 {
		docs, err := store.BucketDocs(ctx, bucket)
		if err != nil {
			return err
		}
		if o, ok := bucketOwnerOf(docs); ok {
			if o == want {
				return nil
			}
			if o.Service != "" {
				return fmt.Errorf("bucket %s belongs to s3seal's %s, with another credential", bucket, o.Service)
			}
			return fmt.Errorf("bucket %s belongs to %s (canonical id %s, account %s), who created it through the S3 API; give the %s its own bucket",
				bucket, o.DisplayName, o.ID, o.Account, service)
		}
		// Conditional: a replica claiming it at the same moment wrote the
		// same document, which the second pass finds.
		err = store.CreateBucketDoc(ctx, bucket, docOwner, doc)
		if code := toAPIError(err).Code; err == nil || code != "PreconditionFailed" && code != "ConditionalRequestConflict" {
			return err
		}
	}
	return fmt.Errorf("bucket %s: its owner document changed while s3seal claimed it for the %s", bucket, service)
}
